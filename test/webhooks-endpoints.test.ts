// Webhook endpoints: registration, handshake, verification, url rules, secrets, capabilities.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "engagement-service";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { eventually, okResponder, startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, startWebhookServer } from "./support/receiver-app.js";
import { manualClock } from "../src/lib/clock.js";
import { isolatedDatabase } from "./support/database.js";
import { TestEnableWebhookDocument, TestWebhooksDocument } from "./generated/operations.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const hmac = (secret: string, ts: string, raw: string) => createHmac("sha256", secret).update(`${ts}.${raw}`).digest("hex");

let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let receiver: Receiver;

const settled = () => server.app.runtime.services.webhooks.settled();

beforeAll(async () => {
  server = await startWebhookServer();
  t = await createTestTenant(server);
  other = await createTestTenant(server);
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

describe("webhook registration and handshake", () => {
  it("creates: 201 with the secret once and verified false, then a signed handshake verifies it", async () => {
    const r = await startReceiver();
    const res = await t.api.post("/api/v1/webhooks", { url: r.url, events: ["comment_created", "discussion_locked"], description: "CMS" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(
      expect.arrayContaining(["webhookId", "url", "events", "verified", "state", "secret", "kid", "createdAt", "description", "delivery"]),
    );
    expect(res.body).toMatchObject({
      url: r.url,
      events: ["comment_created", "discussion_locked"],
      verified: false,
      state: "active",
      description: "CMS",
      delivery: {},
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(res.body.kid).toMatch(/^[0-9a-f]{8}$/);
    expect(res.body.createdAt).toMatch(ISO);

    await r.waitFor((reqs) => reqs.length >= 1);
    const hs = r.handshakes()[0]!;
    expect(hs.method).toBe("POST");
    expect(hs.headers["content-type"]).toBe("application/json");
    expect(hs.headers["x-service-event"]).toBe("verification");
    expect(hs.json).toEqual({
      type: "verification",
      challenge: expect.stringMatching(/^[0-9a-f]{64}$/),
      timestamp: expect.stringMatching(ISO),
    });
    const ts = hs.headers["x-service-timestamp"] as string;
    const sig = hs.headers["x-service-signature"] as string;
    expect(sig).toBe(`t=${Math.floor(Date.parse(ts) / 1000)},v1=${hmac(res.body.secret, ts, hs.raw)},kid=${res.body.kid}`);

    const id = res.body.webhookId;
    await eventually(async () => (await t.api.get(`/api/v1/webhooks/${id}`)).body.verified);
    const got = await t.api.get(`/api/v1/webhooks/${id}`);
    expect(got.body).toMatchObject({ webhookId: id, verified: true, state: "active", kid: res.body.kid, previousKids: [] });
    expect(got.body.secret).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(res.body.secret);
    const list = await t.api.get("/api/v1/webhooks?limit=100");
    expect(list.body.items.map((e: any) => e.webhookId)).toContain(id);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    const stored = await server.app.runtime.services.prisma.webhookSecret.findMany({ where: { endpointId: id } });
    expect(stored[0]!.secretEnc).not.toContain(res.body.secret);
    await r.close();
  });

  it("stays unverified on a wrong challenge, a non-200 or a timeout; /verify reports why and re-verifies", async () => {
    const r = await startReceiver(() => ({ status: 200, body: { challenge: "nope" } }));
    const res = await t.api.post("/api/v1/webhooks", { url: r.url, events: ["*"] });
    await r.waitFor((reqs) => reqs.length >= 1);
    await settled();
    const id = res.body.webhookId;
    expect((await t.api.get(`/api/v1/webhooks/${id}`)).body.verified).toBe(false);

    const wrong = await t.api.post(`/api/v1/webhooks/${id}/verify`);
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ verified: false, error: expect.stringContaining("challenge") });

    r.respond = (req) => ({ status: 201, body: { challenge: req.json.challenge } });
    const non200 = await t.api.post(`/api/v1/webhooks/${id}/verify`);
    expect(non200.body).toEqual({ verified: false, error: expect.stringContaining("HTTP 201") });

    r.respond = () => ({ status: 200, body: "not json" });
    expect((await t.api.post(`/api/v1/webhooks/${id}/verify`)).body.verified).toBe(false);

    r.respond = () => ({ hang: true });
    const started = Date.now();
    const timedOut = await t.api.post(`/api/v1/webhooks/${id}/verify`);
    expect(timedOut.body).toEqual({ verified: false, error: expect.stringContaining("timeout") });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900); // handshakeTimeoutMs = 3000 in tests
    r.release();

    r.respond = okResponder;
    const ok = await t.api.post(`/api/v1/webhooks/${id}/verify`);
    expect(ok.body).toEqual({ verified: true });
    expect((await t.api.get(`/api/v1/webhooks/${id}`)).body.verified).toBe(true);

    // verify on a now-failing receiver: unverified first, so it ends unverified
    r.respond = () => ({ status: 500 });
    expect((await t.api.post(`/api/v1/webhooks/${id}/verify`)).body.verified).toBe(false);
    expect((await t.api.get(`/api/v1/webhooks/${id}`)).body.verified).toBe(false);
    await r.close();
  });

  it("a url change makes the endpoint unverified and re-runs the handshake against the new url", async () => {
    const a = await startReceiver();
    const b = await startReceiver((req) => (req.event === "verification" ? { hang: true } : { status: 200 }));
    const { webhookId } = await createVerifiedEndpoint(t, a);
    const patched = await t.api.patch(`/api/v1/webhooks/${webhookId}`, { url: b.url, description: "moved" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ url: b.url, verified: false, description: "moved" });
    await b.waitFor((reqs) => reqs.length === 1);
    expect((await t.api.get(`/api/v1/webhooks/${webhookId}`)).body.verified).toBe(false);
    b.release(); // answers 200 without the challenge: still unverified
    await settled();
    expect((await t.api.get(`/api/v1/webhooks/${webhookId}`)).body.verified).toBe(false);

    b.respond = okResponder;
    const c = await t.api.patch(`/api/v1/webhooks/${webhookId}`, { url: `${b.url}?v=2` });
    expect(c.body.verified).toBe(false);
    await eventually(async () => (await t.api.get(`/api/v1/webhooks/${webhookId}`)).body.verified);

    // other fields do not touch verification; a same-url PATCH runs no handshake
    const handshakes = b.handshakes().length;
    const same = await t.api.patch(`/api/v1/webhooks/${webhookId}`, {
      url: `${b.url}?v=2`,
      events: ["comment_created"],
      delivery: { maxAttempts: 5 },
    });
    expect(same.body).toMatchObject({ verified: true, events: ["comment_created"], delivery: { maxAttempts: 5 } });
    const cleared = await t.api.patch(`/api/v1/webhooks/${webhookId}`, {
      delivery: { maxAttempts: null, backoffBaseMs: 10 },
      description: null,
    });
    expect(cleared.body).toMatchObject({ delivery: { backoffBaseMs: 10 }, description: null });
    await settled();
    expect(b.handshakes().length).toBe(handshakes);
    await a.close();
    await b.close();
  });

  it("sends nothing to an unverified endpoint, silently", async () => {
    const r = await startReceiver((req) => (req.event === "verification" ? { status: 404 } : { status: 200 }));
    const res = await t.api.post("/api/v1/webhooks", { url: r.url, events: ["*"] });
    await r.waitFor((reqs) => reqs.length === 1);
    await settled();
    await makeEvents(server, t, "unverified-1", 3);
    await new Promise((ok) => setTimeout(ok, 300));
    expect(r.deliveries()).toEqual([]);
    const jobs = await server.app.runtime.services.prisma.webhookDelivery.count({ where: { endpointId: res.body.webhookId } });
    expect(jobs).toBe(0);
    await r.close();
  });

  it("validates fields: event names, url, delivery overrides (422 listing every problem)", async () => {
    const bad = await t.api.post("/api/v1/webhooks", { url: receiver.url, events: ["comment_created", "nope", "notification_reply"] });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_failed");
    expect(bad.body.errors.map((e: any) => e.path)).toEqual(["events[1]", "events[2]"]);
    const star = await t.api.post("/api/v1/webhooks", { url: receiver.url, events: ["*", "comment_created"] });
    expect(star.status).toBe(422);
    const missing = await t.api.post("/api/v1/webhooks", { delivery: { maxAttempts: 0 } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: any) => e.path).sort()).toEqual(["delivery.maxAttempts", "events", "url"]);
    const unknownField = await t.api.post("/api/v1/webhooks", { url: receiver.url, events: ["*"], secret: "mine" });
    expect(unknownField.status).toBe(422);
    const empty = await t.api.post("/api/v1/webhooks", { url: receiver.url, events: [] });
    expect(empty.status).toBe(422);
  });

  it("delete answers 204 and the endpoint is gone", async () => {
    const { webhookId } = await createVerifiedEndpoint(t, receiver);
    expect((await t.api.del(`/api/v1/webhooks/${webhookId}`)).status).toBe(204);
    expect((await t.api.get(`/api/v1/webhooks/${webhookId}`)).status).toBe(404);
    expect((await t.api.del(`/api/v1/webhooks/${webhookId}`)).status).toBe(404);
  });
});

describe("url rules (SSRF)", () => {
  it("refuses non-https, private, link-local and metadata addresses with 422 on url", async () => {
    for (const url of [
      "http://example.com/hook",
      "ftp://example.com/hook",
      "https://user:pw@example.com/hook",
      "https://10.0.0.1/hook",
      "https://192.168.1.20/hook",
      "https://172.16.5.4/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[fe80::1]/hook",
      "https://[fd00:ec2::254]/hook",
      "https://100.64.0.1/hook",
      "https://0.0.0.0/hook",
      "not a url",
    ]) {
      const res = await t.api.post("/api/v1/webhooks", { url, events: ["*"] });
      expect(res.status, url).toBe(422);
      expect(res.body.errors, url).toEqual([{ path: "url", message: expect.any(String) }]);
    }
  });

  it("without ALLOW_HTTP_WEBHOOKS refuses loopback (http and https); the allow-list admits private ranges", async () => {
    const strict = await startWebhookServer({ ALLOW_HTTP_WEBHOOKS: "0", RUN_WEBHOOK_WORKER: "0", WEBHOOK_ALLOWLIST: "10.20.0.0/16" });
    try {
      const s = await createTestTenant(strict);
      for (const url of [receiver.url, receiver.url.replace("http:", "https:"), "https://localhost/hook", "https://[::1]/hook"]) {
        const res = await s.api.post("/api/v1/webhooks", { url, events: ["*"] });
        expect(res.status, url).toBe(422);
      }
      const allowed = await s.api.post("/api/v1/webhooks", { url: "https://10.20.1.2/hook", events: ["*"] });
      expect(allowed.status).toBe(201);
      expect((await s.api.post("/api/v1/webhooks", { url: "https://10.21.1.2/hook", events: ["*"] })).status).toBe(422);
      // a PATCH to a refused url is refused too
      const patched = await s.api.patch(`/api/v1/webhooks/${allowed.body.webhookId}`, { url: "https://169.254.169.254/" });
      expect(patched.status).toBe(422);
    } finally {
      await strict.stop();
    }
  });
});

describe("secrets", () => {
  it("rotation: the new kid signs, the old one stays listed as valid for 24 h (clock)", async () => {
    const clock = manualClock(new Date());
    // its own database: once this worker's clock is a day ahead, on the shared one it would take
    // every other file's waiting retries (and expired-looking leases) and send them at once
    const db = await isolatedDatabase("rotation");
    const s = await startWebhookServer({ DATABASE_URL: db.url }, { clock });
    const r = await startReceiver();
    try {
      const tt = await createTestTenant(s);
      const first = await createVerifiedEndpoint(tt, r, { events: ["discussion_locked", "discussion_unlocked"] });
      await makeEvents(s, tt, "rot-1", 1);
      await r.waitFor(() => r.deliveries().length === 1);
      const d1 = r.deliveries()[0]!;
      expect(d1.headers["x-service-signature"]).toMatch(new RegExp(`,kid=${first.kid}$`));
      const at1 = new Date(d1.headers["x-service-timestamp"] as string);
      expect(verifyWebhook(d1.headers, d1.raw, [{ kid: first.kid, secret: first.secret }], { now: at1 })).toEqual({
        ok: true,
        kid: first.kid,
      });

      const rot = await tt.api.post(`/api/v1/webhooks/${first.webhookId}/rotate-secret`);
      expect(rot.status).toBe(200);
      expect(Object.keys(rot.body).sort()).toEqual(["kid", "previousKidValidUntil", "secret", "standardWebhooksSecret"]);
      expect(rot.body.kid).toMatch(/^[0-9a-f]{8}$/);
      expect(rot.body.kid).not.toBe(first.kid);
      expect(rot.body.secret).not.toBe(first.secret);
      const until = new Date(clock.now().getTime() + 24 * 3600 * 1000).toISOString();
      expect(rot.body.previousKidValidUntil).toBe(until);
      const got = await tt.api.get(`/api/v1/webhooks/${first.webhookId}`);
      expect(got.body).toMatchObject({ kid: rot.body.kid, previousKids: [{ kid: first.kid, validUntil: until }] });

      await makeEvents(s, tt, "rot-1", 1);
      await r.waitFor(() => r.deliveries().length === 2);
      const d2 = r.deliveries()[1]!;
      const ts2 = d2.headers["x-service-timestamp"] as string;
      expect(d2.headers["x-service-signature"]).toBe(
        `t=${Math.floor(Date.parse(ts2) / 1000)},v1=${hmac(rot.body.secret, ts2, d2.raw)},kid=${rot.body.kid}`,
      );
      const both = [
        { kid: first.kid, secret: first.secret },
        { kid: rot.body.kid, secret: rot.body.secret },
      ];
      const now2 = new Date(ts2);
      expect(verifyWebhook(d2.headers, d2.raw, both, { now: now2 })).toEqual({ ok: true, kid: rot.body.kid });
      expect(verifyWebhook(d1.headers, d1.raw, both, { now: at1 })).toEqual({ ok: true, kid: first.kid });
      expect(verifyWebhook(d2.headers, d2.raw, [both[0]!], { now: now2 })).toEqual({ ok: false, reason: "unknown_kid" });
      expect(verifyWebhook(d2.headers, d2.raw, both, { now: new Date(now2.getTime() + 301_000) })).toEqual({
        ok: false,
        reason: "timestamp_out_of_tolerance",
      });

      clock.advance(24 * 3600 * 1000 - 1);
      expect((await tt.api.get(`/api/v1/webhooks/${first.webhookId}`)).body.previousKids).toHaveLength(1);
      clock.advance(2);
      expect((await tt.api.get(`/api/v1/webhooks/${first.webhookId}`)).body.previousKids).toEqual([]);
    } finally {
      await s.stop();
      await r.close();
      await db.drop();
    }
  });
});

describe("access", () => {
  it("needs manage_webhooks (403 missing_capability) or the admin JWT; enable takes the admin JWT only", async () => {
    const { webhookId } = await createVerifiedEndpoint(t, receiver);
    const weak = t.as({ key: (await keyWith(t, ["moderate_content", "manage_settings"])).key });
    const strong = t.as({ key: (await keyWith(t, ["manage_webhooks"])).key });
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/v1/webhooks"],
      ["POST", "/api/v1/webhooks", { url: receiver.url, events: ["*"] }],
      ["GET", `/api/v1/webhooks/${webhookId}`],
      ["PATCH", `/api/v1/webhooks/${webhookId}`, { description: "x" }],
      ["POST", `/api/v1/webhooks/${webhookId}/verify`],
      ["POST", `/api/v1/webhooks/${webhookId}/rotate-secret`],
      ["GET", `/api/v1/webhooks/${webhookId}/deliveries`],
      ["POST", `/api/v1/webhooks/${webhookId}/redeliver`, { since: new Date(0).toISOString() }],
      ["DELETE", `/api/v1/webhooks/${webhookId}`],
    ];
    for (const [method, path, body] of calls) {
      const res = await weak.raw(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ code: "missing_capability", required: "manage_webhooks" });
      const anon = await t.as({}).raw(method, path, body);
      expect(anon.status, `${method} ${path}`).toBe(401);
    }
    for (const [method, path, body] of calls.slice(0, -1)) {
      expect((await strong.raw(method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
      expect((await t.admin.raw(method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
    }
    const gql = await weak.gql(TestWebhooksDocument, { limit: 5 });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "missing_capability", required: "manage_webhooks" });

    expect((await t.api.post(`/api/v1/admin/webhooks/${webhookId}/enable`)).status).toBe(401);
    expect((await strong.gql(TestEnableWebhookDocument, { webhookId })).errors?.[0]?.extensions?.code).toBe("unauthenticated");
    const enabled = await t.admin.post(`/api/v1/admin/webhooks/${webhookId}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ webhookId, state: "active" });
  });

  it("is invisible across tenants (404, never 403)", async () => {
    const { webhookId } = await createVerifiedEndpoint(t, receiver);
    for (const [method, path, body] of [
      ["GET", `/api/v1/webhooks/${webhookId}`],
      ["PATCH", `/api/v1/webhooks/${webhookId}`, { description: "mine now" }],
      ["DELETE", `/api/v1/webhooks/${webhookId}`],
      ["POST", `/api/v1/webhooks/${webhookId}/verify`],
      ["POST", `/api/v1/webhooks/${webhookId}/rotate-secret`],
      ["GET", `/api/v1/webhooks/${webhookId}/deliveries`],
      ["POST", `/api/v1/webhooks/${webhookId}/redeliver`, { since: new Date(0).toISOString() }],
    ] as [string, string, unknown?][]) {
      const res = await other.api.raw(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await other.admin.post(`/api/v1/admin/webhooks/${webhookId}/enable`)).status).toBe(404);
    const list = await other.api.get("/api/v1/webhooks?limit=100");
    expect(list.body.items.map((e: any) => e.webhookId)).not.toContain(webhookId);
    expect((await t.api.get(`/api/v1/webhooks/${webhookId}`)).body.description).toBeNull();
  });

  it("lists with a cursor, newest first", async () => {
    const tt = await createTestTenant(server);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await tt.api.post("/api/v1/webhooks", { url: receiver.url, events: ["*"] })).body.webhookId);
    const p1 = await tt.api.get("/api/v1/webhooks?limit=2");
    expect(p1.body.items.map((e: any) => e.webhookId)).toEqual([ids[2], ids[1]]);
    const p2 = await tt.api.get(`/api/v1/webhooks?limit=2&cursor=${p1.body.nextCursor}`);
    expect(p2.body).toMatchObject({ items: [{ webhookId: ids[0] }], nextCursor: null });
    expect((await tt.api.get("/api/v1/webhooks?limit=0")).status).toBe(400);
  });
});
