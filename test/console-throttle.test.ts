// Console sign-in throttling across instances (src/auth/sign-in-throttle.ts): two servers on the same
// database and Redis share the failed-attempt counts (10 per account, 20 per address per 15 minutes),
// a restarted server keeps them, a successful sign-in starts the account's count again; without
// REDIS_URL, and with Redis down, each instance still throttles in process. Each test signs in from
// a loopback address of its own (127.x.y.z), so the per-address counts of parallel files stay apart.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { freePort, startOwnRedis } from "./support/own-services.js";
import { createOperator } from "../src/modules/console/engine/operators.js";
import { ownAddress, postFrom } from "./support/from-address.js";

const PASSWORD = "correct horse battery";

/** POST /console/auth/sign-in over real HTTP from `from` (the request's source address). */
async function signIn(server: TestServer, from: string, body: Record<string, string>): Promise<Answer> {
  const r = await postFrom(server.url, "/console/auth/sign-in", from, body);
  return { status: r.status, retryAfter: r.headers["retry-after"] as string | undefined, body: r.body };
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: any;
}

/** A tenant with one operator (on `server`'s database) and the sign-in bodies for it. */
async function account(server: TestServer, email = "throttle@example.com") {
  const t = await createTestTenant(server);
  await createOperator(server.app.runtime.services, { tenantId: t.tenantId, email, password: PASSWORD });
  return {
    tenantId: t.tenantId,
    right: { tenantId: t.tenantId, email, password: PASSWORD },
    wrong: (i: number) => ({ tenantId: t.tenantId, email, password: `wrong password ${i}` }),
  };
}

function expectThrottled(a: Answer) {
  expect(a.status).toBe(429);
  expect(a.body.code).toBe("rate_limited");
  const wait = Number(a.retryAfter);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(15 * 60);
}

describe("two instances on one database and Redis", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    [a, b] = await Promise.all([startServer(), startServer()]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("share the per-account count: attempts spread across both are refused after 10, on both", async () => {
    const acct = await account(a);
    const from = ownAddress();
    for (let i = 0; i < 10; i++) {
      const r = await signIn(i % 2 ? b : a, from, acct.wrong(i));
      expect([i, r.status, r.body.code]).toEqual([i, 401, "invalid_credentials"]);
    }
    expectThrottled(await signIn(a, from, acct.wrong(10)));
    expectThrottled(await signIn(b, from, acct.wrong(11)));
    // per account: another address gets no fresh tries, and the right password waits too
    expectThrottled(await signIn(b, ownAddress(), acct.right));
    expectThrottled(await signIn(a, from, acct.right));
    // kept under this deployment's prefix (its database's name), the account hashed: no email in Redis
    const database = new URL(inject("databaseUrl")).pathname.slice(1);
    const keys = await a.app.runtime.redis!.keys(`eng:signin:${database}:*`);
    expect(keys).toContain(`eng:signin:${database}:addr:${from}`);
    expect(keys.some((k) => k.startsWith(`eng:signin:${database}:acct:`))).toBe(true);
    expect(keys.filter((k) => k.includes("@"))).toEqual([]);
  });

  it("share the per-address count: 20 failures across accounts and instances, then even a fresh account waits", async () => {
    const from = ownAddress();
    const accounts = await Promise.all([account(a, "one@example.com"), account(a, "two@example.com"), account(a, "three@example.com")]);
    for (let i = 0; i < 20; i++) {
      const r = await signIn(i % 2 ? b : a, from, accounts[i % 2]!.wrong(i));
      expect([i, r.status]).toEqual([i, 401]);
    }
    expectThrottled(await signIn(a, from, accounts[2]!.wrong(20)));
    expectThrottled(await signIn(b, from, accounts[2]!.right));
    // the same account from another address is not held back by this address
    expect((await signIn(b, ownAddress(), accounts[2]!.right)).status).toBe(200);
  });

  it("a successful sign-in on one instance starts the account's count again on both", async () => {
    const acct = await account(a);
    const from = ownAddress();
    for (let i = 0; i < 9; i++) expect((await signIn(i % 2 ? b : a, from, acct.wrong(i))).status).toBe(401);
    const ok = await signIn(b, from, acct.right);
    expect(ok.status).toBe(200);
    expect(ok.body.operator.email).toBe("throttle@example.com");
    for (let i = 0; i < 10; i++) expect((await signIn(i % 2 ? a : b, from, acct.wrong(i))).status).toBe(401);
    expectThrottled(await signIn(a, from, acct.wrong(10)));
  });

  it("parallel attempts cannot all pass one check: at most 10 of 30 at once are checked", async () => {
    const acct = await account(a);
    const from = ownAddress();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(i % 2 ? b : a, from, acct.wrong(i))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

describe("a restarted instance", () => {
  it("keeps the count (it is in Redis, not in the process)", async () => {
    let s = await startServer();
    try {
      const acct = await account(s);
      const from = ownAddress();
      for (let i = 0; i < 10; i++) expect((await signIn(s, from, acct.wrong(i))).status).toBe(401);
      await s.stop();
      s = await startServer();
      expectThrottled(await signIn(s, from, acct.wrong(10)));
      expectThrottled(await signIn(s, ownAddress(), acct.right));
    } finally {
      await s.stop();
    }
  });
});

describe("without Redis", () => {
  it("REDIS_URL unset: the instance throttles in process (10 per account)", async () => {
    const s = await startServer({ REDIS_URL: "" });
    try {
      expect(s.app.runtime.redis).toBeUndefined();
      const acct = await account(s);
      const from = ownAddress();
      expect((await signIn(s, from, acct.right)).status).toBe(200);
      for (let i = 0; i < 10; i++) expect((await signIn(s, from, acct.wrong(i))).status).toBe(401);
      expectThrottled(await signIn(s, from, acct.wrong(10)));
      expectThrottled(await signIn(s, from, acct.right));
    } finally {
      await s.stop();
    }
  });

  it("Redis down (nothing listening): sign-in still works and still throttles, in process", async () => {
    const s = await startServer({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      const acct = await account(s);
      const from = ownAddress();
      expect((await signIn(s, from, acct.right)).status).toBe(200);
      for (let i = 0; i < 10; i++) expect((await signIn(s, from, acct.wrong(i))).status).toBe(401);
      expectThrottled(await signIn(s, from, acct.wrong(10)));
    } finally {
      await s.stop();
    }
  });

  it("Redis stalled (SIGSTOP): an attempt is answered after the command timeout, not failed", async () => {
    const redis = await startOwnRedis();
    const s = await startServer({ REDIS_URL: redis.url });
    try {
      const acct = await account(s);
      const from = ownAddress();
      expect((await signIn(s, from, acct.wrong(0))).status).toBe(401);
      redis.pause();
      try {
        const started = Date.now();
        expect((await signIn(s, from, acct.wrong(1))).status).toBe(401);
        expect((await signIn(s, from, acct.right)).status).toBe(200);
        expect(Date.now() - started).toBeLessThan(4_000);
      } finally {
        redis.resume();
      }
    } finally {
      await s.stop();
      await redis.stop();
    }
  });
});
