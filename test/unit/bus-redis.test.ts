/**
 * Redis-only behaviour of the bus, against the real Redis: fan-out across instances, one Redis
 * subscription per channel and instance (PUBSUB NUMSUB from a third connection), races between
 * subscribe and unsubscribe, timeouts instead of hangs, reconnect after CLIENT KILL.
 */
import { randomUUID } from "node:crypto";
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BusTimeoutError, createRedisBus } from "../../src/events/bus.js";
import type { BusMessage, RedisBusOptions, RedisEventBus } from "../../src/events/bus.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `test-${randomUUID()}`;
const WAIT = { timeout: 5000, interval: 5 };

let admin: Redis;
const open: RedisEventBus[] = [];
const errors: Error[] = [];

function bus(extra: Partial<RedisBusOptions> = {}): RedisEventBus {
  const b = createRedisBus({ url: REDIS_URL, channelPrefix: PREFIX, onError: (e) => errors.push(e), ...extra });
  open.push(b);
  return b;
}

beforeAll(() => {
  admin = new Redis(REDIS_URL, { connectionName: `${PREFIX}-admin` });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
  errors.length = 0;
});
afterAll(async () => {
  await admin.quit();
});

function msg(tenantId: string, discussionId: string, seq: number): BusMessage {
  return { tenantId, discussionId, seq, eventId: `ev-${seq}` };
}

function collector() {
  const got: BusMessage[] = [];
  return { got, fn: (m: BusMessage) => void got.push(m) };
}

function ids() {
  const u = randomUUID().slice(0, 8);
  return { t: `tenant-${u}`, d: `disc-${u}` };
}

async function numsub(channel: string): Promise<number> {
  const reply = (await admin.pubsub("NUMSUB", channel)) as unknown[];
  return Number(reply[1]);
}

async function channelsOfRun(): Promise<string[]> {
  return ((await admin.pubsub("CHANNELS", `${PREFIX}:*`)) as string[]).sort();
}

async function clientIdByName(name: string): Promise<string> {
  const list = (await admin.client("LIST")) as string;
  const line = list.split("\n").find((l) => l.split(" ").includes(`name=${name}`));
  const id = line?.match(/(?:^|\s)id=(\d+)/)?.[1];
  if (!id) throw new Error(`no Redis client named ${name}`);
  return id;
}

/**
 * A TCP proxy in front of Redis that can hold traffic (a stalled network path), so an in-flight
 * SUBSCRIBE or PUBLISH can be observed deterministically.
 */
