// The direct /graphql path (src/http/graphql/direct.ts, createDirectGraphQL) answers a backend's POST
// exactly as yoga's whole pipeline does: the same requests with an Origin header (which always
// go through yoga) get the same status, media type and body; graphql_requests_total says which path served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  await t.api.put("/api/v1/discussions/direct-1", {});
  await t.as({ key: t.apiKey, identity: await t.identity("direct-reader") }).post("/api/v1/discussions/direct-1/comments", { body: "hi" });
});
afterAll(() => server?.stop());

/** graphql_requests_total by path, read from the registry */
/** graphql_requests_total by path, read from the registry (compiled and direct both skip the fetch API) */
async function served(): Promise<{ direct: number; yoga: number; compiled: number }> {
  const m = await server.app.runtime.services.metrics.graphqlRequests.get();
  const of = (path: string) => m.values.find((v) => v.labels.path === path)?.value ?? 0;
  return { direct: of("direct") + of("compiled"), yoga: of("yoga"), compiled: of("compiled") };
}

async function post(body: string, headers: Record<string, string>) {
  const res = await fetch(`${server.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await res.text();
  return { status: res.status, type: res.headers.get("content-type"), body: text, limit: res.headers.get("ratelimit-limit") };
}

const COMMENTS = "query L($d: String!) { comments(discussionId: $d, first: 5) { edges { node { id body author { name } } } } }";

describe("direct /graphql", () => {
  const cases: [string, unknown, Record<string, string>][] = [
    ["a query with variables", { query: COMMENTS, variables: { d: "direct-1" }, operationName: "L" }, {}],
    ["graphql-response+json", { query: COMMENTS, variables: { d: "direct-1" } }, { accept: "application/graphql-response+json" }],
    ["Accept */*", { query: "{ __typename }" }, { accept: "*/*" }],
    ["a syntax error", { query: "{{{" }, { accept: "application/graphql-response+json" }],
    ["a syntax error as application/json", { query: "{{{" }, { accept: "application/json" }],
    ["an unknown field", { query: "{ nope }" }, {}],
    ["an unknown operationName", { query: "query A { __typename }", operationName: "B" }, {}],
    ["a variable of the wrong type", { query: COMMENTS, variables: { d: 5 } }, { accept: "application/graphql-response+json" }],
    ["a missing variable", { query: COMMENTS }, {}],
    ["a domain error (404 in the errors)", { query: 'mutation { lockDiscussion(id: "no-such") { id } }' }, {}],
    ["a query answered with an error (run again by yoga's pipeline)", { query: '{ comment(id: "no-such") { id } }' }, {}],
    ["a query with two root fields", { query: '{ a: comment(id: "no-such") { id } b: __typename }' }, {}],
    ["no credentials", { query: 'query { comments(discussionId: "direct-1") { edges { node { id } } } }' }, { "x-api-key": "" }],
  ];

  it.each(cases)("%s: the same answer as yoga's pipeline", async (_what, body, extra) => {
    const headers = { "x-api-key": t.apiKey, ...extra };
    if (headers["x-api-key"] === "") delete (headers as Record<string, string>)["x-api-key"];
    const before = await served();
    const direct = await post(JSON.stringify(body), headers);
    const after = await served();
    expect(after).toMatchObject({ direct: before.direct + 1, yoga: before.yoga });
    const whole = await post(JSON.stringify(body), { ...headers, origin: "https://not-listed.example" });
    expect(await served()).toEqual({ ...after, yoga: before.yoga + 1 });
    expect(direct).toEqual(whole);
    expect(direct.body.length).toBeGreaterThan(2);
  });

  it("runs a backend's one-root-field query compiled, and anything else through yoga's pipeline", async () => {
    const key = { "x-api-key": t.apiKey };
    const before = await served();
    await post(JSON.stringify({ query: COMMENTS, variables: { d: "direct-1" } }), key); // compiled
    await post(JSON.stringify({ query: '{ a: discussion(id: "direct-1") { id } b: discussion(id: "direct-1") { id } }' }), key); // two root fields
    await post(JSON.stringify({ query: COMMENTS, variables: { d: 5 } }), key); // bad variables
    await post(JSON.stringify({ query: 'mutation { lockDiscussion(id: "no-such") { id } }' }), key); // a mutation
    await post(JSON.stringify({ query: '{ comment(id: "no-such") { id } }' }), key); // errors: run again by yoga
    expect(await served()).toEqual({ direct: before.direct + 5, compiled: before.compiled + 1, yoga: before.yoga });
  });

  it("serves the data and the RateLimit headers", async () => {
    const r = await post(JSON.stringify({ query: COMMENTS, variables: { d: "direct-1" } }), { "x-api-key": t.apiKey });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).data.comments.edges.map((e: any) => [e.node.body, e.node.author.name])).toEqual([
      ["hi", "Reader direct-reader"],
    ]);
    expect(r.limit).toBe("6000");
  });

  it("a query answered with errors is counted once against the rate limit, though it runs twice", async () => {
    async function fetchRemaining(query: string) {
      const res = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey },
        body: JSON.stringify({ query }),
      });
      await res.text();
      return Number(res.headers.get("ratelimit-remaining"));
    }
    const a = await fetchRemaining("{ __typename }");
    const b = await fetchRemaining('{ comment(id: "no-such") { id } }');
    const c = await fetchRemaining("{ __typename }");
    expect([a - b, b - c]).toEqual([1, 1]);
  });

  it("leaves batches, GET, subscriptions and other media types to yoga", async () => {
    const before = await served();
    {
      const key = { "x-api-key": t.apiKey };
      await post(JSON.stringify([{ query: "{ __typename }" }]), key);
      await post(JSON.stringify({ query: "{ __typename }", extensions: {} }), key);
      await post(JSON.stringify({ query: 'subscription { discussionEvents(discussionId: "direct-1") { seq } }' }), key);
      await post(JSON.stringify({ query: "{ __typename }" }), { ...key, accept: "text/event-stream" });
      await fetch(`${server.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: key });
    }
    expect(await served()).toEqual({ ...before, yoga: before.yoga + 5 });
  });
});

describe("two apps in one process", () => {
  it("keep their own compiled operations: one without introspection refuses the query the other ran compiled", async () => {
    const production = await startServer({ NODE_ENV: "production" });
    try {
      const body = JSON.stringify({ query: '{ discussion(id: "direct-1") { id } __schema { queryType { name } } }' });
      const before = await served();
      const dev = await post(body, { "x-api-key": t.apiKey });
      expect(await served()).toMatchObject({ compiled: before.compiled + 1 });
      expect(JSON.parse(dev.body)).toEqual({ data: { discussion: { id: "direct-1" }, __schema: { queryType: { name: "Query" } } } });
      const res = await fetch(`${production.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey },
        body,
      });
      const answer = (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
      expect(answer.data).toBeUndefined();
      expect(answer.errors?.[0]?.extensions?.code).toBe("invalid_query");
    } finally {
      await production.stop();
    }
  });
});
