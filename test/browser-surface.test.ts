// The browser-facing surface (contract section 7): publishable keys and their narrow rights, the
// tenant's allowedOrigins with CORS_ORIGINS, per-reader budgets, and comment counts with ETag.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";
import { createKey } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let pk: string;
let n = 0;

const ORIGIN = "https://news.example";
const SERVER_ORIGIN = "https://everyone.example";

beforeAll(async () => {
  server = await startServer({ CORS_ORIGINS: SERVER_ORIGIN });
  t = await createTestTenant(server);
  other = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN] })).status).toBe(200);
  expect((await other.api.patch("/api/v1/settings", { allowedOrigins: ["https://other.example"] })).status).toBe(200);
  const created = await t.admin.post("/api/v1/publishable-keys", { label: "site" });
  expect(created.status).toBe(201);
  pk = created.body.key;
});
afterAll(() => server?.stop());

async function discussion(): Promise<string> {
  const id = `pk-${++n}`;
  expect((await t.api.put(`/api/v1/discussions/${id}`, { title: id })).status).toBe(201);
  return id;
}

describe("publishable keys", () => {
  it("are minted once, listed apart from API keys, and revoked", async () => {
    const r = await t.api.post("/api/v1/publishable-keys", { label: "blog" });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["createdAt", "id", "key", "label", "prefix"]);
    expect(r.body.key).toMatch(/^pk_[0-9a-f]{64}$/);
    expect(r.body.prefix).toBe(r.body.key.slice(0, 12));

    const listed = await t.api.get("/api/v1/publishable-keys");
    expect(listed.status).toBe(200);
    const mine = listed.body.items.find((k: { id: string }) => k.id === r.body.id);
    expect(mine).toMatchObject({ label: "blog", prefix: r.body.prefix, state: "active" });
    expect(JSON.stringify(listed.body)).not.toContain(r.body.key);
    expect((await t.api.get("/api/v1/keys?limit=100")).body.items.map((k: { id: string }) => k.id)).not.toContain(r.body.id);

    // each kind is revoked by its own route
    expect((await t.api.del(`/api/v1/keys/${r.body.id}`)).status).toBe(404);
    const api = client(server.url, { key: r.body.key });
    expect((await api.get("/api/v1/discussions")).status).toBe(200);
    expect((await t.api.del(`/api/v1/publishable-keys/${r.body.id}`)).status).toBe(204);
    const refused = await api.get("/api/v1/discussions");
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("key_revoked");
  });

  it("need manage_api_keys (or the admin JWT) to mint, and a label", async () => {
    const plain = client(server.url, { key: await createKey(server, t.tenantId, []) });
    const denied = await plain.post("/api/v1/publishable-keys", { label: "x" });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: "missing_capability", required: "manage_api_keys" });
    expect((await t.api.post("/api/v1/publishable-keys", { label: "" })).status).toBe(422);
    expect((await t.api.post("/api/v1/publishable-keys", { label: "x", capabilities: ["moderate_content"] })).status).toBe(422);
  });

  it("read, act as a reader with an identity assertion and mint stream tickets", async () => {
    const id = await discussion();
    const reader = client(server.url, { key: pk, identity: await t.identity("pia", { name: "Pia" }) });
    const posted = await reader.post(`/api/v1/discussions/${id}/comments`, { body: "from a page" });
    expect(posted.status).toBe(201);
    expect((await reader.get(`/api/v1/discussions/${id}/comments`)).body.items.map((c: { id: string }) => c.id)).toEqual([posted.body.id]);
    expect((await reader.get(`/api/v1/discussions/${id}`)).status).toBe(200);
    expect((await reader.get(`/api/v1/comments/${posted.body.id}`)).status).toBe(200);
    expect((await reader.patch(`/api/v1/comments/${posted.body.id}`, { body: "edited" })).status).toBe(200);
    expect((await reader.post(`/api/v1/comments/${posted.body.id}/reactions`, { kind: "like" })).body).toMatchObject({ active: true });
    expect((await reader.post("/api/v1/stream/ticket", { discussionId: id })).status).toBe(201);
    expect((await reader.get(`/api/v1/discussions/counts?ids=${id}`)).body).toEqual({ counts: { [id]: 1 } });
    const gql = await reader.raw("POST", "/graphql", { query: `{ comment(id: "${posted.body.id}") { body } }` });
    expect(gql.body.data).toEqual({ comment: { body: "edited" } });
    expect((await reader.del(`/api/v1/comments/${posted.body.id}`)).status).toBe(204);

    // without an assertion a publishable key only reads; it never creates discussions
    const anonymous = client(server.url, { key: pk });
    expect((await anonymous.post(`/api/v1/discussions/${id}/comments`, { body: "x" })).status).toBe(401);
    const unknown = await reader.post("/api/v1/discussions/never-created/comments", { body: "x" });
    expect(unknown.status).toBe(404);
  });

  it("are refused (403 missing_capability) everywhere else, over REST and GraphQL", async () => {
    const id = await discussion();
    const posted = await t
      .as({ key: t.apiKey, identity: await t.identity("q") })
      .post(`/api/v1/discussions/${id}/comments`, { body: "hello" });
    const api = client(server.url, { key: pk });
    const attempts: [string, string, unknown?][] = [
      ["GET", "/api/v1/settings"],
      ["PATCH", "/api/v1/settings", { moderation: "pre" }],
      ["POST", "/api/v1/settings/identity-secret/rotate"],
      ["GET", "/api/v1/keys"],
      ["POST", "/api/v1/keys", { label: "x" }],
      ["GET", "/api/v1/publishable-keys"],
      ["GET", "/api/v1/webhooks"],
      ["POST", "/api/v1/webhooks", { url: "https://example.com/hook", events: ["*"] }],
      ["PUT", `/api/v1/discussions/${id}`, { title: "mine now" }],
      ["PUT", "/api/v1/discussions/brand-new", {}],
      ["POST", `/api/v1/discussions/${id}/lock`],
      ["POST", `/api/v1/comments/${posted.body.id}/approve`],
      ["POST", `/api/v1/comments/${posted.body.id}/pin`],
      ["GET", `/api/v1/discussions/${id}/comments?status=pending`],
      ["GET", "/api/v1/analytics"],
    ];
    for (const [method, path, body] of attempts) {
      const r = await api.raw(method, path, body);
      expect([path, r.status, r.body?.code]).toEqual([path, 403, "missing_capability"]);
    }
    const gql = await api.raw("POST", "/graphql", { query: `mutation { upsertDiscussion(id: "${id}") { created } }` });
    expect(gql.body.errors[0].extensions.code).toBe("missing_capability");
    expect((await api.del(`/api/v1/comments/${posted.body.id}`)).status).toBe(401); // deleting needs the author's assertion
  });
});

