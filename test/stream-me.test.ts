// The reader's own stream (contract section 19, src/stream-engine/reader-stream.ts): GET
// /api/v1/stream/me with a key + identity or a ticket of scope me; `connected`, `inbox_item` (id: the
// reader's inbox seq, data: the item as GET /api/v1/me/inbox lists it), `inbox_read`; Last-Event-ID
// replays exactly the kept items after it; the myInbox subscription over graphql-sse.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "graphql-sse";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse, rawSse, type SseClient } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
let n = 0;
const open: SseClient[] = [];

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
});

const meUrl = (query = "") => `${server.url}/api/v1/stream/me${query}`;

async function thread() {
  const d = `me-${++n}`;
  const ann = `ann-${n}`;
  expect((await t.api.put(`/api/v1/discussions/${d}`, { title: `T${n}`, url: `https://news.example/${d}` })).status).toBe(201);
  const annApi = await t.reader(ann);
  const bob = await t.reader(`bob-${n}`);
  const top = (await annApi.post(`/api/v1/discussions/${d}/comments`, { body: "top" })).body;
  const reply = async (body: string) => {
    const r = await bob.post(`/api/v1/discussions/${d}/comments`, { body, parentId: top.id });
    expect(r.status).toBe(201);
    return r.body;
  };
  const headers = { "x-api-key": t.apiKey, "x-service-identity": await t.identity(ann) };
  const sse = (query = "", h: Record<string, string> = headers) => {
    const c = openSse(meUrl(query), h);
    open.push(c);
    return c;
  };
  return { d, ann, annApi, bob, top, reply, headers, sse };
}

const items = (c: SseClient) => c.frames.filter((f) => f.event === "inbox_item");

