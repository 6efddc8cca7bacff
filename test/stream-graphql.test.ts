// The discussionEvents subscription over the graphql-sse protocol, with the graphql-sse client in
// both modes: distinct connections (POST /graphql, yoga's built-in SSE) and single connection
// (/graphql/stream, @graphql-yoga/plugin-graphql-sse). Same auth, replay and visibility as SSE.
import { createClient, type Client } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { createKey, writeEvent } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
let plainKey: string;
let n = 0;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  plainKey = await createKey(server, t.tenantId, []);
});
afterAll(async () => {
  for (const c of clients) c.dispose();
  await server?.stop();
});

const SUBSCRIPTION = /* GraphQL */ `
  subscription Events($d: String!, $after: Int, $ticket: String) {
    discussionEvents(discussionId: $d, after: $after, ticket: $ticket) {
      __typename
      ... on StreamConnected {
        discussionId
        replayed
        truncated
        heartbeatSeconds
      }
      ... on StreamEvent {
        id
        seq
        type
        tenantId
        discussionId
        occurredAt
        data
        payload {
          __typename
          ... on DiscussionEventData {
            discussion {
              id
            }
          }
          ... on CommentEventData {
            comment {
              id
              body
              depth
              author {
                name
              }
              reactions {
                kind
                count
              }
            }
          }
        }
      }
      ... on StreamConnectionTimeout {
        reason
      }
    }
  }
`;

const MODES = [
  { name: "distinct connections (/graphql)", path: "/graphql", singleConnection: false },
  { name: "single connection (/graphql/stream)", path: "/graphql/stream", singleConnection: true },
] as const;

function gqlClient(mode: (typeof MODES)[number], headers: Record<string, string>, s = server): Client {
  const c = createClient({ url: `${s.url}${mode.path}`, singleConnection: mode.singleConnection, headers, retryAttempts: 0 });
  clients.push(c);
  return c;
}

