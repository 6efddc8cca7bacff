// Black-box contract suite, webhooks: registration, the handshake, signed deliveries, rotation,
// redelivery, retries, the circuit breaker, URL rules.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { createHmac } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import {
  ISO_MS,
  type Received,
  type Receiver,
  UUID,
  api,
  contractRun,
  eventually,
  expectComment,
  expectEnvelope,
  expectProblem,
  expectStatus,
  res_required,
  sleep,
  startReceiver,
} from "../support/contract-client.js";

const { A, B, ada, bob, modKey } = await contractRun();

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

// ───────────────────────────── webhooks ─────────────────────────────

describe("webhooks", { timeout: 60_000 }, () => {
  let rx: Receiver;
  let hook: any;
  let secret = "";
  let kid = "";

  const verifySignature = (req: Received, withSecret: string, expectKid: string) => {
    const sig = String(req.headers["x-service-signature"] ?? "");
    const m = sig.match(/^t=(\d+),v1=([0-9a-f]{64}),kid=([0-9a-f]{8})$/);
    expect(m, `X-Service-Signature: ${sig}`).not.toBeNull();
    const ts = String(req.headers["x-service-timestamp"] ?? "");
    expect(ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Math.abs(Number(m![1]) - Math.floor(Date.parse(ts) / 1000))).toBeLessThanOrEqual(1);
    const expected = createHmac("sha256", withSecret).update(`${ts}.${req.raw}`).digest("hex");
    expect(m![2]).toBe(expected);
    expect(m![3]).toBe(expectKid);
  };

  it("POST /webhooks → 201 {webhookId,url,events,verified:false,state,secret,kid,createdAt}", async () => {
    rx = await startReceiver();
    receivers.push(rx);
    expectStatus(await api.put("/discussions/d-wh", { key: A.apiKey, json: { title: "Hooks" } }), 201);
    const res = await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["comment_created", "comment_deleted"] } });
    expectStatus(res, 201);
    const keys = Object.keys(res.body);
    for (const k of ["webhookId", "url", "events", "verified", "state", "secret", "kid", "createdAt"]) expect(keys).toContain(k);
    expect(typeof res.body.webhookId).toBe("string");
    expect(res.body.url).toBe(rx.url);
    expect(res.body.events).toEqual(["comment_created", "comment_deleted"]);
    expect(res.body.verified).toBe(false);
    expect(res.body.state).toBe("active");
    expect(typeof res.body.secret).toBe("string");
    expect(res.body.kid).toMatch(/^[0-9a-f]{8}$/);
    expect(res.body.createdAt).toMatch(ISO_MS);
    hook = res.body;
    secret = res.body.secret;
    kid = res.body.kid;
  });

  it("the handshake: POST {type, challenge, timestamp} with X-Service-Event: verification; echoing it verifies", async () => {
    await eventually(() => expect(rx.handshakes().length).toBeGreaterThanOrEqual(1), 15_000);
    const h = rx.handshakes()[0]!;
    expect(h.method).toBe("POST");
    expect(h.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(h.json).sort()).toEqual(["challenge", "timestamp", "type"]);
    expect(h.json.type).toBe("verification");
    expect(h.json.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(h.json.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    await eventually(
      async () => {
        const g = await api.get(`/webhooks/${hook.webhookId}`, { key: A.apiKey });
        expectStatus(g, 200);
        expect(g.body.verified).toBe(true);
        expect(g.body).not.toHaveProperty("secret");
      },
      15_000,
      200,
    );
  });

  it("a new comment arrives signed, with the contract's headers and the event envelope as body", async () => {
    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "to the hook" } });
    expectStatus(c, 201);
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    const d = rx.deliveries().find((x) => x.json?.data?.comment?.id === c.body.id)!;
    expect(d.method).toBe("POST");
    expect(d.path).toBe("/hook");
    expect(d.headers["content-type"]).toMatch(/^application\/json/);
    expect(d.headers["x-service-event"]).toBe("comment_created");
    expect(String(d.headers["x-service-delivery-id"])).toMatch(UUID);
    verifySignature(d, secret, kid);
    expectEnvelope(d.json, "comment_created", "d-wh", A.tenantId);
    expect(Object.keys(d.json.data)).toEqual(["comment"]);
    expectComment(d.json.data.comment);
    expect(d.json.data.comment).toEqual(c.body);
    expect(d.headers["x-service-idempotency-key"]).toBe(`comment_created:${d.json.id}`);
  });

  it("POST /webhooks/{id}/verify → 200 {verified}", async () => {
    const before = rx.handshakes().length;
    const res = await api.post(`/webhooks/${hook.webhookId}/verify`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(res.body.verified).toBe(true);
    expect(rx.handshakes().length).toBe(before + 1);
  });

  it("rotate-secret → 200 {secret, kid, previousKidValidUntil}; later deliveries are signed with the new secret and kid", async () => {
    const res = await api.post(`/webhooks/${hook.webhookId}/rotate-secret`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(Object.keys(res.body).sort()).toEqual(["kid", "previousKidValidUntil", "secret", "standardWebhooksSecret"]);
    expect(res.body.kid).toMatch(/^[0-9a-f]{8}$/);
    expect(res.body.kid).not.toBe(kid);
    expect(res.body.secret).not.toBe(secret);
    expect(res.body.previousKidValidUntil).toMatch(ISO_MS);
    expect(Math.abs(Date.parse(res.body.previousKidValidUntil) - (Date.now() + 24 * 3600_000))).toBeLessThan(5 * 60_000);
    secret = res.body.secret;
    kid = res.body.kid;

    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: bob, json: { body: "after rotation" } });
    expectStatus(c, 201);
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    verifySignature(
      rx.deliveries().find((x) => x.json?.data?.comment?.id === c.body.id)!,
      secret,
      kid,
    );
  });

  it("GET /webhooks/{id}/deliveries lists the attempts", async () => {
    const first = rx.deliveries()[0]!;
    const res = await api.get(`/webhooks/${hook.webhookId}/deliveries`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(Array.isArray(res.body.items)).toBe(true);
    expect(res.body.items.length).toBeGreaterThanOrEqual(2);
    expect(res.text).toContain(String(first.headers["x-service-idempotency-key"]));
    expect(res.text).toContain(String(first.headers["x-service-delivery-id"]));
  });

  it("GET /webhooks, PATCH, DELETE → 200, 200, 204", async () => {
    const list = await api.get("/webhooks", { key: A.apiKey });
    expectStatus(list, 200);
    expect(list.body.items.map((w: any) => w.webhookId)).toContain(hook.webhookId);
    expect(list.text).not.toContain(secret);
    const patched = await api.patch(`/webhooks/${hook.webhookId}`, { key: A.apiKey, json: { description: "main hook" } });
    expectStatus(patched, 200);
    expect(patched.body.webhookId).toBe(hook.webhookId);
    expect(patched.body.verified).toBe(true); // no url change → stays verified
  });

  it("comment_deleted is delivered (subscribed); reaction_toggled is not (not subscribed)", async () => {
    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "short-lived" } });
    expectStatus(await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "like" } }), 200);
    expectStatus(await api.del(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada }), 204);
    await eventually(
      () => expect(rx.deliveries().some((d) => d.event === "comment_deleted" && d.json?.data?.comment?.id === c.body.id)).toBe(true),
      15_000,
    );
    const d = rx.deliveries().find((x) => x.event === "comment_deleted" && x.json?.data?.comment?.id === c.body.id)!;
    expectEnvelope(d.json, "comment_deleted", "d-wh", A.tenantId);
    expect(d.json.data.comment.status).toBe("deleted");
    expect(d.json.data.comment.body).toBe("");
    expect(d.headers["x-service-idempotency-key"]).toBe(`comment_deleted:${d.json.id}`);
    verifySignature(d, secret, kid);
    await sleep(500);
    expect(rx.deliveries().map((x) => x.event)).not.toContain("reaction_toggled");
  });

  it("redeliver {eventIds} queues the event again: same idempotency key, new delivery id", async () => {
    const first = rx.deliveries().find((x) => x.event === "comment_created")!;
    const before = rx
      .deliveries()
      .filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"]).length;
    const res = await api.post(`/webhooks/${hook.webhookId}/redeliver`, { key: A.apiKey, json: { eventIds: [first.json.id] } });
    expect(res.status, res.text).toBeGreaterThanOrEqual(200);
    expect(res.status, res.text).toBeLessThan(300);
    await eventually(() => {
      const same = rx.deliveries().filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"]);
      expect(same.length).toBe(before + 1);
    }, 15_000);
    const again = rx
      .deliveries()
      .filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"])
      .at(-1)!;
    expect(again.headers["x-service-delivery-id"]).not.toBe(first.headers["x-service-delivery-id"]);
    expect(again.json).toEqual(first.json);
    verifySignature(again, secret, kid);
  });

  it("a failed attempt is retried after ~1 s (+ ≤50 % jitter): same idempotency key, new delivery id", async () => {
    const flaky = await startReceiver(true, (n) => (n === 1 ? 500 : 200));
    receivers.push(flaky);
    const w = await api.post("/webhooks", { key: A.apiKey, json: { url: flaky.url, events: ["comment_created"] } });
    expectStatus(w, 201);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    const c = await api.post("/discussions/d-wh-retry/comments", { key: A.apiKey, identity: ada, json: { body: "retry me" } });
    expectStatus(c, 201);
    const mine = () => flaky.deliveries().filter((d) => d.json?.data?.comment?.id === c.body.id);
    await eventually(() => expect(mine().length).toBe(2), 15_000);
    const [a1, a2] = mine() as [Received, Received];
    expect(a1.headers["x-service-idempotency-key"]).toBe(a2.headers["x-service-idempotency-key"]);
    expect(a1.headers["x-service-delivery-id"]).not.toBe(a2.headers["x-service-delivery-id"]);
    expect(a1.raw).toBe(a2.raw);
    const gap = a2.at - a1.at;
    expect(gap).toBeGreaterThanOrEqual(900);
    expect(gap).toBeLessThan(3_000);
    await sleep(1_000);
    expect(mine()).toHaveLength(2); // success ends the retries
    const log = await api.get(`/webhooks/${w.body.webhookId}/deliveries`, { key: A.apiKey });
    expectStatus(log, 200);
    expect(log.text).toContain(String(a1.headers["x-service-delivery-id"]));
    expect(log.text).toContain(String(a2.headers["x-service-delivery-id"]));
    expectStatus(await api.del(`/webhooks/${w.body.webhookId}`, { key: A.apiKey }), 204);
  });

  it("endpoint tunables: consecutive failures open the circuit, more disable it; the console (admin JWT) re-enables", async () => {
    const down = await startReceiver(true, () => 500);
    receivers.push(down);
    const w = await api.post("/webhooks", {
      key: A.apiKey,
      json: {
        url: down.url,
        events: ["comment_created"],
        delivery: { maxAttempts: 1, breakerThreshold: 2, breakerCooldownMs: 2_000, disableThreshold: 3 },
      },
    });
    expectStatus(w, 201);
    const id = w.body.webhookId;
    const get = async () => (await api.get(`/webhooks/${id}`, { key: A.apiKey })).body;
    await eventually(async () => expect((await get()).verified).toBe(true), 15_000, 200);
    const post = (body: string) => api.post("/discussions/d-wh-breaker/comments", { key: A.apiKey, identity: ada, json: { body } });

    await post("f1");
    await post("f2");
    await eventually(async () => expect((await get()).state).toBe("circuit_open"), 15_000, 100);
    const attemptsWhenOpened = down.deliveries().length;
    expect(attemptsWhenOpened).toBe(2);
    await post("while open");
    await sleep(500);
    expect(down.deliveries().length, "no attempt while the circuit is open").toBe(attemptsWhenOpened);
    // after the cooldown one trial goes out; it fails → third consecutive failure → disabled
    await eventually(async () => expect((await get()).state).toBe("disabled"), 20_000, 200);
    expect(down.deliveries().length).toBe(3);

    const refused = await api.post(`/admin/webhooks/${id}/enable`, { key: A.apiKey });
    expect([401, 403], refused.text).toContain(refused.status);
    const enabled = await api.post(`/admin/webhooks/${id}/enable`, { admin: A.adminToken });
    expectStatus(enabled, 200);
    expect(enabled.body.webhookId).toBe(id);
    expect(enabled.body.state).toBe("active");
    expectStatus(await api.del(`/webhooks/${id}`, { key: A.apiKey }), 204);
  });

  it("PATCH of url → unverified, and a new handshake goes to the new url", async () => {
    const w = await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["discussion_locked"] } });
    expectStatus(w, 201);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    const rx3 = await startReceiver();
    receivers.push(rx3);
    const p = await api.patch(`/webhooks/${w.body.webhookId}`, { key: A.apiKey, json: { url: rx3.url } });
    expectStatus(p, 200);
    expect(p.body.url).toBe(rx3.url);
    await eventually(() => expect(rx3.handshakes()).toHaveLength(1), 15_000);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    expectStatus(await api.del(`/webhooks/${w.body.webhookId}`, { key: A.apiKey }), 204);
  });

  it("an unverified endpoint gets no deliveries; /verify answers {verified: false}", async () => {
    const bad = await startReceiver(false);
    receivers.push(bad);
    const res = await api.post("/webhooks", { key: A.apiKey, json: { url: bad.url, events: ["*"] } });
    expectStatus(res, 201);
    expect(res.body.events).toEqual(["*"]);
    await eventually(() => expect(bad.handshakes().length).toBeGreaterThanOrEqual(1), 15_000);
    const v = await api.post(`/webhooks/${res.body.webhookId}/verify`, { key: A.apiKey });
    expectStatus(v, 200);
    expect(v.body.verified).toBe(false);
    if ("error" in v.body) expect(typeof v.body.error).toBe("string");

    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "only to the verified one" } });
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    await sleep(1_000);
    expect(bad.deliveries()).toHaveLength(0);

    expectStatus(await api.del(`/webhooks/${res.body.webhookId}`, { key: A.apiKey }), 204);
    expectProblem(await api.get(`/webhooks/${res.body.webhookId}`, { key: A.apiKey }), 404, "not_found");
  });

  it("private, link-local, metadata and plain-http public URLs → 422; bad event names → 422", async () => {
    for (const url of [
      "https://10.0.0.5/x",
      "https://192.168.1.10/x",
      "https://169.254.169.254/latest/meta-data",
      "http://example.com/hook",
    ]) {
      const res = await api.post("/webhooks", { key: A.apiKey, json: { url, events: ["*"] } });
      expectProblem(res, 422, "validation_failed");
    }
    expectProblem(
      await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["notification_reply"] } }),
      422,
      "validation_failed",
    );
    expectProblem(await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["bogus"] } }), 422, "validation_failed");
  });

  it("webhook routes without manage_webhooks → 403 missing_capability; another tenant → 404", async () => {
    const res = await api.get("/webhooks", { key: modKey });
    expectProblem(res, 403, "missing_capability");
    expect(res_required(res)).toContain("manage_webhooks");
    expectProblem(await api.get(`/webhooks/${hook.webhookId}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post(`/webhooks/${hook.webhookId}/verify`, { key: B.apiKey }), 404, "not_found");
  });
});
