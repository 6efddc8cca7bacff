// Black-box contract suite, tenant settings and what they change (edit window, pre-moderation, body
// length, reaction kinds, identity secret rotation); analytics.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_KINDS,
  api,
  contractRun,
  expectCollection,
  expectComment,
  expectProblem,
  expectStatus,
  identity,
  res_required,
  sleep,
} from "../support/contract-client.js";

const { A, B, ada, bob, modKey, plainKey } = await contractRun();

// ───────────────────────────── settings ─────────────────────────────

describe("settings", { timeout: 30_000 }, () => {
  it("GET /settings → every contract field with its default", async () => {
    const res = await api.get("/settings", { key: A.apiKey });
    expectStatus(res, 200);
    const s = res.body;
    for (const f of ["moderation", "editWindowSeconds", "reactionKinds", "maxBodyLength", "delivery", "replay", "rateLimits"]) {
      expect(s, `settings.${f}`).toHaveProperty(f);
    }
    expect(s.moderation).toBe("post");
    expect(s.editWindowSeconds).toBe(900);
    expect([...s.reactionKinds].sort()).toEqual([...DEFAULT_KINDS].sort());
    expect(typeof s.maxBodyLength).toBe("number");
    expect(s.delivery).toEqual({
      maxAttempts: 3,
      backoffBaseMs: 1000,
      attemptTimeoutMs: 10000,
      breakerThreshold: 10,
      breakerCooldownMs: 60000,
      disableThreshold: 50,
    });
    expect(s.replay).toEqual({ maxEvents: 1000, maxAgeSeconds: 86400 });
    expect(typeof s.rateLimits).toBe("object");
  });

  it("settings without manage_settings → 403 missing_capability; admin JWT works", async () => {
    const res = await api.get("/settings", { key: modKey });
    expectProblem(res, 403, "missing_capability");
    expect(res_required(res)).toContain("manage_settings");
    expectStatus(await api.get("/settings", { admin: A.adminToken }), 200);
  });

  it("PATCH merges the fields it names; invalid values → 422", async () => {
    const before = (await api.get("/settings", { key: A.apiKey })).body;
    const res = await api.patch("/settings", { key: A.apiKey, json: { editWindowSeconds: 1 } });
    expectStatus(res, 200);
    expect(res.body).toEqual({ ...before, editWindowSeconds: 1 });
    expectProblem(await api.patch("/settings", { key: A.apiKey, json: { moderation: "sometimes" } }), 422, "validation_failed");
  });

  it("PATCH of a nested object keeps the fields it does not name (README: merged field by field)", async () => {
    const res = await api.patch("/settings", { key: A.apiKey, json: { delivery: { maxAttempts: 5 } } });
    expectStatus(res, 200);
    expect(res.body.delivery).toEqual({
      maxAttempts: 5,
      backoffBaseMs: 1000,
      attemptTimeoutMs: 10000,
      breakerThreshold: 10,
      breakerCooldownMs: 60000,
      disableThreshold: 50,
    });
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { delivery: { maxAttempts: 3 } } }), 200);
  });

  it("past the edit window → 409 edit_window_closed", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "quick" } });
    expectStatus(c, 201);
    // editWindowSeconds is 1 here (set above): wait until the window has passed, then edit once
    await sleep(Math.max(0, Date.parse(c.body.createdAt) + 1_150 - Date.now()));
    expectProblem(
      await api.patch(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada, json: { body: "late" } }),
      409,
      "edit_window_closed",
    );
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { editWindowSeconds: 900 } }), 200);
  });

  it('moderation "pre": new comments are pending and invisible in the list until approved', async () => {
    const set = await api.patch("/settings", { key: A.apiKey, json: { moderation: "pre" } });
    expectStatus(set, 200);
    expect(set.body.moderation).toBe("pre");
    try {
      const c = await api.post("/discussions/d-c/comments", { key: plainKey, identity: ada, json: { body: "needs review" } });
      expectStatus(c, 201);
      expectComment(c.body);
      expect(c.body.status).toBe("pending");

      const list = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
      expect(list.body.items.map((x: any) => x.id)).not.toContain(c.body.id);
      const asOther = await api.get(`/comments/${c.body.id}`, { key: plainKey, identity: bob });
      expect([403, 404], asOther.text).toContain(asOther.status);
      const asAuthor = await api.get(`/comments/${c.body.id}`, { key: plainKey, identity: ada });
      expectStatus(asAuthor, 200);
      const asMod = await api.get(`/comments/${c.body.id}`, { key: modKey });
      expectStatus(asMod, 200);
      const pending = await api.get("/discussions/d-c/comments?status=pending", { key: modKey });
      expectCollection(pending);
      expect(pending.body.items.map((x: any) => x.id)).toContain(c.body.id);

      expectStatus(await api.post(`/comments/${c.body.id}/approve`, { key: modKey }), 200);
      const after = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
      expect(after.body.items.map((x: any) => x.id)).toContain(c.body.id);
    } finally {
      expectStatus(await api.patch("/settings", { key: A.apiKey, json: { moderation: "post" } }), 200);
    }
  });

  it("maxBodyLength is a setting", async () => {
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { maxBodyLength: 10 } }), 200);
    try {
      expectStatus(await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "0123456789" } }), 201);
      expectProblem(
        await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "0123456789X" } }),
        422,
        "validation_failed",
      );
    } finally {
      expectStatus(await api.patch("/settings", { key: A.apiKey, json: { maxBodyLength: 10_000 } }), 200);
    }
  });

  it("reactionKinds is a setting", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "kinds" } });
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { reactionKinds: ["like", "fire"] } }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "fire" } }), 200);
    expectProblem(
      await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "love" } }),
      422,
      "validation_failed",
    );
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { reactionKinds: DEFAULT_KINDS } }), 200);
  });

  it("POST /settings/identity-secret/rotate → a new secret, shown once, in effect at once, the old one still verifying in the overlap (tenant B)", async () => {
    const res = await api.post("/settings/identity-secret/rotate", { key: B.apiKey });
    expect([200, 201], res.text).toContain(res.status);
    const secret: unknown = res.body?.identitySecret ?? res.body?.secret;
    expect(typeof secret, `a secret field in ${res.text}`).toBe("string");
    expect(secret).not.toBe(B.identitySecret);
    const fresh = identity(secret as string, "b-1", "Bea");
    expectStatus(await api.post("/discussions/b-d/comments", { key: B.apiKey, identity: fresh, json: { body: "new secret" } }), 201);
    // section 13: the secret before a rotation still verifies during the overlap (24 h by default)
    expectStatus(
      await api.post("/discussions/b-d/comments", {
        key: B.apiKey,
        identity: identity(B.identitySecret, "b-1", "Bea"),
        json: { body: "old, within the overlap" },
      }),
      201,
    );
    const again = await api.get("/settings", { key: B.apiKey });
    expect(again.text).not.toContain(secret as string);
    B.identitySecret = secret as string;
  });
});

// ───────────────────────────── analytics ─────────────────────────────

describe("analytics", () => {
  it("GET /analytics with view_analytics → 200; without → 403 missing_capability", async () => {
    const res = await api.get("/analytics", { key: A.apiKey });
    expectStatus(res, 200);
    expect(typeof res.body).toBe("object");
    // the contract lists the measures, the README names them
    for (const name of ["comments", "replies", "reactions", "activeReaders", "moderationActions", "webhookDeliveries", "ok", "failed"]) {
      expect(res.text).toContain(`"${name}"`);
    }
    expectStatus(await api.get("/analytics?interval=hour&discussionId=d-c", { key: A.apiKey }), 200);
    const denied = await api.get("/analytics", { key: modKey });
    expectProblem(denied, 403, "missing_capability");
    expect(res_required(denied)).toContain("view_analytics");
  });

  it("a bad interval → 400 invalid_parameter", async () => {
    expectProblem(await api.get("/analytics?interval=week", { key: A.apiKey }), 400, "invalid_parameter");
  });
});
