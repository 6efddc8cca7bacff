// A presence write that fails is retried (src/stream-engine/presence-writes.ts): streams that join
// while Redis is gone (killed, then started again empty) are counted once it is back, on both
// instances, with no join or leave after it. (A stall, SIGSTOP, is no test of it: the commands that
// timed out still reach Redis when it runs again, this instance's notice among them, which makes it
// count again.) Two Presence
// instances on a Redis of this file's own, each on the service's fail-fast command connection
// (no offline queue, 500 ms per command). The refresh of the instance whose writes fail is off
// (an hour), so only the retry can mend its counts; the other's is short, so that it sends its
// own counts again after the restart emptied Redis.
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemClock } from "../src/lib/clock.js";
import { closeConnection, createCommandConnection, type RedisClient } from "../src/lib/redis-connection.js";
import { Presence, type PresenceMember } from "../src/stream-engine/presence.js";
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

function instance(refreshMs: number): Presence {
  const redis = createCommandConnection({ url: own.url }, { name: "presence-retry" });
  clients.push(redis);
  const p = new Presence({
    clock: systemClock,
    log: pino({ level: process.env.PLOG ?? "silent" }),
    redis,
    redisTarget: { url: own.url },
    options: { presenceRefreshMs: refreshMs, presenceTtlMs: 7_200_000, presenceIntervalMs: 20 },
    // every stream a person of its own
    people: { secret: randomBytes(32), perAddress: 0 },
  });
  instances.push(p);
  return p;
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
