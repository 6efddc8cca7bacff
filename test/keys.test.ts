import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TestCreateApiKeyDocument, TestListApiKeysDocument, TestRevokeApiKeyDocument } from "./generated/operations.js";
import { ACTIVE_KEY_LIMIT } from "../src/modules/keys/keys.js";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  other = await createTestTenant(server);
});
afterAll(() => server?.stop());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function newKey(tenant: TestTenant, capabilities: string[] = [], extra: Record<string, unknown> = {}) {
  const r = await tenant.api.post("/api/v1/keys", { label: "k", capabilities, ...extra });
  expect(r.status).toBe(201);
  return r.body as { id: string; key: string; prefix: string };
}

describe("creating keys", () => {
  it("POST /keys → 201 with the raw key once, prefix = first 12 chars; the key works", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const r = await t.api.post("/api/v1/keys", { label: "  Publisher  ", capabilities: ["moderate_content"], expiresAt });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["capabilities", "createdAt", "expiresAt", "id", "key", "label", "prefix"]);
    expect(r.body.key).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(r.body.prefix).toBe(r.body.key.slice(0, 12));
    expect(r.body).toMatchObject({ label: "Publisher", capabilities: ["moderate_content"], expiresAt });
    expect(r.body.createdAt).toMatch(ISO_MS);
    const use = await t.as({ key: r.body.key }).put("/api/v1/discussions/by-new-key", {});
    expect(use.status).toBe(201);
  });

  it("POST /admin/keys takes the admin JWT only, and creates through the same rules", async () => {
    const r = await t.admin.post("/api/v1/admin/keys", {
      label: "console",
      capabilities: ["view_analytics", "manage_settings"],
      expiresAt: null,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ label: "console", capabilities: ["view_analytics", "manage_settings"], expiresAt: null });
    const withKey = await t.api.post("/api/v1/admin/keys", { label: "x", capabilities: [] });
    expect(withKey.status).toBe(401);
    expect(withKey.body.code).toBe("unauthenticated");
    const invalid = await t.admin.post("/api/v1/admin/keys", { label: "", capabilities: ["root"] });
    expect(invalid.status).toBe(422);
  });

  it("capabilities default to none; duplicates collapse", async () => {
    const none = await t.api.post("/api/v1/keys", { label: "bare" });
    expect(none.status).toBe(201);
    expect(none.body.capabilities).toEqual([]);
    const dup = await t.api.post("/api/v1/keys", { label: "dup", capabilities: ["view_analytics", "view_analytics"] });
    expect(dup.body.capabilities).toEqual(["view_analytics"]);
  });

  it("422 lists every problem: label, unknown capability, expiresAt in the past or not ISO", async () => {
    const r = await t.api.post("/api/v1/keys", {
      label: "x".repeat(101),
      capabilities: ["moderate_content", "root"],
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("validation_failed");
    expect(r.body.errors.map((e: any) => e.path).sort()).toEqual(["capabilities[1]", "expiresAt", "label"]);
    const notIso = await t.api.post("/api/v1/keys", { label: "ok", expiresAt: "next tuesday" });
    expect(notIso.status).toBe(422);
    expect(notIso.body.errors).toEqual([{ path: "expiresAt", message: expect.any(String) }]);
    const missing = await t.api.post("/api/v1/keys", { capabilities: [] });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: "label", message: "is required" }]);
    const unknownField = await t.api.post("/api/v1/keys", { label: "ok", scopes: ["x"] });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.errors).toEqual([{ path: "scopes", message: "is not a known field" }]);
  });

  it("a key may only grant capabilities it holds (403 capability_escalation)", async () => {
    const manager = await newKey(t, ["manage_api_keys", "view_analytics"]);
    const m = t.as({ key: manager.key });
    const up = await m.post("/api/v1/keys", { label: "escalate", capabilities: ["view_analytics", "moderate_content", "manage_settings"] });
    expect(up.status).toBe(403);
    expect(up.body.code).toBe("capability_escalation");
    expect(up.body.capabilities).toEqual(["moderate_content", "manage_settings"]);
    const same = await m.post("/api/v1/keys", { label: "ok", capabilities: ["view_analytics", "manage_api_keys"] });
    expect(same.status).toBe(201);
    expect((await m.post("/api/v1/keys", { label: "none", capabilities: [] })).status).toBe(201);
  });
});

