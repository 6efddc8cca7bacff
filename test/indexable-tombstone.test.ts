// A deleted comment (a tombstone, kept while it has visible replies) names no author anywhere public:
// not in the fragment's HTML, its island (the element's first page) or its JSON-LD, nor in the
// reader-facing API (GraphQL and REST for a caller that cannot moderate); moderators still see who
// wrote it. Its replies keep their own authors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith } from "./support/fixtures.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const SECRET_NAME = "Zebedee Quillfeather";
const AVATAR = "https://avatars.example/zebedee.png";
const BADGE = "Quillbadge";

describe("a tombstone's author", () => {
  it("is in no public shape: fragment HTML, island, JSON-LD, GraphQL and REST without moderate_content", async () => {
    const t = await createTestTenant(server);
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    expect((await t.api.put("/api/v1/discussions/tomb", { title: "Tomb", url: "https://blog.example/tomb" })).status).toBe(201);
    const zed = await t.reader("zed", { name: SECRET_NAME, avatarUrl: AVATAR, badge: BADGE });
    const amy = await t.reader("amy", { name: "Amy Reply" });
    const parent = await zed.post("/api/v1/discussions/tomb/comments", { body: "soon gone" });
    expect(parent.status).toBe(201);
    const reply = await amy.post("/api/v1/discussions/tomb/comments", { body: "a reply that stays", parentId: parent.body.id });
    expect(reply.status).toBe(201);
    expect((await zed.del(`/api/v1/comments/${parent.body.id}`)).status).toBeLessThan(300);

    const res = await fetch(`${server.url}/embed/v1/discussions/tomb.html?key=${pk}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("This comment was deleted.");
    expect(html).toContain("Amy Reply");
    for (const leak of [SECRET_NAME, AVATAR, BADGE, '"zed"']) expect([leak, html.includes(leak)]).toEqual([leak, false]);
    const island = JSON.parse(/<script type="application\/json" data-engagement-thread>(.*?)<\/script>/s.exec(html)![1]!);
    const tomb = island.thread.comments.edges[0].node;
    expect(tomb.status).toBe("deleted");
    expect(tomb.author).toEqual({ id: "", name: "", avatarUrl: null, badge: null });
    expect(tomb.replies.edges[0].node.author).toMatchObject({ id: "amy", name: "Amy Reply" });

    // the reader-facing API, as the element reads it (a publishable key) and as a publisher's key does
    const query = `query { comments(discussionId: "tomb", topLevel: true) { items { id status authorName author { id name avatarUrl badge } } } }`;
    const viaPk = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": pk },
      body: JSON.stringify({ query }),
    });
    const gql = (await viaPk.json()) as any;
    expect(gql.errors, JSON.stringify(gql.errors)).toBeUndefined();
    expect(gql.data.comments.items[0]).toEqual({
      id: parent.body.id,
      status: "deleted",
      authorName: "",
      author: { id: "", name: "", avatarUrl: null, badge: null },
    });
    const publisher = t.as({ key: (await keyWith(t, [])).key });
    const one = await publisher.get(`/api/v1/comments/${parent.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.author).toEqual({ id: "", name: "", avatarUrl: null, badge: null });
    const list = await publisher.get("/api/v1/discussions/tomb/comments");
    expect(list.body.items.find((c: any) => c.id === parent.body.id).author.name).toBe("");
    expect(list.body.items.find((c: any) => c.id === reply.body.id).author.name).toBe("Amy Reply");

    // moderators (a key with moderate_content) still see who wrote it
    const moderator = await t.api.get(`/api/v1/comments/${parent.body.id}`);
    expect(moderator.body.author).toMatchObject({ id: "zed", name: SECRET_NAME });
  });
});
