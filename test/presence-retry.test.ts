// A presence write that fails is retried (src/stream-engine/presence-writes.ts):
// - streams that join while Redis is gone (killed, then started again empty) are counted once it is
//   back, on both instances, with no join or leave after it. (A stall, SIGSTOP, is no test of it: the
//   commands that timed out still reach Redis when it runs again, this instance's notice among them,
//   which makes it count again.)
// - one instance loses its connections while Redis keeps its state (its Redis user switched off and
//   its clients killed: the other instance is untouched): the joins and the leave made meanwhile are
//   written once it is back, over what Redis kept, and nobody is counted twice;
// - a discussion whose last stream here left while the writes failed: its leave is retried while
//   this instance's lease there holds, and given up once the lease has ended (by the injectable
//   clock), when its counts no longer count anywhere.
// Presence instances on a Redis of this file's own, each on the service's fail-fast command
// connection (no offline queue, 500 ms per command). The refresh of the instance whose writes fail
// is off (an hour), so only the retry can mend its counts.
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { manualClock, systemClock, type Clock } from "../src/lib/clock.js";
import { closeConnection, createCommandConnection, type RedisClient } from "../src/lib/redis-connection.js";
import { Presence, presenceKey, type PresenceMember } from "../src/stream-engine/presence.js";
import { startOwnRedis, type OwnRedis } from "./support/own-services.js";

const T = "t-retry";
let own: OwnRedis;
const clients: RedisClient[] = [];
const instances: Presence[] = [];

beforeAll(async () => {
  own = await startOwnRedis();
});
afterAll(async () => {
  own?.resume();
  await Promise.all(instances.map((p) => p.close()));
  await Promise.all(clients.map((c) => closeConnection(c)));
  await own?.stop();
});

/** What an instance logged at warn and above (its `msg` and `discussionId`). */
type Logged = { msg: string; discussionId?: string }[];

function instance(
  refreshMs: number,
  o: { url?: string; clock?: Clock; ttlMs?: number; logged?: Logged } = {},
): Presence & { redis: RedisClient } {
  const url = o.url ?? own.url;
  const redis = createCommandConnection({ url }, { name: "presence-retry" });
  clients.push(redis);
  const logged = o.logged;
  const log = logged
    ? pino({ level: "warn" }, { write: (line: string) => void logged.push(JSON.parse(line) as Logged[number]) })
    : pino({ level: process.env.PLOG ?? "silent" });
  const p = new Presence({
    clock: o.clock ?? systemClock,
    log,
    redis,
    redisTarget: { url },
    options: { presenceRefreshMs: refreshMs, presenceTtlMs: o.ttlMs ?? 7_200_000, presenceIntervalMs: 20 },
    // every stream a person of its own
    people: { secret: randomBytes(32), perAddress: 0 },
  });
  instances.push(p);
  return Object.assign(p, { redis });
}

/** A stream that records the counts it is told. */
const member = () => {
  const told: number[] = [];
  return Object.assign({ presence: (n: number) => void told.push(n) } satisfies PresenceMember, { told, last: () => told.at(-1) });
};
const client = { readerId: null, address: "10.1.0.1" };

describe("a failed presence write is retried", () => {
  let a: Presence;
  let b: Presence;
  beforeAll(async () => {
    // a: its writes fail, no refresh; b: the other instance, refreshing often
    a = instance(3_600_000);
    b = instance(200);
    await vi.waitFor(() => expect(clients.every((c) => c.status === "ready")).toBe(true));
  });

  it("streams that joined while Redis was down are counted once it is back (it came back empty)", async () => {
    const watcher = member();
    b.join(T, "down", watcher, client);
    await vi.waitFor(async () => expect(await b.count(T, ["down"])).toEqual([1]), { timeout: 10_000 });

    await own.crash();
    const joined = Array.from({ length: 3 }, member);
    for (const m of joined) a.join(T, "down", m, client);
    // the write failed and the count with it: told what this instance counts alone
    await vi.waitFor(() => expect(joined.map((m) => m.last())).toEqual([3, 3, 3]), { timeout: 10_000 });

    await own.start();
    // no join or leave since: a's streams are written by the retry, and everyone is told
    await vi.waitFor(async () => expect(await b.count(T, ["down"])).toEqual([4]), { timeout: 20_000, interval: 50 });
    await vi.waitFor(() => expect([watcher.last(), ...joined.map((m) => m.last())]).toEqual([4, 4, 4, 4]), { timeout: 10_000 });
    expect(await a.count(T, ["down"])).toEqual([4]);
  });
});

/**
 * One instance's own Redis user (test/support/own-services.ts): its connections are lost while Redis
 * keeps running and keeps its state, the other instance's are untouched. `slots`: a discussion's
 * counted slots as Redis holds them (any instance's, live or not).
 */
async function ownUser(name: string) {
  const admin = createCommandConnection({ url: own.url }, { name: "presence-retry-admin" });
  clients.push(admin);
  await vi.waitFor(() => expect(admin.status).toBe("ready"));
  const user = own.user(name);
  return {
    url: user.url,
    async cut(of: RedisClient) {
      user.cut();
      await vi.waitFor(() => expect(of.status).not.toBe("ready"));
    },
    async restore(of: RedisClient) {
      user.restore();
      await vi.waitFor(() => expect(of.status).toBe("ready"), { timeout: 20_000, interval: 50 });
    },
    slots: (tenantId: string, discussionId: string) => admin.zcard(presenceKey(tenantId, discussionId)),
  };
}