describe("listing and revoking", () => {
  it("lists with state, lastUsedAt and prefix; never the raw key or its hash; paginates", async () => {
    const created = await newKey(t, ["view_analytics"]);
    const r = await t.api.get("/api/v1/keys?limit=100");
    expect(r.status).toBe(200);
    const item = r.body.items.find((k: any) => k.id === created.id);
    expect(item).toMatchObject({
      id: created.id,
      prefix: created.prefix,
      label: "k",
      capabilities: ["view_analytics"],
      state: "active",
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(Object.keys(item)).not.toContain("key");
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(created.key);
    expect(text).not.toMatch(/keyHash|[0-9a-f]{64}/);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.api.get(`/api/v1/keys?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((k: any) => k.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(r.body.items.length);
    expect((await t.api.get("/api/v1/keys?limit=0")).status).toBe(400);
  });

  it("DELETE /keys/{id} → 204; the key is refused on the next request (key_revoked); idempotent", async () => {
    const k = await newKey(t);
    const use = t.as({ key: k.key });
    expect((await use.get("/api/v1/discussions")).status).toBe(200);
    const del = await t.api.del(`/api/v1/keys/${k.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    const after = await use.get("/api/v1/discussions");
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("key_revoked");
    expect((await t.api.del(`/api/v1/keys/${k.id}`)).status).toBe(204);
    const list = await t.api.get("/api/v1/keys?limit=100");
    expect(list.body.items.find((x: any) => x.id === k.id)).toMatchObject({ state: "revoked", revokedAt: expect.stringMatching(ISO_MS) });
    expect((await t.api.del("/api/v1/keys/key_doesnotexist")).status).toBe(404);
  });

  it("DELETE /admin/keys/{id} takes the admin JWT only", async () => {
    const k = await newKey(t);
    expect((await t.api.del(`/api/v1/admin/keys/${k.id}`)).status).toBe(401);
    expect((await t.admin.del(`/api/v1/admin/keys/${k.id}`)).status).toBe(204);
    expect((await t.as({ key: k.key }).get("/api/v1/discussions")).body.code).toBe("key_revoked");
  });

  it("another tenant's keys are invisible (404 on delete, absent from the list)", async () => {
    const mine = await newKey(t);
    expect((await other.api.del(`/api/v1/keys/${mine.id}`)).status).toBe(404);
    expect((await other.admin.del(`/api/v1/admin/keys/${mine.id}`)).status).toBe(404);
    const list = await other.api.get("/api/v1/keys?limit=100");
    expect(list.body.items.map((k: any) => k.id)).not.toContain(mine.id);
    expect((await t.as({ key: mine.key }).get("/api/v1/discussions")).status).toBe(200);
  });
});

describe("active-key budget", () => {
  it(`allows ${ACTIVE_KEY_LIMIT} active keys; revoked keys stop counting (409 active_key_limit)`, async () => {
    const b = await createTestTenant(server); // holds the bootstrap key
    const ids: string[] = [];
    for (let i = 1; i < ACTIVE_KEY_LIMIT; i++) ids.push((await newKey(b)).id);
    const over = await b.api.post("/api/v1/keys", { label: "one too many", capabilities: [] });
    expect(over.status).toBe(409);
    expect(over.body.code).toBe("active_key_limit");
    expect((await b.admin.post("/api/v1/admin/keys", { label: "admin too", capabilities: [] })).status).toBe(409);
    expect((await b.api.del(`/api/v1/keys/${ids[0]}`)).status).toBe(204);
    expect((await b.api.post("/api/v1/keys", { label: "fits again", capabilities: [] })).status).toBe(201);
  });

  it("is exact under concurrent creation", async () => {
    const c = await createTestTenant(server);
    const attempts = ACTIVE_KEY_LIMIT + 15;
    const results = await Promise.all(
      Array.from({ length: attempts }, (_, i) => c.api.post("/api/v1/keys", { label: `race-${i}`, capabilities: [] })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBe(ACTIVE_KEY_LIMIT - 1);
    expect(statuses.filter((s) => s === 409).length).toBe(attempts - (ACTIVE_KEY_LIMIT - 1));
    const active = await server.app.runtime.services.prisma.apiKey.count({ where: { tenantId: c.tenantId, revokedAt: null } });
    expect(active).toBe(ACTIVE_KEY_LIMIT);
  });
});

describe("GraphQL", () => {
  it("createApiKey / apiKeys / revokeApiKey with the same rules and extensions.code", async () => {
    const created = await t.api.gql(TestCreateApiKeyDocument, { input: { label: "gql", capabilities: ["view_analytics"] } });
    expect(created.errors).toBeUndefined();
    const ck = created.data!.createApiKey;
    expect(ck.key).toMatch(/^ek_/);
    expect(ck.apiKey).toMatchObject({ label: "gql", capabilities: ["view_analytics"], state: "active", expiresAt: null });
    const list = await t.api.gql(TestListApiKeysDocument, { limit: 100 });
    expect(list.data!.apiKeys.items.map((k) => k.id)).toContain(ck.apiKey.id);
    const revoked = await t.api.gql(TestRevokeApiKeyDocument, { id: ck.apiKey.id });
    expect(revoked.data!.revokeApiKey).toMatchObject({ id: ck.apiKey.id, state: "revoked" });
    const weak = await newKey(t, ["view_analytics"]);
    const denied = await t.as({ key: weak.key }).gql(TestCreateApiKeyDocument, { input: { label: "x" } });
    expect(denied.errors?.[0]?.extensions).toMatchObject({ code: "missing_capability", required: "manage_api_keys" });
    const invalid = await t.api.gql(TestCreateApiKeyDocument, { input: { label: "", capabilities: ["root"] } });
    expect(invalid.errors?.[0]?.extensions?.code).toBe("validation_failed");
  });
});
