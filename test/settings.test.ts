import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, signIdentity } from "./support/fixtures.js";
import { TestGetSettingsDocument, TestRotateIdentitySecretDocument, TestUpdateSettingsDocument } from "./generated/operations.js";
import { DEFAULT_SETTINGS as MODEL_DEFAULTS } from "../src/tenancy/settings/tree.js";

/** the defaults as answered: a tenant's own SMTP server is answered too (null: none, the service's) */
const DEFAULT_SETTINGS = {
  ...MODEL_DEFAULTS,
  email: { ...MODEL_DEFAULTS.email, smtpUrl: null },
  bluesky: { ...MODEL_DEFAULTS.bluesky, appPasswordSet: false },
};
import { createRequestContext, currentReader } from "../src/context/request.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("settings", () => {
  it("GET answers every setting, defaults first", async () => {
    const t = await createTestTenant(server);
    const r = await t.api.get("/api/v1/settings");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(DEFAULT_SETTINGS);
  });

  it("PATCH merges only the named fields; nested objects field by field; lists replace", async () => {
    const t = await createTestTenant(server);
    const a = await t.api.patch("/api/v1/settings", { moderation: "pre", delivery: { maxAttempts: 5 }, reactionKinds: ["like", "clap"] });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      ...DEFAULT_SETTINGS,
      moderation: "pre",
      reactionKinds: ["like", "clap"],
      delivery: { ...DEFAULT_SETTINGS.delivery, maxAttempts: 5 },
    });
    const b = await t.admin.patch("/api/v1/settings", { delivery: { backoffBaseMs: 2000 }, replay: { maxEvents: 10 } });
    expect(b.status).toBe(200);
    expect(b.body.delivery).toEqual({ ...DEFAULT_SETTINGS.delivery, maxAttempts: 5, backoffBaseMs: 2000 });
    expect(b.body.replay).toEqual({ ...DEFAULT_SETTINGS.replay, maxEvents: 10 });
    expect(b.body.moderation).toBe("pre");
    expect((await t.api.get("/api/v1/settings")).body).toEqual(b.body);
    // an empty patch changes nothing
    expect((await t.api.patch("/api/v1/settings", {})).body).toEqual(b.body);
  });

  it("invalid → 422 listing every problem, and nothing is stored", async () => {
    const t = await createTestTenant(server);
    const r = await t.api.patch("/api/v1/settings", {
      moderation: "sometimes",
      editWindowSeconds: -1,
      reactionKinds: ["like", "Not OK"],
      delivery: { maxAttempts: 0, attemptTimeoutMs: 5 },
      stream: { heartbeatSeconds: 0 },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("validation_failed");
    expect(r.body.errors.map((e: any) => e.path).sort()).toEqual([
      "delivery.attemptTimeoutMs",
      "delivery.maxAttempts",
      "editWindowSeconds",
      "moderation",
      "reactionKinds[1]",
      "stream.heartbeatSeconds",
    ]);
    expect((await t.api.get("/api/v1/settings")).body).toEqual(DEFAULT_SETTINGS);

    const unknown = await t.api.patch("/api/v1/settings", { colour: "blue", delivery: { retries: 3 } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: any) => e.path).sort()).toEqual(["colour", "delivery.retries"]);
    const wrongType = await t.api.patch("/api/v1/settings", { editWindowSeconds: "900", replay: null });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors.map((e: any) => e.path)).toContain("editWindowSeconds");
    const nulled = await t.api.patch("/api/v1/settings", { replay: null });
    expect(nulled.status).toBe(422);
    expect(nulled.body.errors[0].path).toBe("replay");
    const notObject = await t.api.patch("/api/v1/settings", [1, 2]);
    expect(notObject.status).toBe(422);
  });

  it("concurrent patches of different fields are all kept", async () => {
    const t = await createTestTenant(server);
    const patches = [
      { moderation: "pre" },
      { editWindowSeconds: 60 },
      { maxBodyLength: 500 },
      { delivery: { maxAttempts: 7 } },
      { delivery: { breakerThreshold: 3 } },
      { rateLimits: { streamConnections: 99 } },
    ];
    const results = await Promise.all(patches.map((p) => t.api.patch("/api/v1/settings", p)));
    expect(results.map((r) => r.status)).toEqual(patches.map(() => 200));
    const s = (await t.api.get("/api/v1/settings")).body;
    expect(s).toMatchObject({
      moderation: "pre",
      editWindowSeconds: 60,
      maxBodyLength: 500,
      delivery: { maxAttempts: 7, breakerThreshold: 3, backoffBaseMs: 1000 },
      rateLimits: { streamConnections: 99, requestsPerMinute: DEFAULT_SETTINGS.rateLimits.requestsPerMinute },
    });
  });

  it("settings are per tenant", async () => {
    const t = await createTestTenant(server);
    const u = await createTestTenant(server);
    await t.api.patch("/api/v1/settings", { moderation: "pre" });
    expect((await u.api.get("/api/v1/settings")).body.moderation).toBe("post");
  });

  it("identity-secret rotation returns the new secret once; with no overlap, old assertions stop verifying", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { identity: { secretOverlapHours: 0 } })).status).toBe(200);
    const services = server.app.runtime.services;
    const readerWith = async (token: string) =>
      currentReader(await createRequestContext(services, { "x-api-key": t.apiKey, "x-service-identity": token }));
    const oldToken = await t.identity("reader-1");
    await expect(readerWith(oldToken)).resolves.toMatchObject({ id: "reader-1" });

    const r = await t.api.post("/api/v1/settings/identity-secret/rotate");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["identitySecret", "kid", "previousSecretExpiresAt"]);
    expect(r.body.previousSecretExpiresAt).toBeNull();
    expect(r.body.identitySecret).toMatch(/^is_[0-9a-f]{64}$/);
    expect(r.body.identitySecret).not.toBe(t.identitySecret);
    expect(JSON.stringify((await t.api.get("/api/v1/settings")).body)).not.toContain(r.body.identitySecret);

    await expect(readerWith(oldToken)).rejects.toMatchObject({ code: "invalid_identity", status: 401 });
    const newToken = await signIdentity(r.body.identitySecret, "reader-1");
    await expect(readerWith(newToken)).resolves.toMatchObject({ id: "reader-1" });

    // over HTTP: a reader write with the old assertion is refused, with the new one accepted
    await t.api.put("/api/v1/discussions/rotation", {});
    const stale = await t.api.post("/api/v1/discussions/rotation/comments", { body: "hi" }, { identity: oldToken });
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe("invalid_identity");
    const fresh = await t.api.post("/api/v1/discussions/rotation/comments", { body: "hi" }, { identity: newToken });
    expect(fresh.status).toBe(201);
  });

  it("GraphQL exposes settings as typed objects", async () => {
    const t = await createTestTenant(server);
    const got = await t.api.gql(TestGetSettingsDocument);
    expect(got.data?.settings).toMatchObject({ moderation: "post", delivery: { maxAttempts: 3 }, rateLimits: { requestsPerMinute: 6000 } });
    const upd = await t.api.gql(TestUpdateSettingsDocument, { input: { moderation: "pre", delivery: { backoffBaseMs: 10 } } });
    expect(upd.data?.updateSettings).toMatchObject({ moderation: "pre", delivery: { maxAttempts: 3, backoffBaseMs: 10 } });
    const bad = await t.api.gql(TestUpdateSettingsDocument, { input: { editWindowSeconds: -5 } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "validation_failed", errors: [{ path: "editWindowSeconds" }] });
    const rotated = await t.api.gql(TestRotateIdentitySecretDocument);
    expect(rotated.data?.rotateIdentitySecret.identitySecret).toMatch(/^is_/);
  });
});
