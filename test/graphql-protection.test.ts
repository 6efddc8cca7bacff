// GraphQL under abuse (contract section 9): document limits refused before execution with
// query_too_complex, each root field counted by the rate limit with RateLimit-* headers on /graphql,
// request errors with specific codes and 4xx statuses, and production defaults.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

async function gql(s: TestServer, key: string | null, body: unknown, accept = "application/graphql-response+json") {
  const res = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...(key ? { "x-api-key": key } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const aliases = (n: number, field: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ")} }`;

describe("document limits", () => {
  it("1,000 aliases of comments(limit: 100), 5,000 nested fragments and 20,000 brackets are refused before execution", async () => {
    const docs = [
      aliases(1000, 'comments(discussionId: "x", limit: 100) { items { id } }'),
      `{${"...on Query{".repeat(5000)}__typename${"}".repeat(5001)}`,
      `{ comments(discussionId: ${"[".repeat(20_000)}"x"${"]".repeat(20_000)}) { items { id } } }`,
    ];
    for (const query of docs) {
      const r = await gql(server, t.apiKey, { query });
      expect(r.status).toBe(400);
      expect(r.body.errors[0].extensions.code).toBe("query_too_complex");
      expect(r.body.data).toBeUndefined();
    }
  });

  it("cost multiplies list sizes through nesting; depth and alias counts are capped", async () => {
    const page = 'comments(discussionId: "x", limit: 100) { items { id author { id } } }';
    const costly = await gql(server, t.apiKey, { query: aliases(14, page) });
    expect(costly.body.errors[0].extensions.code).toBe("query_too_complex");
    expect(costly.body.errors[0].message).toContain("cost");
    const cheap = await gql(server, t.apiKey, {
      query: aliases(14, 'comments(discussionId: "x", limit: 5) { items { id author { id } } }'),
    });
    expect(cheap.body.errors?.[0]?.extensions?.code).not.toBe("query_too_complex");
    // an ofType chain inside introspection is one level of depth, and itself at most 10 long
    const deep = await gql(server, t.apiKey, {
      query: "{ __schema { types { fields { args { type { fields { args { type { ofType { enumValues { name } } } } } } } } } } }",
    });
    expect(deep.body.errors[0].extensions.code).toBe("query_too_complex");
    expect(deep.body.errors[0].message).toContain("depth");
    const ofTypes = await gql(server, t.apiKey, {
      query: `{ __schema { types { ${"ofType { ".repeat(11)}name${" }".repeat(11)} } } }`,
    });
    expect(ofTypes.body.errors[0].extensions.code).toBe("query_too_complex");
    expect(ofTypes.body.errors[0].message).toContain("ofType");
    const many = await gql(server, t.apiKey, { query: aliases(31, "__typename") });
    expect(many.body.errors[0].message).toContain("aliases");
  });
});

describe("rate limit", () => {
  it("counts each root field, aliases included, and /graphql carries RateLimit-* headers", async () => {
    const tt = await createTestTenant(server);
    expect((await tt.api.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 5 } })).status).toBe(200);
    const one = await gql(server, tt.apiKey, { query: "{ discussions { items { id } } }" });
    expect(one.status).toBe(200);
    expect(one.headers.get("ratelimit-limit")).toBe("5");
    expect(Number(one.headers.get("ratelimit-remaining"))).toBe(4);
    const burst = await gql(server, tt.apiKey, { query: aliases(10, "discussions { items { id } }") });
    expect(burst.status).toBe(429);
    expect(burst.body.errors[0].extensions.code).toBe("rate_limited");
    expect(Number(burst.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(burst.body.data ?? null).toBeNull();
  });
});

describe("request errors", () => {
  it("each answers 4xx with a specific code, never internal_error", async () => {
    const cases: [string, string, number][] = [
      ["{{{", JSON.stringify({ query: "{{{" }), 400],
      ["batched", JSON.stringify([{ query: "{ __typename }" }]), 400],
      ["query not a string", JSON.stringify({ query: 5 }), 400],
      ["variables not an object", JSON.stringify({ query: "{ __typename }", variables: "x" }), 400],
      ["unknown operationName", JSON.stringify({ query: "query A { __typename }", operationName: "B" }), 400],
      ["unknown field", JSON.stringify({ query: "{ nope }" }), 400],
    ];
    for (const [what, body, status] of cases) {
      const r = await gql(server, t.apiKey, body);
      expect(r.status, what).toBe(status);
      const code = r.body.errors?.[0]?.extensions?.code;
      expect(typeof code, what).toBe("string");
      expect(code, what).not.toBe("internal_error");
    }
    const get = await fetch(`${server.url}/graphql?query=${encodeURIComponent("mutation { rotateIdentitySecret }")}`, {
      headers: { accept: "application/graphql-response+json", "x-api-key": t.apiKey },
    });
    expect(get.status).toBe(405);
    expect(((await get.json()) as any).errors[0].extensions.code).toBe("bad_request");
  });
});

describe("production defaults", () => {
  it("NODE_ENV=production: no introspection and no suggestions unless GRAPHQL_INTROSPECTION=1", async () => {
    const prod = await startServer({ NODE_ENV: "production" });
    const open = await startServer({ NODE_ENV: "production", GRAPHQL_INTROSPECTION: "1" });
    try {
      const tp = await createTestTenant(prod);
      const intro = await gql(prod, tp.apiKey, { query: "{ __schema { types { name } } }" });
      expect(intro.status).toBe(400);
      expect(intro.body.errors[0].extensions.code).toBe("invalid_query");
      const typo = await gql(prod, tp.apiKey, { query: "{ discusions { items { id } } }" });
      expect(typo.body.errors[0].message).not.toContain("Did you mean");
      const to = await createTestTenant(open);
      expect((await gql(open, to.apiKey, { query: "{ __schema { types { name } } }" })).body.data.__schema.types.length).toBeGreaterThan(
        10,
      );
      expect((await gql(server, t.apiKey, { query: "{ discusions { items { id } } }" })).body.errors[0].message).toContain("Did you mean");
    } finally {
      await Promise.all([prod.stop(), open.stop()]);
    }
  });
});

describe("GraphiQL", () => {
  it("is on outside production, off in production unless GRAPHIQL=1 (GRAPHIQL=0 turns it off), served whole by the service (no CDN)", async () => {
    const html = (s: TestServer) => fetch(`${s.url}/graphql`, { headers: { accept: "text/html" } });
    const isPage = async (s: TestServer) => ((await html(s)).headers.get("content-type") ?? "").includes("text/html");
    const [prod, prodOn, off] = await Promise.all([
      startServer({ NODE_ENV: "production" }),
      startServer({ NODE_ENV: "production", GRAPHIQL: "1" }),
      startServer({ GRAPHIQL: "0" }),
    ]);
    try {
      expect(await isPage(prod)).toBe(false);
      expect(await isPage(off)).toBe(false);
      expect(await isPage(prodOn)).toBe(true);
      const res = await html(server);
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain("<html");
      // every script and stylesheet is inline or from this origin
      const external = [...page.matchAll(/<(?:script|link)[^>]+(?:src|href)="(https?:)?\/\/[^"]+"/g)].map((m) => m[0]);
      expect(external).toEqual([]);
      // the headers pane starts with X-API-Key to fill in, and the first query says which key
      expect(page).toContain("X-API-Key");
    } finally {
      await Promise.all([prod.stop(), prodOn.stop(), off.stop()]);
    }
  });
});
