// Black-box contract suite, errors: problem documents for malformed, oversized and mistyped bodies,
// unknown routes and ids, other tenants' ids, the key budget and rate limits.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { beforeAll, describe, expect, it } from "vitest";
import {
  BASE,
  type Res,
  type Tenant,
  api,
  contractRun,
  createTenant,
  eventually,
  expectCollection,
  expectProblem,
  expectStatus,
  identity,
} from "../support/contract-client.js";

let A: Tenant;
let B: Tenant;
let ada = "";
let modKey = "";

beforeAll(async () => {
  ({ A, B, ada, modKey } = await contractRun());
  // d-main, as test/contract/discussions.test.ts makes it, for the checks below that read it
  expectStatus(
    await api.put("/discussions/d-main", { key: A.apiKey, json: { title: "Launch day!", url: "https://example.com/launch" } }),
    201,
  );
});

// ───────────────────────────── errors ─────────────────────────────

describe("errors", { timeout: 60_000 }, () => {
  it("malformed JSON → 400 malformed_json (problem+json with type/title/status/code/detail)", async () => {
    const res = await api.put("/discussions/d-main", { key: A.apiKey, raw: '{"title": "oops"' });
    expectProblem(res, 400, "malformed_json");
  });

  it("a body over 64 KiB → 413 payload_too_large", async () => {
    const res = await api.post("/discussions/d-main/comments", { key: A.apiKey, identity: ada, json: { body: "x".repeat(70 * 1024) } });
    expectProblem(res, 413, "payload_too_large");
  });

  it("a write with text/plain → 415 unsupported_media_type", async () => {
    const res = await api.post("/discussions/d-main/comments", {
      key: A.apiKey,
      identity: ada,
      raw: JSON.stringify({ body: "plain" }),
      contentType: "text/plain",
    });
    expectProblem(res, 415, "unsupported_media_type");
  });

  it("a write with a body and no Content-Type → 415 unsupported_media_type", async () => {
    const res = await fetch(`${BASE}/api/v1/discussions/d-main`, {
      method: "PUT",
      headers: { "x-api-key": A.apiKey },
      body: new Blob([JSON.stringify({ title: "no type" })]), // a Blob without a type sends no Content-Type
    });
    const text = await res.text();
    expect(res.status, text).toBe(415);
    expect(JSON.parse(text).code).toBe("unsupported_media_type");
  });

  it("an unknown route → 404 not_found problem; JSON with a charset parameter is accepted", async () => {
    expectProblem(await api.get("/no-such-route", { key: A.apiKey }), 404, "not_found");
    const res = await api.put("/discussions/d-charset", {
      key: A.apiKey,
      json: { title: "utf-8 ✓" },
      contentType: "application/json; charset=utf-8",
    });
    expectStatus(res, 201);
    expect(res.body.title).toBe("utf-8 ✓");
  });

  it("unknown ids → 404 not_found", async () => {
    expectProblem(await api.get("/comments/cmt_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.get("/discussions/never-created", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.get("/webhooks/wh_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.del("/keys/key_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(
      await api.post("/comments/cmt_does_not_exist/reactions", { key: A.apiKey, identity: ada, json: { kind: "like" } }),
      404,
      "not_found",
    );
  });

  it("another tenant's ids → 404 (never 403)", async () => {
    const mine = await api.post("/discussions/d-main/comments", { key: A.apiKey, identity: ada, json: { body: "tenant A only" } });
    expectStatus(mine, 201);
    const keyList = await api.get("/keys?limit=100", { key: A.apiKey });
    const aKeyId = keyList.body.items.find((k: any) => modKey.startsWith(k.prefix)).id;
    const bId = identity(B.identitySecret, "b-2", "Ben");

    expectProblem(await api.get("/discussions/d-main", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.get("/discussions/d-main/comments", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post("/discussions/d-main/lock", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.get(`/comments/${mine.body.id}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.patch(`/comments/${mine.body.id}`, { key: B.apiKey, identity: bId, json: { body: "x" } }), 404, "not_found");
    expectProblem(await api.del(`/comments/${mine.body.id}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post(`/comments/${mine.body.id}/approve`, { key: B.apiKey }), 404, "not_found");
    expectProblem(
      await api.post(`/comments/${mine.body.id}/reactions`, { key: B.apiKey, identity: bId, json: { kind: "like" } }),
      404,
      "not_found",
    );
    expectProblem(await api.del(`/keys/${aKeyId}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.del(`/admin/keys/${aKeyId}`, { admin: B.adminToken }), 404, "not_found");

    // and nothing changed on tenant A
    expect((await api.get("/discussions/d-main", { key: A.apiKey })).body.state).toBe("open");
    expect((await api.get(`/comments/${mine.body.id}`, { key: A.apiKey })).body.status).toBe("approved");
    expectStatus(await api.get("/discussions", { key: modKey }), 200);
  });

  it("active-key budget (50 per tenant) → 409 active_key_limit", async () => {
    const C = await createTenant("Budget");
    let created = 1; // the bootstrap key
    let last: Res | undefined;
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      last = await api.post("/admin/keys", { admin: C.adminToken, json: { label: `k${i}`, capabilities: [] } });
      if (last.status !== 201) break;
      ids.push(last.body.id);
      created++;
    }
    expectProblem(last!, 409, "active_key_limit");
    expect(created).toBe(50);
    const page = await api.get("/keys", { admin: C.adminToken });
    expectCollection(page);
    expect(page.body.items, "default limit 20").toHaveLength(20);
    expect(typeof page.body.nextCursor).toBe("string");
    expectStatus(await api.del(`/admin/keys/${ids[0]}`, { admin: C.adminToken }), 204);
    const soon = new Date(Date.now() + 1_000).toISOString();
    expectStatus(
      await api.post("/admin/keys", { admin: C.adminToken, json: { label: "expiring", capabilities: [], expiresAt: soon } }),
      201,
    );
    expectProblem(
      await api.post("/admin/keys", { admin: C.adminToken, json: { label: "full", capabilities: [] } }),
      409,
      "active_key_limit",
    );
    // an expired key stops counting against the budget
    await eventually(
      async () =>
        expectStatus(await api.post("/admin/keys", { admin: C.adminToken, json: { label: "after expiry", capabilities: [] } }), 201),
      5_000,
      100,
    );

    // 429 rate_limited with Retry-After and RateLimit-* headers (field name from the README)
    expectStatus(await api.patch("/settings", { key: C.apiKey, json: { rateLimits: { requestsPerMinute: 5 } } }), 200);
    let limited: Res | undefined;
    for (let i = 0; i < 20; i++) {
      const r = await api.get("/discussions", { key: C.apiKey });
      if (r.status === 429) {
        limited = r;
        break;
      }
    }
    expect(limited, "a 429 after the budget").toBeDefined();
    expectProblem(limited!, 429, "rate_limited");
    expect(limited!.headers.get("retry-after")).toMatch(/^\d+$/);
    expect([...limited!.headers.keys()].some((h) => h.toLowerCase().startsWith("ratelimit"))).toBe(true);
  });
});