describe("allowed origins", () => {
  it("are a validated setting", async () => {
    const bad = await t.api.patch("/api/v1/settings", { allowedOrigins: ["https://news.example/path", "ftp://x.example", ORIGIN, ORIGIN] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "allowedOrigins",
      "allowedOrigins[0]",
      "allowedOrigins[1]",
    ]);
    expect((await t.api.get("/api/v1/settings")).body.allowedOrigins).toEqual([ORIGIN]);
  });

  it("answer CORS (preflight included) for the tenant's origins and CORS_ORIGINS, never for others", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/api/v1/discussions`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key" },
      });
    for (const origin of [ORIGIN, SERVER_ORIGIN]) {
      const p = await preflight(origin);
      expect(p.headers.get("access-control-allow-origin")).toBe(origin);
      expect(p.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-api-key");
      expect(p.headers.get("access-control-allow-credentials")).toBeNull();
    }
    expect((await preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();

    const api = client(server.url, { key: pk });
    const ok = await api.get("/api/v1/discussions", { headers: { origin: ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(ok.headers.get("access-control-allow-credentials")).toBeNull();
    expect((await api.get("/api/v1/discussions", { headers: { origin: SERVER_ORIGIN } })).status).toBe(200);

    const evil = await api.get("/api/v1/discussions", { headers: { origin: "https://evil.example" } });
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe("origin_not_allowed");
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    // another tenant's origin: the browser may see the refusal, but gets nothing of this tenant
    const foreign = await api.get("/api/v1/discussions", { headers: { origin: "https://other.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("origin_not_allowed");
    // GraphQL too
    const gql = await api.raw(
      "POST",
      "/graphql",
      { query: "{ discussions { items { id } } }" },
      { headers: { origin: "https://other.example" } },
    );
    expect(gql.body.errors[0].extensions.code).toBe("origin_not_allowed");
  });

  it("bind stream tickets too: a ticket opened from an origin its tenant does not list is refused", async () => {
    const id = await discussion();
    const mint = async () => (await t.api.post("/api/v1/stream/ticket", { discussionId: id })).body.ticket as string;
    const refused = await fetch(`${server.url}/api/v1/stream/${id}?ticket=${await mint()}`, {
      headers: { origin: "https://other.example" },
    });
    expect(refused.status).toBe(403);
    const ctrl = new AbortController();
    const ok = await fetch(`${server.url}/api/v1/stream/${id}?ticket=${await mint()}`, {
      headers: { origin: ORIGIN },
      signal: ctrl.signal,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    ctrl.abort();
  });
});

describe("publishable-key budgets", () => {
  it("count per reader on top of the key: one reader cannot spend the site's budget", async () => {
    const tenant = await createTestTenant(server);
    await tenant.api.patch("/api/v1/settings", { rateLimits: { readerRequestsPerMinute: 3 } });
    const key = (await tenant.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const alice = client(server.url, { key, identity: await tenant.identity("alice") });
    const bob = client(server.url, { key, identity: await tenant.identity("bob") });
    for (let i = 0; i < 3; i++) expect((await alice.get("/api/v1/discussions")).status).toBe(200);
    const limited = await alice.get("/api/v1/discussions");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await bob.get("/api/v1/discussions")).status).toBe(200);
    expect((await client(server.url, { key }).get("/api/v1/discussions")).status).toBe(200);
  });

  it("count per key with the tenant's publishableKeyRequestsPerMinute", async () => {
    const tenant = await createTestTenant(server);
    await tenant.api.patch("/api/v1/settings", { rateLimits: { publishableKeyRequestsPerMinute: 2 } });
    const key = (await tenant.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const page = client(server.url, { key });
    expect((await page.get("/api/v1/discussions")).headers.get("ratelimit-limit")).toBe("2");
    expect((await page.get("/api/v1/discussions")).status).toBe(200);
    expect((await page.get("/api/v1/discussions")).status).toBe(429);
    expect((await tenant.api.get("/api/v1/discussions")).status).toBe(200); // the backend's key has its own budget
  });
});

describe("comment counts", () => {
  it("GET /discussions/counts?ids= answers visible comments per id (unknown ids 0) with ETag, Cache-Control and 304", async () => {
    const a = await discussion();
    const b = await discussion();
    const author = t.as({ key: t.apiKey, identity: await t.identity("counter") });
    await author.post(`/api/v1/discussions/${a}/comments`, { body: "1" });
    const second = await author.post(`/api/v1/discussions/${a}/comments`, { body: "2" });
    await author.post(`/api/v1/discussions/${b}/comments`, { body: "3" });
    await t.api.del(`/api/v1/comments/${second.body.id}`);

    const r = await t.api.get(`/api/v1/discussions/counts?ids=${a},${b},nobody-yet`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ counts: { [a]: 1, [b]: 1, "nobody-yet": 0 } });
    expect(r.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);

    const again = await t.api.get(`/api/v1/discussions/counts?ids=${a},${b},nobody-yet`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
    expect(again.headers.get("etag")).toBe(etag);

    await author.post(`/api/v1/discussions/${b}/comments`, { body: "4" });
    const changed = await t.api.get(`/api/v1/discussions/counts?ids=${a},${b},nobody-yet`, { headers: { "if-none-match": etag! } });
    expect(changed.status).toBe(200);
    expect(changed.body.counts[b]).toBe(2);
    expect(changed.headers.get("etag")).not.toBe(etag);

    // another tenant's discussion of the same id counts as unknown
    expect((await other.api.get(`/api/v1/discussions/counts?ids=${a}`)).body).toEqual({ counts: { [a]: 0 } });
  });

  it("refuses a missing, empty, oversized or malformed id list with 400 invalid_parameter", async () => {
    for (const q of ["", "?ids=", `?ids=${Array.from({ length: 101 }, (_, i) => `d${i}`).join(",")}`, "?ids=ok,bad%20id"]) {
      const r = await t.api.get(`/api/v1/discussions/counts${q}`);
      expect([q, r.status, r.body.code]).toEqual([q, 400, "invalid_parameter"]);
    }
    expect((await t.as({}).get("/api/v1/discussions/counts?ids=a")).status).toBe(401);
  });

  it("has a GraphQL twin", async () => {
    const a = await discussion();
    const r = await t.api.raw("POST", "/graphql", { query: `{ discussionCounts(ids: ["${a}", "zzz"]) { discussionId comments } }` });
    expect(r.body.data.discussionCounts).toEqual([
      { discussionId: a, comments: 0 },
      { discussionId: "zzz", comments: 0 },
    ]);
  });
});