describe("an instance that lost its connection while Redis kept its state", () => {
  const T2 = "t-kept";
  it("writes the joins and the leave made meanwhile over what Redis kept, counting nobody twice", async () => {
    const user = await ownUser("presence-kept");
    const logged: Logged = [];
    const a = instance(3_600_000, { url: user.url, logged });
    const b = instance(200);
    await vi.waitFor(() => expect([a.redis.status, b.redis.status]).toEqual(["ready", "ready"]));

    const watcher = member();
    b.join(T2, "kept", watcher, client);
    const before = [member(), member()];
    const leaves = before.map((m) => a.join(T2, "kept", m, client));
    await vi.waitFor(async () => expect(await b.count(T2, ["kept"])).toEqual([3]), { timeout: 10_000 });
    await vi.waitFor(() => expect(watcher.last()).toBe(3), { timeout: 10_000 });

    await user.cut(a.redis);
    const joined = [member(), member(), member()];
    for (const m of joined) a.join(T2, "kept", m, client);
    leaves[0]!();
    // a's writes failed: Redis still holds what it wrote before (the two first streams), and b counts that
    await vi.waitFor(() => expect(logged.map((l) => l.msg)).toContain("presence: changes not recorded; retrying"), { timeout: 10_000 });
    expect(await b.count(T2, ["kept"])).toEqual([3]);

    await user.restore(a.redis);
    // no join or leave since: the retry writes a's streams now (one left, three joined) over the kept state
    await vi.waitFor(async () => expect(await b.count(T2, ["kept"])).toEqual([5]), { timeout: 20_000, interval: 50 });
    await vi.waitFor(() => expect([watcher.last(), before[1]!.last(), ...joined.map((m) => m.last())]).toEqual([5, 5, 5, 5, 5]), {
      timeout: 10_000,
    });
    expect(await a.count(T2, ["kept"])).toEqual([5]);
    expect(await user.slots(T2, "kept")).toBe(5);
  });
});

describe("a discussion whose last stream here left while the writes failed", () => {
  const T3 = "t-dropped";
  const ttlMs = 60_000;
  let user: Awaited<ReturnType<typeof ownUser>>;
  let clock: ReturnType<typeof manualClock>;
  let a: ReturnType<typeof instance>;
  let b: ReturnType<typeof instance>;
  const logged: Logged = [];
  beforeAll(async () => {
    user = await ownUser("presence-dropped");
    // one clock for both: a lease a writes ends, for b, when this clock passes it
    clock = manualClock(new Date());
    // no refresh on either side: b's would clear a's counts away once a's lease has ended
    a = instance(3_600_000, { url: user.url, clock, ttlMs, logged });
    b = instance(3_600_000, { clock, ttlMs });
    await vi.waitFor(() => expect([a.redis.status, b.redis.status]).toEqual(["ready", "ready"]));
  });

  /** b's watcher and two of a's streams on the discussion, counted on both; then a is cut off and both of its streams leave */
  async function droppedWhileCut(discussionId: string) {
    const watcher = member();
    b.join(T3, discussionId, watcher, client);
    const leaves = [member(), member()].map((m) => a.join(T3, discussionId, m, client));
    await vi.waitFor(async () => expect(await b.count(T3, [discussionId])).toEqual([3]), { timeout: 10_000 });
    expect(await user.slots(T3, discussionId)).toBe(3);
    await user.cut(a.redis);
    for (const leave of leaves) leave();
    const failed = (l: Logged[number]) => l.discussionId === discussionId && l.msg === "presence: changes not recorded; retrying";
    await vi.waitFor(() => expect(logged.some(failed)).toBe(true), { timeout: 10_000 });
    return watcher;
  }

  it("retries its leave while its lease there holds: written once the connection is back", async () => {
    const watcher = await droppedWhileCut("left-early");
    await user.restore(a.redis);
    await vi.waitFor(async () => expect(await b.count(T3, ["left-early"])).toEqual([1]), { timeout: 20_000, interval: 50 });
    await vi.waitFor(() => expect(watcher.last()).toBe(1), { timeout: 10_000 });
    // the leave itself was written: a's slots are gone from Redis, not only out of the count
    expect(await user.slots(T3, "left-early")).toBe(1);
  });

  it("gives its leave up once its lease has ended (by then its counts count nowhere)", async () => {
    await droppedWhileCut("left-late");
    clock.advance(ttlMs + 1);
    const givenUp = (l: Logged[number]) =>
      l.discussionId === "left-late" && l.msg === "presence: a dropped discussion's changes given up (its lease has ended)";
    await vi.waitFor(() => expect(logged.filter(givenUp)).toHaveLength(1), { timeout: 10_000 });
    await user.restore(a.redis);
    // nothing of it is left to write: closing (which writes every retry still pending, the dropped
    // discussions' among them) leaves a's two slots as they were in Redis
    await a.close();
    expect(await user.slots(T3, "left-late")).toBe(3);
    expect(logged.filter(givenUp)).toHaveLength(1);
  });
});
