// Black-box contract suite, API keys: creation (admin JWT and manage_api_keys), capability
// escalation, listing, revocation, expiry.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ISO_MS,
  type Tenant,
  api,
  contractTenants,
  eventually,
  expectCollection,
  expectProblem,
  expectStatus,
  res_required,
} from "../support/contract-client.js";

let A: Tenant;
let modKey = "";
let plainKey = "";
let mgrKey = "";

beforeAll(async () => {
  ({ A } = await contractTenants());
});

// ───────────────────────────── keys ─────────────────────────────

describe("API keys", { timeout: 60_000 }, () => {
  let tempKeyId = "";
  let tempKey = "";

  it("POST /admin/keys (admin JWT) → 201 with id, key (ek_+64 hex), prefix (12 chars), label, capabilities, expiresAt, createdAt", async () => {
    const res = await api.post("/admin/keys", {
      admin: A.adminToken,
      json: { label: "moderation bot", capabilities: ["moderate_content"], expiresAt: null },
    });
    expectStatus(res, 201);
    expect(Object.keys(res.body).sort()).toEqual(["capabilities", "createdAt", "expiresAt", "id", "key", "label", "prefix"]);
    expect(typeof res.body.id).toBe("string");
    expect(res.body.key).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(res.body.prefix).toBe(res.body.key.slice(0, 12));
    expect(res.body.label).toBe("moderation bot");
    expect(res.body.capabilities).toEqual(["moderate_content"]);
    expect(res.body.expiresAt).toBeNull();
    expect(res.body.createdAt).toMatch(ISO_MS);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    modKey = res.body.key;
  });

  it("POST /keys with a manage_api_keys key → 201 (also with no capabilities)", async () => {
    const plain = await api.post("/keys", { key: A.apiKey, json: { label: "publisher", capabilities: [], expiresAt: null } });
    expectStatus(plain, 201);
    expect(plain.body.key).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(plain.body.prefix).toBe(plain.body.key.slice(0, 12));
    expect(plain.body.capabilities).toEqual([]);
    plainKey = plain.body.key;

    const mgr = await api.post("/keys", { key: A.apiKey, json: { label: "key manager", capabilities: ["manage_api_keys"] } });
    expectStatus(mgr, 201);
    expect(mgr.body.capabilities).toEqual(["manage_api_keys"]);
    mgrKey = mgr.body.key;
  });

  it("a key may only grant capabilities it holds → 403 capability_escalation", async () => {
    const res = await api.post("/keys", { key: mgrKey, json: { label: "escalate", capabilities: ["moderate_content"] } });
    expectProblem(res, 403, "capability_escalation");
    // granting what it holds is fine
    const ok = await api.post("/keys", { key: mgrKey, json: { label: "same caps", capabilities: ["manage_api_keys"] } });
    expectStatus(ok, 201);
    tempKeyId = ok.body.id;
    tempKey = ok.body.key;
  });

  it("POST /keys without manage_api_keys → 403 missing_capability naming `required`", async () => {
    const res = await api.post("/keys", { key: modKey, json: { label: "x", capabilities: [] } });
    expectProblem(res, 403, "missing_capability");
    expect(res.body.required).toBeDefined();
    expect(JSON.stringify(res.body.required)).toContain("manage_api_keys");
  });

  it("unknown capability → 422 validation_failed; `errors` lists every problem", async () => {
    const res = await api.post("/keys", { key: A.apiKey, json: { label: "x", capabilities: ["fly"] } });
    expectProblem(res, 422, "validation_failed");
    expect(Array.isArray(res.body.errors)).toBe(true);
    expect(res.body.errors.length).toBeGreaterThanOrEqual(1);
    for (const e of res.body.errors) {
      expect(typeof e.path).toBe("string");
      expect(typeof e.message).toBe("string");
    }
    const two = await api.post("/keys", { key: A.apiKey, json: { label: "", capabilities: ["fly"] } });
    expectProblem(two, 422, "validation_failed");
    expect(two.body.errors.length).toBeGreaterThanOrEqual(2);
  });

  it("a label over 100 chars → 422; key routes without manage_api_keys → 403 missing_capability", async () => {
    expectProblem(await api.post("/keys", { key: A.apiKey, json: { label: "l".repeat(101), capabilities: [] } }), 422, "validation_failed");
    const list = await api.get("/keys", { key: plainKey });
    expectProblem(list, 403, "missing_capability");
    expect(res_required(list)).toContain("manage_api_keys");
    expectProblem(await api.del("/keys/anything", { key: modKey }), 403, "missing_capability");
  });

  it("GET /keys lists keys without raw values, with `state` and `lastUsedAt`", async () => {
    const res = await api.get("/keys", { key: A.apiKey });
    expectCollection(res);
    expect(res.body.items.length).toBeGreaterThanOrEqual(4);
    for (const k of res.body.items) {
      expect(typeof k.id).toBe("string");
      expect(typeof k.prefix).toBe("string");
      expect(k.prefix).toMatch(/^ek_[0-9a-f]{9}$/);
      expect(typeof k.label).toBe("string");
      expect(Array.isArray(k.capabilities)).toBe(true);
      expect(["active", "expired", "revoked"]).toContain(k.state);
      expect(k).toHaveProperty("lastUsedAt");
      expect(k.lastUsedAt === null || ISO_MS.test(k.lastUsedAt)).toBe(true);
    }
    for (const raw of [A.apiKey, modKey, plainKey, mgrKey]) expect(res.text).not.toContain(raw);
    // the bootstrap key has been used: its lastUsedAt gets recorded
    await eventually(
      async () => {
        const r = await api.get("/keys?limit=100", { admin: A.adminToken });
        const first = r.body.items.find((k: any) => A.apiKey.startsWith(k.prefix));
        expect(first?.lastUsedAt).toMatch(ISO_MS);
      },
      15_000,
      500,
    );
  });

  it("DELETE /keys/{id} → 204, then the key is refused with 401 key_revoked and listed as revoked", async () => {
    expectStatus(await api.get("/discussions", { key: tempKey }), 200);
    const del = await api.del(`/keys/${tempKeyId}`, { key: mgrKey });
    expectStatus(del, 204);
    expect(del.text).toBe("");
    expectProblem(await api.get("/discussions", { key: tempKey }), 401, "key_revoked");
    const list = await api.get("/keys?limit=100", { key: A.apiKey });
    expect(list.body.items.find((k: any) => k.id === tempKeyId)?.state).toBe("revoked");
  });

  it("DELETE /admin/keys/{id} (admin JWT) → 204, then 401 key_revoked", async () => {
    const k = await api.post("/admin/keys", { admin: A.adminToken, json: { label: "short lived", capabilities: [] } });
    expectStatus(k, 201);
    expectStatus(await api.get("/discussions", { key: k.body.key }), 200);
    expectStatus(await api.del(`/admin/keys/${k.body.id}`, { admin: A.adminToken }), 204);
    expectProblem(await api.get("/discussions", { key: k.body.key }), 401, "key_revoked");
  });

  it("/admin/* routes refuse an API key (admin JWT only)", async () => {
    const post = await api.post("/admin/keys", { key: A.apiKey, json: { label: "nope", capabilities: [] } });
    expect([401, 403], post.text).toContain(post.status);
    expect(post.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const del = await api.del(`/admin/keys/does-not-matter`, { key: A.apiKey });
    expect([401, 403], del.text).toContain(del.status);
  });

  it("a key past expiresAt → 401 key_expired and state expired", async () => {
    const expiresAt = new Date(Date.now() + 1_000).toISOString();
    const k = await api.post("/keys", { key: A.apiKey, json: { label: "expiring", capabilities: [], expiresAt } });
    expectStatus(k, 201);
    expect(k.body.expiresAt).toMatch(ISO_MS);
    expect(Date.parse(k.body.expiresAt)).toBe(Date.parse(expiresAt));
    expectStatus(await api.get("/discussions", { key: k.body.key }), 200);
    await eventually(async () => expectProblem(await api.get("/discussions", { key: k.body.key }), 401, "key_expired"), 5_000, 100);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    const list = await api.get("/keys?limit=100", { key: A.apiKey });
    expect(list.body.items.find((x: any) => x.id === k.body.id)?.state).toBe("expired");
  });
});
