// Black-box contract suite, GraphQL: queries, mutations under the same rules, subscriptions over
// SSE, error codes.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { beforeAll, describe, expect, it } from "vitest";
import { BASE, type Tenant, api, contractRun, expectStatus, openStream } from "../support/contract-client.js";

let A: Tenant;
let ada = "";
let bob = "";
let plainKey = "";
let mgrKey = "";

beforeAll(async () => {
  ({ A, ada, bob, plainKey, mgrKey } = await contractRun());
  // d-main, as test/contract/discussions.test.ts makes it, for the checks below that read it
  expectStatus(
    await api.put("/discussions/d-main", { key: A.apiKey, json: { title: "Launch day!", url: "https://example.com/launch" } }),
    201,
  );
});

// ───────────────────────────── GraphQL ─────────────────────────────

describe("GraphQL", () => {
  const gql = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${BASE}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify({ query }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it("a query with X-API-Key works", async () => {
    const r = await gql('{ discussion(id: "d-main") { id state } }', { "x-api-key": A.apiKey });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.discussion).toEqual({ id: "d-main", state: expect.stringMatching(/^open$/i) });
  });

  it("mutations follow the same rules: identity, capability escalation, console-only routes", async () => {
    const post = (headers: Record<string, string>) =>
      gql('mutation { postComment(discussionId: "d-gql", input: { body: "via GraphQL" }) { id body status author { name } } }', headers);
    const anon = await post({ "x-api-key": A.apiKey });
    expect(anon.body.errors?.[0]?.extensions?.code).toBe("invalid_identity");
    const ok = await post({ "x-api-key": A.apiKey, "x-service-identity": ada });
    expect(ok.body.errors, JSON.stringify(ok.body)).toBeUndefined();
    expect(ok.body.data.postComment).toMatchObject({ body: "via GraphQL", author: { name: "Ada" } });
    const esc = await gql('mutation { createApiKey(input: { label: "x", capabilities: ["moderate_content"] }) { key } }', {
      "x-api-key": mgrKey,
    });
    expect(esc.body.errors?.[0]?.extensions?.code).toBe("capability_escalation");
    const lock = await gql('mutation { lockDiscussion(id: "d-gql") { state } }', { "x-api-key": plainKey });
    expect(lock.body.errors?.[0]?.extensions?.code).toBe("missing_capability");
    const enable = await gql('mutation { enableWebhook(webhookId: "whatever") { state } }', { "x-api-key": A.apiKey });
    expect(enable.body.errors?.length, JSON.stringify(enable.body)).toBeGreaterThan(0);
    expect(["unauthenticated", "missing_capability"]).toContain(enable.body.errors[0].extensions?.code);
  });

  it("subscriptions over SSE (graphql-sse, distinct connections on /graphql) carry the same events", async () => {
    const query =
      'subscription { discussionEvents(discussionId: "d-gql") { __typename ... on StreamConnected { replayed truncated } ... on StreamEvent { type seq data } } }';
    const s = await openStream(
      "/graphql",
      { "x-api-key": A.apiKey, "content-type": "application/json" },
      { method: "POST", body: JSON.stringify({ query }) },
    );
    try {
      expect(s.res.status).toBe(200);
      expect(s.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      await s.waitFor((f) => f.some((x) => x.event === "next"));
      expect(s.frames.find((x) => x.event === "next")!.data.data.discussionEvents.__typename).toBe("StreamConnected");
      const c = await api.post("/discussions/d-gql/comments", { key: A.apiKey, identity: bob, json: { body: "to the subscription" } });
      await s.waitFor((f) => f.some((x) => x.event === "next" && x.data?.data?.discussionEvents?.type === "comment_created"));
      const ev = s.frames.find((x) => x.event === "next" && x.data?.data?.discussionEvents?.type === "comment_created")!.data.data
        .discussionEvents;
      expect(ev.data.comment.id).toBe(c.body.id);
    } finally {
      s.close();
    }
  });

  it("errors carry extensions.code", async () => {
    const nf = await gql('{ discussion(id: "no-such-discussion") { id } }', { "x-api-key": A.apiKey });
    expect(nf.body.errors?.[0]?.extensions?.code).toBe("not_found");
    const cap = await gql("{ settings { moderation } }", { "x-api-key": plainKey });
    expect(cap.body.errors?.[0]?.extensions?.code).toBe("missing_capability");
    const anon = await gql('{ discussion(id: "d-main") { id } }');
    expect(anon.body.errors?.[0]?.extensions?.code).toBe("unauthenticated");
  });
});
