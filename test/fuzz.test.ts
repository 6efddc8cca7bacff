// Property-based fuzzing (fast-check) of every REST route family and the GraphQL endpoint with
// arbitrary ids, query strings, bodies and GraphQL arguments: never a 5xx, REST errors are problem
// documents with a code, GraphQL errors carry extensions.code.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;
let identity = "";

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  identity = await t.identity("fuzzer");
  await t.api.put("/api/v1/discussions/fuzz", {});
});
afterAll(() => server?.stop());

const ROUTES: [string, string][] = [
  ["GET", "/api/v1/discussions/{id}"],
  ["PUT", "/api/v1/discussions/{id}"],
  ["POST", "/api/v1/discussions/{id}/lock"],
  ["GET", "/api/v1/discussions/{id}/comments"],
  ["POST", "/api/v1/discussions/{id}/comments"],
  ["GET", "/api/v1/comments/{id}"],
  ["PATCH", "/api/v1/comments/{id}"],
  ["DELETE", "/api/v1/comments/{id}"],
  ["POST", "/api/v1/comments/{id}/reactions"],
  ["POST", "/api/v1/comments/{id}/approve"],
  ["GET", "/api/v1/keys"],
  ["POST", "/api/v1/keys"],
  ["DELETE", "/api/v1/keys/{id}"],
  ["PATCH", "/api/v1/settings"],
  ["GET", "/api/v1/analytics"],
  ["POST", "/api/v1/stream/ticket"],
  ["GET", "/api/v1/webhooks/{id}"],
  ["POST", "/api/v1/webhooks"],
  ["PATCH", "/api/v1/webhooks/{id}"],
  ["GET", "/api/v1/webhooks/{id}/deliveries"],
];

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom("", "\u0000", "a\u0000b", "%00", "..", "../keys", "🙂", "x".repeat(300), "null", "[]", "{}"),
);
const json = fc.jsonValue({ maxDepth: 3 });
const body = fc.oneof(
  json,
  fc.dictionary(
    fc.constantFrom("body", "parentId", "kind", "label", "capabilities", "title", "url", "events", "discussionId", "moderation", "limit"),
    json,
  ),
);
const query = fc.dictionary(fc.constantFrom("limit", "cursor", "sort", "status", "parentId", "since", "until", "from", "to"), nasty, {
  maxKeys: 3,
});

describe("fuzz", () => {
  it("REST: no 5xx; every error is a problem document with a code", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), nasty, query, body, async ([method, template], id, q, b) => {
        const path = template.replace("{id}", encodeURIComponent(id) || "x");
        const qs = new URLSearchParams(Object.entries(q)).toString();
        const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ""}`, {
          method,
          headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": identity },
          ...(method === "GET" || method === "DELETE" ? {} : { body: JSON.stringify(b) }),
        });
        const text = await res.text();
        expect(res.status, `${method} ${path}?${qs} ${JSON.stringify(b)} → ${text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
          expect(typeof JSON.parse(text).code).toBe("string");
        }
      }),
      { numRuns: 300 },
    );
    // 300 requests in a row: a loaded CI machine (every project's files in parallel) takes more than 30 s
  }, 120_000);

  it("GraphQL: no 5xx; every error has extensions.code", async () => {
    const ops = [
      "query Q($id: String!) { comment(id: $id) { id } }",
      "query Q($id: String!, $limit: Int, $cursor: String) { comments(discussionId: $id, limit: $limit, cursor: $cursor) { items { id } } }",
      "mutation M($id: String!) { revokeApiKey(id: $id) { id } }",
      "query Q($id: String!) { webhook(webhookId: $id) { id } }",
      "mutation M($id: String!, $body: String) { postComment(discussionId: $id, input: { body: $body }) { id } }",
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), nasty, fc.option(fc.integer()), fc.option(nasty), async (query, id, limit, extra) => {
        const res = await fetch(`${server.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": identity },
          body: JSON.stringify({ query, variables: { id, limit, cursor: extra, body: extra } }),
        });
        expect(res.status).toBeLessThan(500);
        const out = (await res.json()) as { errors?: { extensions?: { code?: unknown } }[] };
        for (const e of out.errors ?? []) {
          expect(typeof e.extensions?.code, JSON.stringify(e)).toBe("string");
          expect(e.extensions?.code).not.toBe("internal_error");
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);
});