/** Subscribes and collects results; `until` resolves once `count` results arrived. */
function subscribe(c: Client, variables: Record<string, unknown>) {
  const results: any[] = [];
  let done = false;
  const it = c.iterate({ query: SUBSCRIPTION, variables });
  const loop = (async () => {
    try {
      for await (const r of it) results.push(r);
    } catch (err) {
      results.push({ thrown: err });
    }
    done = true;
  })();
  const wait = async (pred: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out; got ${JSON.stringify(results)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    results,
    items: () => results.map((r) => r.data?.discussionEvents).filter(Boolean),
    events: () => results.map((r) => r.data?.discussionEvents).filter((x) => x?.__typename === "StreamEvent"),
    until: (count: number) => wait(() => results.length >= count),
    ended: () => wait(() => done),
    stop: async () => {
      await it.return?.();
      await loop;
    },
  };
}

async function discussion() {
  const id = `g-${++n}`;
  await t.api.put(`/api/v1/discussions/${id}`, {});
  return id;
}

describe.each(MODES)("discussionEvents over graphql-sse, $name", (mode) => {
  it("sends StreamConnected, then live events in seq order with the envelope", async () => {
    const id = await discussion();
    const sub = subscribe(gqlClient(mode, { "x-api-key": t.apiKey }), { d: id });
    await sub.until(1);
    expect(sub.items()[0]).toEqual({
      __typename: "StreamConnected",
      discussionId: id,
      replayed: 0,
      truncated: false,
      heartbeatSeconds: 15,
    });
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await writeEvent(server, t.tenantId, id, { count: 2 });
    await sub.until(4);
    const evs = sub.events();
    expect(evs.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(evs[0]).toMatchObject({ type: "discussion_locked", tenantId: t.tenantId, discussionId: id });
    expect(evs[0].data.discussion).toMatchObject({ id, state: "locked" });
    expect(evs[0].payload).toEqual({ __typename: "DiscussionEventData", discussion: { id } });
    await sub.stop();
  });

  it("types the payload: a comment event carries a Comment", async () => {
    const id = await discussion();
    const sub = subscribe(gqlClient(mode, { "x-api-key": t.apiKey }), { d: id });
    await sub.until(1);
    const posted = await t
      .as({ key: t.apiKey, identity: await t.identity("typed", { name: "Typed" }) })
      .post(`/api/v1/discussions/${id}/comments`, {
        body: "typed payload",
      });
    await sub.until(2);
    expect(sub.events()[0]).toMatchObject({ type: "comment_created" });
    expect(sub.events()[0].payload).toEqual({
      __typename: "CommentEventData",
      comment: { id: posted.body.id, body: "typed payload", depth: null, author: { name: "Typed" }, reactions: [] },
    });
    await sub.stop();
  });

  it("replays after `after` within the window", async () => {
    const id = await discussion();
    await writeEvent(server, t.tenantId, id, { count: 4 });
    const sub = subscribe(gqlClient(mode, { "x-api-key": t.apiKey }), { d: id, after: 1 });
    await sub.until(4);
    expect(sub.items()[0]).toMatchObject({ replayed: 3, truncated: false });
    expect(sub.events().map((e) => e.seq)).toEqual([2, 3, 4]);
    await sub.stop();
  });

  it("takes a stream ticket instead of a key, once; and applies the reader's visibility", async () => {
    const id = await discussion();
    const r = await t.as({ key: plainKey, identity: await t.identity("alice") }).post("/api/v1/stream/ticket", { discussionId: id });
    const sub = subscribe(gqlClient(mode, {}), { d: id, ticket: r.body.ticket });
    await sub.until(1);
    expect(sub.items()[0].__typename).toBe("StreamConnected");
    await writeEvent(server, t.tenantId, id, { type: "notification_reply", audience: "reader", readerId: "bob", data: {} });
    await writeEvent(server, t.tenantId, id, { type: "comment_rejected", audience: "moderators", data: {} });
    await writeEvent(server, t.tenantId, id, { type: "notification_reply", audience: "reader", readerId: "alice", data: {} });
    await sub.until(2);
    expect(sub.events().map((e) => [e.seq, e.type])).toEqual([[3, "notification_reply"]]);
    await sub.stop();

    const again = subscribe(gqlClient(mode, {}), { d: id, ticket: r.body.ticket });
    await again.ended();
    expect(again.results[0].errors?.[0]?.extensions?.code).toBe("unauthenticated");
  });

  it("refuses without credentials (unauthenticated) and for an unknown discussion (not_found)", async () => {
    const anon = subscribe(gqlClient(mode, {}), { d: "whatever" });
    await anon.ended();
    expect(anon.results[0].errors?.[0]?.extensions?.code).toBe("unauthenticated");
    const unknown = subscribe(gqlClient(mode, { "x-api-key": t.apiKey }), { d: "no-such-discussion" });
    await unknown.ended();
    expect(unknown.results[0].errors?.[0]?.extensions?.code).toBe("not_found");
  });
});

describe("subscriptions and shutdown", () => {
  it("ends with StreamConnectionTimeout(shutdown) and completes when the instance stops", async () => {
    const s = await startServer();
    const tt = await createTestTenant(s);
    await tt.api.put("/api/v1/discussions/bye", {});
    const subs = MODES.map((mode) => subscribe(gqlClient(mode, { "x-api-key": tt.apiKey }, s), { d: "bye" }));
    for (const sub of subs) await sub.until(1);
    expect(s.app.streams.stats().sessions).toBe(2);
    await s.stop();
    for (const sub of subs) {
      await sub.until(2);
      expect(sub.items().at(-1)).toEqual({ __typename: "StreamConnectionTimeout", reason: "shutdown" });
    }
  });
});

describe("pendingComments (the console's live queue)", () => {
  it("sends a comment that arrived just before the subscription began, and each new one once", async () => {
    const s = await startServer();
    try {
      const tt = await createTestTenant(s);
      expect((await tt.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
      await tt.api.put("/api/v1/discussions/held", {});
      const as = async (name: string) => tt.as({ key: tt.apiKey, identity: await tt.identity(name.toLowerCase(), { name }) });
      // posted while a client had loaded its queue (empty) and not yet subscribed
      const early = await (await as("Early")).post("/api/v1/discussions/held/comments", { body: "before" });
      expect(early.body.status).toBe("pending");
      const results: any[] = [];
      const c = createClient({ url: `${s.url}/graphql`, headers: { "x-api-key": tt.apiKey }, retryAttempts: 0 });
      clients.push(c);
      const it = c.iterate({ query: "subscription { pendingComments { id body author { name } } }" });
      void (async () => {
        for await (const r of it) results.push(r);
      })();
      const late = await (await as("Late")).post("/api/v1/discussions/held/comments", { body: "after" });
      await expect.poll(() => results.length, { timeout: 10_000 }).toBe(2);
      expect(results.map((r) => r.data.pendingComments.id)).toEqual([early.body.id, late.body.id]);
      await it.return?.();
    } finally {
      await s.stop();
    }
  });
});