describe("GET /api/v1/stream/me", () => {
  it("sends connected, then a reply as inbox_item with id = its inbox seq and the item exactly as the inbox lists it", async () => {
    const { annApi, reply, sse } = await thread();
    await reply("before"); // seq 1: before the stream, not replayed without Last-Event-ID
    const c = sse();
    await c.waitFor((f) => f.some((x) => x.event === "connected"));
    expect(c.frames[0]).toMatchObject({
      event: "connected",
      id: "1",
      data: { scope: "me", replayed: 0, unreadCount: 1, heartbeatSeconds: 15 },
    });
    const r = await reply("live");
    await c.waitFor(() => items(c).length === 1);
    const listed = (await annApi.get("/api/v1/me/inbox")).body.items[0];
    expect(listed.comment.id).toBe(r.id);
    expect(items(c)[0]).toEqual({ event: "inbox_item", id: "2", data: listed });
    expect(JSON.stringify(items(c)[0]!.data)).toBe(JSON.stringify(listed)); // member order too
  });

  it("sends a followed discussion's new comment as a new_comment inbox_item once the follow worker has fanned it out", async () => {
    const { d, annApi, sse } = await thread();
    expect((await annApi.put(`/api/v1/discussions/${d}/subscription`, { mode: "all" })).body).toEqual({ mode: "all" });
    const c = sse();
    await c.waitFor((f) => f.some((x) => x.event === "connected"));
    const carl = await t.reader(`carl-${n}`);
    const posted = (await carl.post(`/api/v1/discussions/${d}/comments`, { body: "news for followers" })).body;
    await server.app.follow.runOnce();
    await c.waitFor(() => items(c).length === 1);
    expect(items(c)[0]!.data).toMatchObject({ type: "new_comment", discussionId: d, comment: { id: posted.id } });
    expect((await annApi.get("/api/v1/me/inbox")).body.items[0]).toEqual(items(c)[0]!.data);
  });

  it("replays exactly the missed items after Last-Event-ID, leaving out a rejected or deleted comment's item", async () => {
    const { reply, sse, headers, bob } = await thread();
    const a = await reply("one"); // 1
    const b = await reply("two"); // 2
    const c3 = await reply("three"); // 3
    const d4 = await reply("four"); // 4
    const e5 = await reply("five"); // 5
    expect((await t.api.post(`/api/v1/comments/${c3.id}/reject`)).status).toBe(200);
    expect((await bob.del(`/api/v1/comments/${d4.id}`)).status).toBe(204);
    const c = sse("", { ...headers, "last-event-id": "1" });
    await c.waitFor(() => items(c).length >= 2);
    expect(c.frames[0]).toMatchObject({ event: "connected", id: "1", data: { replayed: 2 } });
    expect(items(c).map((f) => [f.id, f.data.comment.id])).toEqual([
      ["2", b.id],
      ["5", e5.id],
    ]);
    expect(a.id).toBeDefined();
    // the query parameter the discussion streams accept does the same
    const q = sse("?lastEventId=4");
    await q.waitFor(() => items(q).length >= 1);
    expect(items(q).map((f) => f.id)).toEqual(["5"]);
  });

  it("resumes with the EventSource's own Last-Event-ID after a drop: the items committed meanwhile, once each", async () => {
    const { reply, sse } = await thread();
    const c = sse();
    await c.waitFor((f) => f.some((x) => x.event === "connected"));
    await reply("a");
    await c.waitFor(() => items(c).length === 1);
    // the server ends every stream (as a restart would); the client reconnects with Last-Event-ID 1
    const stop = server.app.runtime.services.streams;
    for (const s of [...(stop as unknown as { readerSessions: Set<{ end(r: string): void }> }).readerSessions]) s.end("shutdown");
    await reply("b");
    await reply("c");
    await c.waitFor(() => items(c).length === 3, 15_000);
    expect(items(c).map((f) => f.id)).toEqual(["1", "2", "3"]);
    expect(c.opens).toBe(2);
  });

  it("two tabs: a mark-read in one (REST or GraphQL) reaches both as inbox_read with the unread count", async () => {
    const { reply, sse, annApi } = await thread();
    const tab1 = sse();
    const tab2 = sse();
    await tab1.waitFor((f) => f.some((x) => x.event === "connected"));
    await tab2.waitFor((f) => f.some((x) => x.event === "connected"));
    await reply("x");
    await reply("y");
    await tab2.waitFor(() => items(tab2).length === 2);
    const first = items(tab2)[0]!.data.id as string;
    expect((await annApi.post("/api/v1/me/inbox/read", { ids: [first] })).body).toEqual({ unreadCount: 1 });
    for (const tab of [tab1, tab2]) await tab.waitFor((f) => f.some((x) => x.event === "inbox_read"));
    for (const tab of [tab1, tab2])
      expect(tab.frames.filter((f) => f.event === "inbox_read").map((f) => f.data)).toEqual([{ unreadCount: 1 }]);
    const g = await annApi.post("/graphql", { query: "mutation { markInboxRead(input: {all: true}) { unreadCount } }" });
    expect(g.body.data.markInboxRead).toEqual({ unreadCount: 0 });
    for (const tab of [tab1, tab2]) await tab.waitFor((f) => f.filter((x) => x.event === "inbox_read").length === 2);
    expect(tab1.frames.filter((f) => f.event === "inbox_read").at(-1)!.data).toEqual({ unreadCount: 0 });
  });

  it("works with a ticket of scope me; refuses one without an identity, scope with discussionId, and a discussion's ticket", async () => {
    const { reply, headers, d } = await thread();
    const noIdentity = await t.api.post("/api/v1/stream/ticket", { scope: "me" });
    expect(noIdentity.status).toBe(401);
    expect(noIdentity.body.code).toBe("invalid_identity");
    const inbox = await t.api.get("/api/v1/me/inbox");
    expect(noIdentity.body).toMatchObject({ status: inbox.status, code: inbox.body.code });
    const both = await t
      .as({ key: t.apiKey, identity: headers["x-service-identity"] })
      .post("/api/v1/stream/ticket", { scope: "me", discussionId: d });
    expect(both.status).toBe(422);
    expect(both.body.code).toBe("validation_failed");
    // a stream without an identity: the same problem
    const bare = await rawSse(meUrl(), { "x-api-key": t.apiKey });
    expect(bare.status).toBe(401);
    // a discussion's ticket does not open the reader's stream
    const dTicket = (
      await t.as({ key: t.apiKey, identity: headers["x-service-identity"] }).post("/api/v1/stream/ticket", { discussionId: d })
    ).body.ticket;
    expect((await rawSse(meUrl(`?ticket=${dTicket}`))).status).toBe(401);

    const minted = await t.as({ key: t.apiKey, identity: headers["x-service-identity"] }).post("/api/v1/stream/ticket", { scope: "me" });
    expect(minted.status).toBe(201);
    const c = openSse(meUrl(`?ticket=${minted.body.ticket}`));
    open.push(c);
    await c.waitFor((f) => f.some((x) => x.event === "connected"));
    await reply("by ticket");
    await c.waitFor(() => items(c).length === 1);
    expect(items(c)[0]!.id).toBe("1");
    // a me-ticket does not open a discussion's stream
    const other = (await t.as({ key: t.apiKey, identity: headers["x-service-identity"] }).post("/api/v1/stream/ticket", { scope: "me" }))
      .body.ticket;
    expect((await rawSse(`${server.url}/api/v1/stream/${d}?ticket=${other}`)).status).toBe(401);
  });

  it("serves the myInbox subscription over graphql-sse: connected, items with their seq, read updates", async () => {
    const { reply, headers, annApi } = await thread();
    await reply("old"); // 1
    const client = createClient({ url: `${server.url}/graphql`, headers, retryAttempts: 0 });
    const results: any[] = [];
    const it = client.iterate({
      query: `subscription ($after: Int) { myInbox(after: $after) {
        __typename
        ... on InboxStreamConnected { position replayed unreadCount }
        ... on InboxItemAdded { seq item { id type comment { body myVote } parent { body } } }
        ... on InboxReadUpdate { unreadCount }
      } }`,
      variables: { after: 0 },
    });
    const loop = (async () => {
      for await (const r of it) results.push(r.data?.myInbox ?? r);
    })();
    const until = async (k: number) => {
      const end = Date.now() + 10_000;
      while (results.length < k) {
        if (Date.now() > end) throw new Error(JSON.stringify(results));
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await until(2);
    await reply("new"); // 2
    await until(3);
    expect((await annApi.post("/api/v1/me/inbox/read", { all: true })).status).toBe(200);
    await until(4);
    expect(results).toEqual([
      { __typename: "InboxStreamConnected", position: 0, replayed: 1, unreadCount: 1 },
      {
        __typename: "InboxItemAdded",
        seq: 1,
        item: expect.objectContaining({ type: "reply", comment: { body: "old", myVote: 0 }, parent: { body: "top" } }),
      },
      { __typename: "InboxItemAdded", seq: 2, item: expect.objectContaining({ comment: { body: "new", myVote: 0 } }) },
      { __typename: "InboxReadUpdate", unreadCount: 0 },
    ]);
    await it.return?.();
    await loop;
    client.dispose();
  });
});

describe("without Redis (the in-process bus)", () => {
  it("a reply reaches the parent author's me-stream, and a mark-read sends inbox_read", async () => {
    const local = await startServer({ REDIS_URL: "", REDIS_CLUSTER_NODES: "" });
    try {
      expect(local.app.runtime.redis).toBeUndefined();
      const lt = await createTestTenant(local);
      expect((await lt.api.put("/api/v1/discussions/solo", {})).status).toBe(201);
      const ann = await lt.reader("ann");
      const bob = await lt.reader("bob");
      const top = (await ann.post("/api/v1/discussions/solo/comments", { body: "top" })).body;
      const c = openSse(`${local.url}/api/v1/stream/me`, { "x-api-key": lt.apiKey, "x-service-identity": await lt.identity("ann") });
      open.push(c);
      await c.waitFor((f) => f.some((x) => x.event === "connected"));
      const r = (await bob.post("/api/v1/discussions/solo/comments", { body: "re", parentId: top.id })).body;
      await c.waitFor(() => items(c).length === 1);
      expect(items(c)[0]).toMatchObject({ id: "1", data: { comment: { id: r.id } } });
      expect((await ann.post("/api/v1/me/inbox/read", { all: true })).status).toBe(200);
      await c.waitFor((f) => f.some((x) => x.event === "inbox_read"));
      c.close();
    } finally {
      await local.stop();
    }
  });
});
