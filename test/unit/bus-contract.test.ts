/**
 * Behaviour every EventBus implementation shares, run against the in-process bus and against the
 * Redis bus (there with two bus instances: one publishes, the other subscribes, like two servers).
 * Redis-only behaviour (reference counting, reconnects, timeouts) is in bus-redis.test.ts.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BusClosedError, createBus, createMemoryBus, createRedisBus } from "../../src/events/bus.js";
import type { BusMessage, EventBus, ReaderPoke } from "../../src/events/bus.js";
import { MAX_INLINE_BYTES } from "../../src/events/bus-shared.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `test-${randomUUID()}`;

interface Harness {
  publisher: EventBus;
  subscriber: EventBus;
  errors: Error[];
  close(): Promise<void>;
}

const implementations: { name: string; make: () => Harness }[] = [
  {
    name: "memory",
    make() {
      const errors: Error[] = [];
      const bus = createMemoryBus({ onError: (e) => errors.push(e) });
      return { publisher: bus, subscriber: bus, errors, close: () => bus.close() };
    },
  },
  {
    name: "redis (two instances)",
    make() {
      const errors: Error[] = [];
      const onError = (e: Error) => errors.push(e);
      const publisher = createRedisBus({ url: REDIS_URL, channelPrefix: PREFIX, onError });
      const subscriber = createRedisBus({ url: REDIS_URL, channelPrefix: PREFIX, onError });
      return {
        publisher,
        subscriber,
        errors,
        close: async () => {
          await Promise.all([publisher.close(), subscriber.close()]);
        },
      };
    },
  },
];

function msg(tenantId: string, discussionId: string, seq: number, envelope?: unknown): BusMessage {
  const m: BusMessage = { tenantId, discussionId, seq, eventId: `ev-${seq}` };
  if (envelope !== undefined) m.envelope = envelope;
  return m;
}

function collector() {
  const got: BusMessage[] = [];
  return { got, fn: (m: BusMessage) => void got.push(m) };
}

/** Ids unique per test so runs and tests never share a channel. */
function ids() {
  const u = randomUUID().slice(0, 8);
  return { t: `tenant-${u}`, d: `disc-${u}` };
}

