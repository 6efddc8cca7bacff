// GET /api/v1/comments/recent and GraphQL recentComments (contract section 19): the tenant's latest
// visible comments, newest published first, with their discussion's title and url; any key; a filter
// by discussions; keyset pages whose cursors belong to their filter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";

const ORIGIN = "https://news.example";
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("recent comments", () => {
  it("lists the visible comments across discussions, newest published first, page by page and by discussion", async () => {
    const t = await createTestTenant(server);
    const other = await createTestTenant(server);
    expect((await t.api.put("/api/v1/discussions/rc-1", { title: "Rivers", url: "https://news.example/rivers" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    const post = async (d: string, body: string) => {
      const r = await ann.post(`/api/v1/discussions/${d}/comments`, { body });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const a = await post("rc-1", "first");
    const b = await post("rc-2", "second **bold**");
    const gone = await post("rc-1", "deleted later");
    expect((await ann.del(`/api/v1/comments/${gone}`)).status).toBeLessThan(300);
    // held, then approved after the others: listed by when it became visible
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    const held = await post("rc-2", "held");
    const pending = await post("rc-1", "still pending");
    expect((await t.api.patch("/api/v1/settings", { moderation: "post" })).status).toBe(200);
    const c = await post("rc-1", "third");
    expect((await t.api.post(`/api/v1/comments/${held}/approve`)).status).toBe(200);
    await (await other.reader("zed")).post("/api/v1/discussions/rc-1/comments", { body: "another tenant's" });

    const all = await t.api.get("/api/v1/comments/recent");
    expect(all.status).toBe(200);
    expect(all.body.items.map((i: any) => i.id)).toEqual([held, c, b, a]);
    expect(all.body.items.map((i: any) => i.id)).not.toContain(pending);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items[1]).toMatchObject({
      body: "third",
      discussionId: "rc-1",
      discussionTitle: "Rivers",
      discussionUrl: "https://news.example/rivers",
    });
    expect(all.body.items[2]).toMatchObject({
      bodyHtml: "<p>second <strong>bold</strong></p>",
      discussionTitle: null,
      discussionUrl: null,
    });
    // the comment is the REST comment, as GET /comments/{id} answers it, with the discussion beside it
    const { discussionTitle: _t, discussionUrl: _u, ...comment } = all.body.items[1];
    expect(comment).toEqual((await t.api.get(`/api/v1/comments/${c}`)).body);

    // pages
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.api.get(`/api/v1/comments/recent?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((i: any) => i.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([held, c, b, a]);

    // by discussion; a cursor stays with its filter
    const one = await t.api.get("/api/v1/comments/recent?discussionIds=rc-1&limit=1");
    expect(one.body.items.map((i: any) => i.id)).toEqual([c]);
    const next = await t.api.get(`/api/v1/comments/recent?discussionIds=rc-1&limit=1&cursor=${encodeURIComponent(one.body.nextCursor)}`);
    expect(next.body.items.map((i: any) => i.id)).toEqual([a]);
    expect((await t.api.get(`/api/v1/comments/recent?cursor=${encodeURIComponent(one.body.nextCursor)}`)).status).toBe(400);
    expect((await t.api.get("/api/v1/comments/recent?discussionIds=rc-2,rc-1")).body.items.map((i: any) => i.id)).toEqual([held, c, b, a]);
  });

  it("answers any key, a publishable one from an allowed origin included, and GraphQL the same", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN] })).status).toBe(200);
    const pk = await t.admin.post("/api/v1/publishable-keys", { label: "site" });
    const browser = client(server.url, { key: pk.body.key, headers: { origin: ORIGIN } });
    const id = (await (await t.reader("bo")).post("/api/v1/discussions/rc-3/comments", { body: "hi" })).body.id;
    const r = await browser.get("/api/v1/comments/recent?limit=5");
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => i.id)).toEqual([id]);
    const gql = await browser.raw("POST", "/graphql", {
      query: `{ recentComments(first: 5) { edges { node { comment { id bodyHtml } discussionTitle } } pageInfo { hasNextPage } } }`,
    });
    expect(gql.body).toEqual({
      data: {
        recentComments: {
          edges: [{ node: { comment: { id, bodyHtml: "<p>hi</p>" }, discussionTitle: null } }],
          pageInfo: { hasNextPage: false },
        },
      },
    });
    expect((await client(server.url).get("/api/v1/comments/recent")).status).toBe(401);
  });

  it("refuses a bad limit, a bad discussion id and too many discussions with a problem", async () => {
    const t = await createTestTenant(server);
    for (const q of [
      "limit=0",
      "limit=101",
      "limit=x",
      "discussionIds=a%20b",
      `discussionIds=${Array.from({ length: 51 }, (_, i) => `d${i}`).join(",")}`,
      "cursor=nope",
    ]) {
      const r = await t.api.get(`/api/v1/comments/recent?${q}`);
      expect([q, r.status]).toEqual([q, 400]);
      expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
    }
  });
});