async function stallableProxy() {
  const upstream = new URL(REDIS_URL);
  let held = false;
  const queued: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const up = net.connect(Number(upstream.port || 6379), upstream.hostname);
    sockets.add(client).add(up);
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (held) queued.push(() => to.write(chunk));
      else to.write(chunk);
    };
    client.on("data", forward(up));
    up.on("data", forward(client));
    const end = () => {
      client.destroy();
      up.destroy();
    };
    client.on("close", end).on("error", end);
    up.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(REDIS_URL);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const send of queued.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("Redis bus", () => {
  it("fans a publish out to subscribers on other bus instances (other servers)", async () => {
    const [a, b, c] = [bus(), bus(), bus()];
    const { t, d } = ids();
    const onB = collector();
    const onC = collector();
    await b.subscribe(t, d, onB.fn);
    await c.subscribe(t, d, onC.fn);
    await a.publish(msg(t, d, 1));
    await vi.waitFor(() => expect([onB.got, onC.got]).toEqual([[msg(t, d, 1)], [msg(t, d, 1)]]), WAIT);
  });

  it("uses one channel per tenant and discussion with encoded ids", () => {
    const b = bus();
    expect(b.channelFor("t1", "d1")).toBe(`${PREFIX}:ev:t1:d1`);
    expect(b.channelFor("a:b", "c")).toBe(`${PREFIX}:ev:a%3Ab:c`);
    expect(b.channelFor("a", "b:c")).toBe(`${PREFIX}:ev:a:b%3Ac`);
    expect(b.connectionNames.subscriber).not.toBe(b.connectionNames.publisher);
    expect(bus({ connectionName: "x y\nz" }).connectionNames.subscriber).toBe("x_y_z:sub");
  });

  it("drops malformed and misrouted payloads, reporting them", async () => {
    const b = bus();
    const { t, d } = ids();
    const c = collector();
    await b.subscribe(t, d, c.fn);
    const channel = b.channelFor(t, d);
    await admin.publish(channel, "not json");
    await admin.publish(channel, JSON.stringify({ tenantId: t, discussionId: d }));
    await admin.publish(channel, JSON.stringify(msg("other-tenant", d, 1)));
    await admin.publish(channel, JSON.stringify(msg(t, d, 2)));
    await vi.waitFor(() => expect(c.got).toEqual([msg(t, d, 2)]), WAIT);
    expect(errors).toHaveLength(3);
  });

  it("holds one Redis subscription per channel and instance, reference-counted", async () => {
    const b = bus();
    const other = bus();
    const { t, d } = ids();
    const channel = b.channelFor(t, d);
    expect(await numsub(channel)).toBe(0);

    const off1 = await b.subscribe(t, d, () => {});
    const off2 = await b.subscribe(t, d, () => {});
    expect(await numsub(channel)).toBe(1);

    const offOther = await other.subscribe(t, d, () => {});
    await expect.poll(() => numsub(channel), { timeout: 2_000, interval: 20 }).toBe(2);
    await offOther();
    expect(await numsub(channel)).toBe(1);

    await off1();
    expect(await numsub(channel)).toBe(1);
    await off1(); // idempotent: must not drop the second listener's subscription
    expect(await numsub(channel)).toBe(1);
    await off2();
    expect(await numsub(channel)).toBe(0);
  });

  it("ends with exactly the right subscriptions after concurrent subscribe/unsubscribe", async () => {
    const b = bus();
    const { t, d } = ids();
    const channel = b.channelFor(t, d);

    // 20 first listeners at once: one SUBSCRIBE shared by all.
    const offs = await Promise.all(Array.from({ length: 20 }, () => b.subscribe(t, d, () => {})));
    expect(await numsub(channel)).toBe(1);

    // The last listener leaves while a new one arrives: UNSUBSCRIBE and SUBSCRIBE race.
    const c = collector();
    const [offNew] = await Promise.all([b.subscribe(t, d, c.fn), ...offs.map((off) => off())]);
    expect(await numsub(channel)).toBe(1);
    await b.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(c.got).toHaveLength(1), WAIT);

    // Leave, and meanwhile subscribe-then-leave: nothing may stay behind.
    await Promise.all([offNew(), b.subscribe(t, d, () => {}).then((off) => off())]);
    expect(await numsub(channel)).toBe(0);

    // Random churn over several channels, then check Redis against the local listeners.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const discs = ["x", "y", "z"].map((s) => `${d}-${s}`);
    const live = new Map<string, (() => Promise<void>)[]>(discs.map((x) => [x, []]));
    for (let round = 0; round < 10; round++) {
      const ops: Promise<void>[] = [];
      for (let i = 0; i < 15; i++) {
        const disc = discs[Math.floor(rand() * discs.length)]!;
        const list = live.get(disc)!;
        if (list.length > 0 && rand() < 0.55) {
          ops.push(list.splice(Math.floor(rand() * list.length), 1)[0]!());
        } else {
          ops.push(b.subscribe(t, disc, () => {}).then((off) => void list.push(off)));
        }
      }
      await Promise.all(ops);
      for (const disc of discs) {
        expect(await numsub(b.channelFor(t, disc))).toBe(live.get(disc)!.length > 0 ? 1 : 0);
      }
    }
    await Promise.all([...live.values()].flat().map((off) => off()));
    expect(await channelsOfRun()).toEqual([]);
  });

  it("leaves no subscription behind when a subscribe gives up while its SUBSCRIBE is in flight", async () => {
    const proxy = await stallableProxy();
    try {
      const b = bus({ url: proxy.url, operationTimeoutMs: 200 });
      const { t, d } = ids();
      const channel = b.channelFor(t, d);
      // Make sure the connections are up before stalling the path.
      const warm = await b.subscribe(t, `${d}-warm`, () => {});
      await warm();

      proxy.hold();
      const started = Date.now();
      await expect(b.subscribe(t, d, () => {})).rejects.toBeInstanceOf(BusTimeoutError);
      await expect(b.publish(msg(t, d, 1))).rejects.toBeInstanceOf(BusTimeoutError);
      expect(Date.now() - started).toBeLessThan(2000); // bounded, not a hang
      proxy.release();

      // The SUBSCRIBE lands late; the bus must then UNSUBSCRIBE since nobody listens any more.
      await vi.waitFor(async () => expect(await numsub(channel)).toBe(0), WAIT);
      // And the channel is usable again afterwards.
      const c = collector();
      await b.subscribe(t, d, c.fn);
      expect(await numsub(channel)).toBe(1);
      await admin.publish(channel, JSON.stringify(msg(t, d, 2)));
      await vi.waitFor(() => expect(c.got.map((m) => m.seq)).toEqual([2]), WAIT);
    } finally {
      await proxy.close();
    }
  });

  it("fires onReconnect after the subscriber connection is killed, and messages flow again", async () => {
    const publisher = bus();
    const subscriber = bus();
    const { t, d } = ids();
    const channel = subscriber.channelFor(t, d);
    const c = collector();
    await subscriber.subscribe(t, d, c.fn);
    const other = collector();
    await subscriber.subscribe(t, `${d}-2`, other.fn);

    let reconnects = 0;
    const deliveredWhenFired: number[] = [];
    subscriber.onReconnect(() => {
      reconnects++;
      // Fired only once the subscriptions are live again: a publish now must arrive.
      void publisher.publish(msg(t, d, 100 + reconnects));
      deliveredWhenFired.push(c.got.length);
    });
    const removed = vi.fn();
    subscriber.onReconnect(removed)();
    await new Promise((r) => setTimeout(r, 50));
    expect(reconnects).toBe(0); // not for the first connect

    await admin.client("KILL", "ID", await clientIdByName(subscriber.connectionNames.subscriber));
    await vi.waitFor(() => expect(reconnects).toBe(1), WAIT);
    await vi.waitFor(() => expect(c.got.map((m) => m.seq)).toEqual([101]), WAIT);
    expect(await numsub(channel)).toBe(1);
    expect(await numsub(subscriber.channelFor(t, `${d}-2`))).toBe(1);

    await publisher.publish(msg(t, `${d}-2`, 1));
    await vi.waitFor(() => expect(other.got).toHaveLength(1), WAIT);
    expect(removed).not.toHaveBeenCalled();

    // Losing the publisher connection is not a subscriber reconnect; publishing recovers.
    await admin.client("KILL", "ID", await clientIdByName(publisher.connectionNames.publisher));
    await vi.waitFor(async () => {
      await publisher.publish(msg(t, d, 200));
      expect(c.got.some((m) => m.seq === 200)).toBe(true);
    }, WAIT);
    expect(reconnects).toBe(1);

    // A second kill fires again.
    await admin.client("KILL", "ID", await clientIdByName(subscriber.connectionNames.subscriber));
    await vi.waitFor(() => expect(reconnects).toBe(2), WAIT);
    await vi.waitFor(() => expect(c.got.some((m) => m.seq === 102)).toBe(true), WAIT);
  });

  it("subscribes made while the subscriber connection is down go live after the reconnect", async () => {
    const publisher = bus();
    const subscriber = bus();
    const { t, d } = ids();
    await subscriber.subscribe(t, `${d}-keep`, () => {});
    const reconnected = new Promise<void>((resolve) => subscriber.onReconnect(resolve));
    await admin.client("KILL", "ID", await clientIdByName(subscriber.connectionNames.subscriber));
    const c = collector();
    const off = await subscriber.subscribe(t, d, c.fn);
    await reconnected;
    await publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(c.got).toHaveLength(1), WAIT);
    await off();
    expect(await numsub(subscriber.channelFor(t, d))).toBe(0);
  });

  it("releases its Redis connections on close()", async () => {
    const b = bus();
    const { t, d } = ids();
    await b.subscribe(t, d, () => {});
    await b.publish(msg(t, d, 1));
    await b.close();
    await vi.waitFor(async () => {
      const list = (await admin.client("LIST")) as string;
      expect(list).not.toContain(`name=${b.connectionNames.subscriber}`);
      expect(list).not.toContain(`name=${b.connectionNames.publisher}`);
    }, WAIT);
    expect(await numsub(b.channelFor(t, d))).toBe(0);
  });
});