describe.each(implementations)("EventBus contract: $name", ({ make }) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  /**
   * Publishes a fence message on a channel of its own and waits for it: everything published
   * before it (same publisher) has been delivered by then, so "not received" can be asserted.
   */
  async function fence(): Promise<void> {
    const { t, d } = ids();
    const c = collector();
    const off = await h.subscriber.subscribe(t, d, c.fn);
    await h.publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(c.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    await off();
  }

  it("delivers a published message, envelope included, to a subscriber", async () => {
    h = make();
    const { t, d } = ids();
    const c = collector();
    const off = await h.subscriber.subscribe(t, d, c.fn);
    const envelope = {
      id: "ev-7",
      seq: 7,
      type: "comment_created",
      tenantId: t,
      discussionId: d,
      occurredAt: "2026-11-21T10:00:00.000Z",
      data: { comment: { id: "c1", body: "multi\nline ✓", reactions: { like: 3 } } },
    };
    // No waiting between subscribe resolving and publishing: resolved means live.
    await h.publisher.publish(msg(t, d, 7, envelope));
    await vi.waitFor(() => expect(c.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    expect(c.got[0]).toEqual({ tenantId: t, discussionId: d, seq: 7, eventId: "ev-7", envelope });
    await off();
  });

  it("sends a message over MAX_INLINE_BYTES without its envelope and audience (listeners read the log), one under it whole", async () => {
    h = make();
    const { t, d } = ids();
    const c = collector();
    const off = await h.subscriber.subscribe(t, d, c.fn);
    const sized = (bytes: number) => ({ id: "ev", data: { body: "é".repeat(bytes / 2) } });
    await h.publisher.publish({ ...msg(t, d, 1, sized(MAX_INLINE_BYTES - 4_096)), audience: "all", readerId: null });
    await h.publisher.publish({ ...msg(t, d, 2, sized(MAX_INLINE_BYTES + 2)), audience: "moderators", readerId: null });
    await vi.waitFor(() => expect(c.got).toHaveLength(2), { timeout: 5000, interval: 5 });
    expect(c.got[0]).toMatchObject({ seq: 1, audience: "all", readerId: null });
    expect(c.got[0]?.envelope).toEqual(sized(MAX_INLINE_BYTES - 4_096));
    expect(c.got[1]).toEqual({ tenantId: t, discussionId: d, seq: 2, eventId: "ev-2" });
    await off();
  });

  it("hands listeners a copy, never the publisher's object", async () => {
    h = make();
    const { t, d } = ids();
    const c = collector();
    await h.subscriber.subscribe(t, d, c.fn);
    const published = msg(t, d, 1, { when: new Date("2026-01-01T00:00:00.000Z") });
    await h.publisher.publish(published);
    await vi.waitFor(() => expect(c.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    expect(c.got[0]).not.toBe(published);
    // Travels as JSON on every implementation, so a Date arrives as its ISO string.
    expect(c.got[0]?.envelope).toEqual({ when: "2026-01-01T00:00:00.000Z" });
  });

  it("isolates tenants and discussions, also when ids contain the separator", async () => {
    h = make();
    const u = randomUUID().slice(0, 8);
    const pairs: [string, string][] = [
      [`t1-${u}`, "d1"],
      [`t1-${u}`, "d2"],
      [`t2-${u}`, "d1"],
      [`${u}:a`, "b"], // a naive `${t}:${d}` channel would be the same for these two
      [u, "a:b"],
      [`sp ce/%-${u}`, "ü.x_y"],
    ];
    const cs = pairs.map(() => collector());
    const offs = await Promise.all(pairs.map(([t, d], i) => h.subscriber.subscribe(t, d, cs[i]!.fn)));
    for (const [i, [t, d]] of pairs.entries()) await h.publisher.publish(msg(t, d, i + 1));
    // One subscriber connection receives in publish order: once the last one arrived, any
    // stray delivery would have arrived too.
    await vi.waitFor(() => expect(cs.at(-1)!.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    for (const [i, [t, d]] of pairs.entries()) {
      expect(cs[i]!.got).toEqual([msg(t, d, i + 1)]);
    }
    await Promise.all(offs.map((off) => off()));
  });

  it("delivers reader pokes on the reader's own channel only, apart from a discussion of the same id", async () => {
    h = make();
    const { t, d } = ids();
    const pokes: ReaderPoke[] = [];
    const other: ReaderPoke[] = [];
    const events = collector();
    const off = await h.subscriber.subscribeReader(t, d, (p) => void pokes.push(p));
    const offOther = await h.subscriber.subscribeReader(t, `${d}-2`, (p) => void other.push(p));
    // a discussion named like the reader shares nothing with the reader's channel
    const offEvents = await h.subscriber.subscribe(t, d, events.fn);
    await h.publisher.pokeReader({ tenantId: t, readerId: d });
    await h.publisher.pokeReader({ tenantId: t, readerId: d, unreadCount: 3 });
    await h.publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(events.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    expect(pokes).toEqual([
      { tenantId: t, readerId: d },
      { tenantId: t, readerId: d, unreadCount: 3 },
    ]);
    expect(other).toEqual([]);
    await off();
    await h.publisher.pokeReader({ tenantId: t, readerId: d });
    await fence();
    expect(pokes).toHaveLength(2);
    await Promise.all([offOther(), offEvents()]);
    expect(h.errors).toEqual([]);
  });

  it("delivers to every listener of a channel; unsubscribing one keeps the others", async () => {
    h = make();
    const { t, d } = ids();
    const a = collector();
    const b = collector();
    const offA = await h.subscriber.subscribe(t, d, a.fn);
    const offB = await h.subscriber.subscribe(t, d, b.fn);
    await h.publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect([a.got.length, b.got.length]).toEqual([1, 1]), { timeout: 5000, interval: 5 });

    await offA();
    await h.publisher.publish(msg(t, d, 2));
    await vi.waitFor(() => expect(b.got).toHaveLength(2), { timeout: 5000, interval: 5 });
    expect(a.got.map((m) => m.seq)).toEqual([1]);

    await offB();
    await h.publisher.publish(msg(t, d, 3));
    await fence();
    expect(a.got.map((m) => m.seq)).toEqual([1]);
    expect(b.got.map((m) => m.seq)).toEqual([1, 2]);
  });

  it("registers the same function twice; each unsubscribe (idempotent) removes one", async () => {
    h = make();
    const { t, d } = ids();
    const c = collector();
    const off1 = await h.subscriber.subscribe(t, d, c.fn);
    const off2 = await h.subscriber.subscribe(t, d, c.fn);
    await h.publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(c.got).toHaveLength(2), { timeout: 5000, interval: 5 });

    await off1();
    await off1(); // must not remove the second registration
    await h.publisher.publish(msg(t, d, 2));
    await fence();
    expect(c.got.map((m) => m.seq)).toEqual([1, 1, 2]);
    await off2();
  });

  it("keeps delivering to the other listeners when one throws", async () => {
    h = make();
    const { t, d } = ids();
    const before = collector();
    const after = collector();
    await h.subscriber.subscribe(t, d, before.fn);
    await h.subscriber.subscribe(t, d, () => {
      throw new Error("listener bug");
    });
    await h.subscriber.subscribe(t, d, after.fn);
    await h.publisher.publish(msg(t, d, 1));
    await h.publisher.publish(msg(t, d, 2));
    await vi.waitFor(() => expect(after.got).toHaveLength(2), { timeout: 5000, interval: 5 });
    expect(before.got).toHaveLength(2);
    expect(h.errors.map((e) => e.message)).toEqual(["listener bug", "listener bug"]);
  });

  it("keeps the publish order within a discussion", async () => {
    h = make();
    const { t, d } = ids();
    const c = collector();
    await h.subscriber.subscribe(t, d, c.fn);
    await Promise.all(Array.from({ length: 50 }, (_, i) => h.publisher.publish(msg(t, d, i + 1))));
    await vi.waitFor(() => expect(c.got).toHaveLength(50), { timeout: 5000, interval: 5 });
    expect(c.got.map((m) => m.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("ends consistent after concurrent subscribes and unsubscribes of one channel", async () => {
    h = make();
    const { t, d } = ids();
    // Deterministic pseudo-random interleaving.
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    type Entry = { c: ReturnType<typeof collector>; off?: () => Promise<void>; removed: boolean };
    const entries: Entry[] = [];
    for (let round = 0; round < 5; round++) {
      const ops: Promise<void>[] = [];
      for (let i = 0; i < 20; i++) {
        const live = entries.filter((e) => e.off && !e.removed);
        if (live.length > 0 && rand() < 0.5) {
          const e = live[Math.floor(rand() * live.length)]!;
          e.removed = true;
          ops.push(e.off!());
        } else {
          const e: Entry = { c: collector(), removed: false };
          entries.push(e);
          ops.push(
            h.subscriber.subscribe(t, d, e.c.fn).then((off) => {
              e.off = off;
            }),
          );
        }
      }
      await Promise.all(ops);
    }
    // Leave the channel empty, then bring back exactly one listener, concurrently.
    const last = collector();
    const [lastOff] = await Promise.all([
      h.subscriber.subscribe(t, d, last.fn),
      ...entries.filter((e) => !e.removed).map((e) => ((e.removed = true), e.off!())),
    ]);
    for (const e of entries) e.c.got.length = 0;

    await h.publisher.publish(msg(t, d, 1));
    await vi.waitFor(() => expect(last.got).toHaveLength(1), { timeout: 5000, interval: 5 });
    await fence();
    expect(entries.every((e) => e.c.got.length === 0)).toBe(true);

    await lastOff();
    await h.publisher.publish(msg(t, d, 2));
    await fence();
    expect(last.got.map((m) => m.seq)).toEqual([1]);
  });

  it("rejects invalid messages and any use after close()", async () => {
    h = make();
    const { t, d } = ids();
    await expect(h.publisher.publish({ tenantId: "", discussionId: d, seq: 1, eventId: "e" })).rejects.toThrow(TypeError);
    await expect(h.publisher.publish({ tenantId: t, discussionId: d, seq: Number.NaN, eventId: "e" })).rejects.toThrow(TypeError);
    const off = await h.subscriber.subscribe(t, d, () => {});
    await h.close();
    await h.close(); // idempotent
    await expect(h.publisher.publish(msg(t, d, 1))).rejects.toBeInstanceOf(BusClosedError);
    await expect(h.subscriber.subscribe(t, d, () => {})).rejects.toBeInstanceOf(BusClosedError);
    await expect(off()).resolves.toBeUndefined();
  });
});

describe("createBus", () => {
  it("uses the in-process bus without a Redis URL and Redis with one", async () => {
    const memory = createBus({});
    const redis = createBus({ redisUrl: REDIS_URL, channelPrefix: PREFIX });
    try {
      expect("connectionNames" in memory).toBe(false);
      expect("connectionNames" in redis).toBe(true);
      const { t, d } = ids();
      for (const bus of [memory, redis]) {
        const c = collector();
        await bus.subscribe(t, d, c.fn);
        await bus.publish(msg(t, d, 1));
        await vi.waitFor(() => expect(c.got).toHaveLength(1), { timeout: 5000, interval: 5 });
      }
    } finally {
      await Promise.all([memory.close(), redis.close()]);
    }
  });

  it("never fires onReconnect on the in-process bus, and delivers asynchronously", async () => {
    const bus = createMemoryBus();
    const fired = vi.fn();
    bus.onReconnect(fired)();
    const c = collector();
    await bus.subscribe("t", "d", c.fn);
    const p = bus.publish(msg("t", "d", 1));
    expect(c.got).toHaveLength(0); // not synchronously inside publish()
    await p;
    await vi.waitFor(() => expect(c.got).toHaveLength(1), { timeout: 1000, interval: 1 });
    expect(fired).not.toHaveBeenCalled();
    await bus.close();
  });
});
