// Contract section 1: every error is an RFC 9457 problem document with a stable code.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client, type Res } from "./support/client.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  await t.api.put("/api/v1/discussions/err-d", {});
});
afterAll(() => server?.stop());

function expectProblem(r: Res, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({
    status,
    code,
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    detail: expect.any(String),
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("problem documents", () => {
  it("400 malformed_json", async () => {
    expectProblem(await t.api.raw("PUT", "/api/v1/discussions/err-d", '{"title": "x",'), 400, "malformed_json");
    expectProblem(await t.api.raw("POST", "/api/v1/keys", "not json at all"), 400, "malformed_json");
  });

  it("400 invalid_parameter for bad path and query parameters", async () => {
    expectProblem(await t.api.get("/api/v1/discussions?limit=abc"), 400, "invalid_parameter");
    const r = await t.api.get("/api/v1/discussions?limit=500");
    expectProblem(r, 400, "invalid_parameter");
    expect(r.body.errors).toEqual([{ path: "limit", message: expect.any(String) }]);
  });

  it("413 payload_too_large over 64 KiB", async () => {
    const r = await t.api.put("/api/v1/discussions/err-d", { title: "x".repeat(70 * 1024) });
    expectProblem(r, 413, "payload_too_large");
  });

  it("415 unsupported_media_type for a write without a JSON content type", async () => {
    const plain = await t.api.raw("POST", "/api/v1/keys", "label=x", { headers: { "content-type": "text/plain" } });
    expectProblem(plain, 415, "unsupported_media_type");
    const form = await t.api.raw("PATCH", "/api/v1/settings", "a=1", { headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectProblem(form, 415, "unsupported_media_type");
    const none = await fetch(`${server.url}/api/v1/keys`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey },
      body: new TextEncoder().encode('{"label":"no content type"}'),
    });
    expect(none.status).toBe(415);
    expect(none.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    // JSON with a charset or a +json type is fine
    const ok = await t.api.raw("PUT", "/api/v1/discussions/err-d", '{"title":"ok"}', {
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(ok.status).toBe(200);
  });

  it("422 validation_failed lists every bad field, by field name", async () => {
    const keys = await t.api.post("/api/v1/keys", {
      label: "",
      capabilities: ["root", "view_analytics", "sudo"],
      expiresAt: "2000-01-01T00:00:00Z",
    });
    expectProblem(keys, 422, "validation_failed");
    expect(keys.body.errors.map((e: any) => e.path).sort()).toEqual(["capabilities[0]", "capabilities[2]", "expiresAt", "label"]);
    for (const e of keys.body.errors) expect(e.message).toEqual(expect.any(String));

    const disc = await t.api.put("/api/v1/discussions/err-d", { title: "x".repeat(501), url: "not a url" });
    expectProblem(disc, 422, "validation_failed");
    expect(disc.body.errors.map((e: any) => e.path).sort()).toEqual(["title", "url"]);

    const unknown = await t.api.put("/api/v1/discussions/err-d", { titel: "typo", colour: "red" });
    expectProblem(unknown, 422, "validation_failed");
    expect(unknown.body.errors.map((e: any) => e.path).sort()).toEqual(["colour", "titel"]);

    const wrongType = await t.api.put("/api/v1/discussions/err-d", { title: 5 });
    expectProblem(wrongType, 422, "validation_failed");
    expect(wrongType.body.errors).toEqual([{ path: "title", message: expect.any(String) }]);

    expectProblem(await t.api.put("/api/v1/discussions/err-d", [1, 2]), 422, "validation_failed");
  });

  it("404 not_found for unknown routes and ids", async () => {
    expectProblem(await t.api.get("/api/v1/nothing-here"), 404, "not_found");
    expectProblem(await client(server.url).get("/nothing"), 404, "not_found");
    expectProblem(await t.api.get("/api/v1/discussions/never-made"), 404, "not_found");
    expectProblem(await t.api.del("/api/v1/keys/key_never_made"), 404, "not_found");
  });

  it("401, 403 and 409 are problem documents too", async () => {
    expectProblem(await client(server.url).get("/api/v1/discussions"), 401, "unauthenticated");
    const bare = await t.api.post("/api/v1/keys", { label: "bare", capabilities: [] });
    const forbidden = await t.as({ key: bare.body.key }).get("/api/v1/settings");
    expectProblem(forbidden, 403, "missing_capability");
    expect(forbidden.body.required).toBe("manage_settings");
    await t.api.put("/api/v1/discussions/err-archived", {});
    await t.api.post("/api/v1/discussions/err-archived/archive");
    expectProblem(await t.api.post("/api/v1/discussions/err-archived/lock"), 409, "discussion_archived");
  });

  it("429 rate_limited with Retry-After and RateLimit-* headers", async () => {
    const r = await createTestTenant(server);
    const patched = await r.api.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 3 } });
    expect(patched.status).toBe(200);
    const seen: Res[] = [];
    for (let i = 0; i < 4; i++) seen.push(await r.api.get("/api/v1/discussions"));
    expect(seen.slice(0, 3).map((x) => x.status)).toEqual([200, 200, 200]);
    expect(seen.slice(0, 3).map((x) => x.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0"]);
    expect(seen[0]!.headers.get("ratelimit-limit")).toBe("3");
    const limited = seen[3]!;
    expectProblem(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(limited.headers.get("ratelimit-limit")).toBe("3");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    // the budget is per caller: the admin console is not throttled by the key's use
    expect((await r.admin.get("/api/v1/discussions")).status).toBe(200);
  });

  it("counts simultaneous requests exactly (they are consumed in batches): the budget, then 429", async () => {
    const r = await createTestTenant(server);
    expect((await r.api.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 12 } })).status).toBe(200);
    // a new budget counts from zero (the PATCH was counted against the old one); 25 at once
    const all = await Promise.all(Array.from({ length: 25 }, () => r.api.get("/api/v1/discussions")));
    const ok = all.filter((x) => x.status === 200);
    expect(ok).toHaveLength(12);
    expect(all.filter((x) => x.status === 429)).toHaveLength(13);
    expect(ok.map((x) => Number(x.headers.get("ratelimit-remaining"))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, i) => i),
    );
  });
});

describe("a database that cannot be reached at start-up", () => {
  // a running server whose database goes away answers 503 (test/faults.test.ts: stalled, crashed);
  // one that cannot reach it when starting refuses to start, in one line that says where it tried
  it("stops the start with one line naming the database, without a password or a stack trace", async () => {
    const started = Date.now();
    const port = await freePort();
    await expect(startServer({ DATABASE_URL: `postgresql://postgres:s3cret@127.0.0.1:${port}/nothing` })).rejects.toThrow(
      new RegExp(
        `^Cannot connect to the database of DATABASE_URL \\(postgresql://postgres@127\\.0\\.0\\.1:${port}/nothing\\): .*ECONNREFUSED`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
