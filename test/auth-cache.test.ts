// Auth without a database round trip in steady state (src/auth/auth-cache.ts): keys and tenant rows
// are cached per instance; revocation, settings changes and identity-secret rotation reach every
// instance within a second over Redis; expiry is checked to the second against the clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";
import { manualClock } from "../src/lib/clock.js";
import { rawSse } from "./support/sse.js";

let a: TestServer;
let b: TestServer;
let t: TestTenant;

beforeAll(async () => {
  [a, b] = await Promise.all([startServer(), startServer()]);
  t = await createTestTenant(a);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

const onB = (key: string) => client(b.url, { key });
const newKey = async () => (await t.api.post("/api/v1/keys", { label: "cached", capabilities: [] })).body as { id: string; key: string };

describe("API key cache", () => {
  it("serves a known key without reading the database (a change made behind its back is not seen)", async () => {
    const k = await newKey();
    expect((await onB(k.key).get("/api/v1/discussions")).status).toBe(200);
    // revoked in the database directly, with no invalidation message: B answers from its cache
    await b.app.runtime.services.prisma.apiKey.update({ where: { id: k.id }, data: { revokedAt: new Date() } });
    expect((await onB(k.key).get("/api/v1/discussions")).status).toBe(200);
    // the same key on an instance that never cached it is read from the database: revoked
    expect((await client(a.url, { key: k.key }).get("/api/v1/discussions")).body.code).toBe("key_revoked");
  });

  it("revocation: refused on the next request where it was revoked, and within 1 s on the other instance", async () => {
    const k = await newKey();
    expect((await client(a.url, { key: k.key }).get("/api/v1/discussions")).status).toBe(200);
    expect((await onB(k.key).get("/api/v1/discussions")).status).toBe(200);
    expect((await t.api.del(`/api/v1/keys/${k.id}`)).status).toBe(204);
    const revokedAt = Date.now();
    const next = await client(a.url, { key: k.key }).get("/api/v1/discussions");
    expect([next.status, next.body.code]).toEqual([401, "key_revoked"]);
    await expect
      .poll(async () => (await onB(k.key).get("/api/v1/discussions")).body.code, { timeout: 1_000, interval: 20 })
      .toBe("key_revoked");
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it("identity-secret rotation and settings changes reach the other instance within 1 s", async () => {
    const oldIdentity = await t.identity("rot");
    const post = (server: TestServer, identity: string) =>
      client(server.url, { key: t.apiKey, identity }).post("/api/v1/discussions/cache-rot/comments", { body: "hi" });
    // no overlap: the secret before a rotation stops verifying at once (identity.secretOverlapHours)
    expect((await t.api.patch("/api/v1/settings", { identity: { secretOverlapHours: 0 } })).status).toBe(200);
    expect((await post(b, oldIdentity)).status).toBe(201); // B has the tenant row cached now
    const rotated = await t.api.post("/api/v1/settings/identity-secret/rotate");
    expect(rotated.status).toBe(200);
    await expect.poll(async () => (await post(b, oldIdentity)).status, { timeout: 1_000, interval: 20 }).toBe(401);

    expect((await client(b.url, { key: t.apiKey }).get("/api/v1/discussions")).headers.get("ratelimit-limit")).not.toBe("7");
    expect((await t.api.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 7 } })).status).toBe(200);
    await expect
      .poll(async () => (await client(b.url, { key: t.apiKey }).get("/api/v1/discussions")).headers.get("ratelimit-limit"), {
        timeout: 1_000,
        interval: 50,
      })
      .toBe("7");
    await t.api.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 6000 } });
  });

  it("streams take their settings from the same tenant rows: a change reaches new streams on the other instance within 1 s", async () => {
    await t.api.put("/api/v1/discussions/cache-stream", {});
    const heartbeatOnB = async () => {
      const s = await rawSse(`${b.url}/api/v1/stream/cache-stream`, { "x-api-key": t.apiKey });
      try {
        await s.waitForText((x) => x.includes("event: connected"));
        return Number(/"heartbeatSeconds":(\d+)/.exec(s.text())?.[1]);
      } finally {
        await s.close();
      }
    };
    expect(await heartbeatOnB()).toBe(15); // B has the tenant row cached now
    expect((await t.api.patch("/api/v1/settings", { stream: { heartbeatSeconds: 7 } })).status).toBe(200);
    const changedAt = Date.now();
    await expect.poll(heartbeatOnB, { timeout: 1_000, interval: 20 }).toBe(7);
    expect(Date.now() - changedAt).toBeLessThan(1_000);
    await t.api.patch("/api/v1/settings", { stream: { heartbeatSeconds: 15 } });
  });

  it("expiry is honoured to the second for a cached key", async () => {
    const clock = manualClock(new Date());
    const s = await startServer({}, { clock });
    try {
      const tt = await createTestTenant(s);
      const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
      const k = (await tt.api.post("/api/v1/keys", { label: "soon", capabilities: [], expiresAt })).body;
      const use = () => client(s.url, { key: k.key }).get("/api/v1/discussions");
      expect((await use()).status).toBe(200); // cached from here on
      clock.advance(59_000);
      expect((await use()).status).toBe(200);
      clock.advance(1_000);
      expect((await use()).body.code).toBe("key_expired");
    } finally {
      await s.stop();
    }
  });
});
