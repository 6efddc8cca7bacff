// A subscriber connection that Redis refuses for a while (its user switched off: every reconnect's
// AUTH fails) while Redis keeps running: the subscriptions come back once it is let in again, and
// the refusals are reported, never left as unhandled rejections (which end the process). Through the
// event bus the service uses (src/events/bus-redis.ts over src/lib/redis-subscriber.ts), on a Redis
// of this file's own; the publisher is another user's, never cut.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedisBus, type BusMessage, type RedisEventBus } from "../src/events/bus.js";
import { startOwnRedis, type OwnRedis } from "./support/own-services.js";

let own: OwnRedis;
const buses: RedisEventBus[] = [];

beforeAll(async () => {
  own = await startOwnRedis();
});
afterAll(async () => {
  await Promise.all(buses.map((b) => b.close()));
  await own?.stop();
});

describe("a subscriber refused by Redis for a while", () => {
  it("subscribes its channels again once let back in, and reports the refusals", async () => {
    const user = own.user("bus-refused");
    const errors: Error[] = [];
    // reconnects 10 ms apart: past ioredis's 20 retries of a queued command within a test's time
    const sub = createRedisBus({ url: user.url, onError: (e) => errors.push(e), redisOptions: { retryStrategy: () => 10 } });
    const pub = createRedisBus({ url: own.url });
    buses.push(sub, pub);
    const got: BusMessage[] = [];
    await sub.subscribe("t", "d", (m) => void got.push(m));
    let reconnects = 0;
    sub.onReconnect(() => void reconnects++);
    const message = (seq: number): BusMessage => ({ tenantId: "t", discussionId: "d", seq, eventId: `ev-${seq}` });

    await pub.publish(message(1));
    await vi.waitFor(() => expect(got.map((m) => m.seq)).toEqual([1]));

    user.cut();
    // its reconnects are refused, and said so: many of them (the commands queued meanwhile have
    // used up their retries and are failed, the re-subscription among them)
    const refusals = () => errors.filter((e) => /WRONGPASS|disabled/.test(e.message)).length;
    await vi.waitFor(() => expect(refusals()).toBeGreaterThan(50), { timeout: 10_000 });
    await pub.publish(message(2)); // lost: nobody of this user is subscribed now (the log has it)

    user.restore();
    await vi.waitFor(() => expect(reconnects).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
    // live again: a message published now arrives
    await pub.publish(message(3));
    await vi.waitFor(() => expect(got.map((m) => m.seq)).toEqual([1, 3]), { timeout: 5_000 });
  });
});
