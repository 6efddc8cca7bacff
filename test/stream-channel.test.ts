// The fan-out core without HTTP, deterministic: StreamHub + Channel + Session over the in-process
// bus and an in-memory event log whose reads can be held, so "events arrive during the replay
// query", "a bus message is lost", "messages cross" and "the bus reconnects" happen on cue.
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryBus, type BusMessage, type EventBus } from "../src/events/bus.js";
import { busMessageOf } from "../src/events/fanout.js";
import type { LiveEvent } from "../src/stream-engine/live-event.js";
import { headKey, type EventLogReader } from "../src/events/replay.js";
import type { Audience, StoredEvent } from "../src/events/types.js";
import { DEFAULT_SETTINGS } from "../src/tenancy/settings/tree.js";
import { StreamHub } from "../src/stream-engine/hub.js";
import type { ConnectedInfo, EndReason, StreamSink } from "../src/stream-engine/session.js";

const T = "ten_1";
const D = "disc-1";
const WAIT = { timeout: 2000, interval: 2 };

function stored(seq: number, audience: Audience = "all", readerId: string | null = null): StoredEvent {
  return {
    envelope: {
      id: `ev-${seq}`,
      seq,
      type: "discussion_locked",
      tenantId: T,
      discussionId: D,
      occurredAt: new Date().toISOString(),
      data: { n: seq },
    },
    audience,
    readerId,
  };
}

/** The log: `commit` appends (as a committed transaction would), reads can be held open. */
function memoryLog() {
  const events: StoredEvent[] = [];
  let replayGate: Promise<void> | null = null;
  const calls = { after: 0, replay: 0, opening: 0 };
  const state = { missing: false };
  const reader: EventLogReader = {
    async head() {
      return events.length;
    },
    async after(_t, _d, afterSeq, limit) {
      calls.after++;
      return events.filter((e) => e.envelope.seq > afterSeq).slice(0, limit);
    },
    async replay(_k, after, head) {
      calls.replay++;
      const snapshot = events.filter((e) => e.envelope.seq > after && e.envelope.seq <= head);
      if (replayGate) await replayGate;
      return { events: snapshot, truncated: false };
    },
    async heads() {
      return new Map([[headKey(T, D), events.length]]);
    },
    async opening(_k, after) {
      calls.opening++;
      if (state.missing) return { head: null, events: [], truncated: false };
      const head = events.length;
      const snapshot = after === null ? [] : events.filter((e) => e.envelope.seq > after && e.envelope.seq <= head);
      if (replayGate) await replayGate;
      return { head, events: snapshot, truncated: false };
    },
  };
  return {
    reader,
    calls,
    set missing(v: boolean) {
      state.missing = v;
    },
    commit(audience: Audience = "all", readerId: string | null = null): StoredEvent {
      const e = stored(events.length + 1, audience, readerId);
      events.push(e);
      return e;
    },
    holdReplay() {
      let release!: () => void;
      replayGate = new Promise((r) => (release = r));
      return () => {
        replayGate = null;
        release();
      };
    },
  };
}

/** A bus whose reconnect can be fired by the test. */
function testBus(): EventBus & { reconnect(): void } {
  const inner = createMemoryBus();
  const listeners = new Set<() => void>();
  return {
    publish: (m) => inner.publish(m),
    subscribe: (t, d, l) => inner.subscribe(t, d, l),
    pokeReader: (p) => inner.pokeReader(p),
    subscribeReader: (t, r, l) => inner.subscribeReader(t, r, l),
    close: () => inner.close(),
    onReconnect(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    reconnect: () => listeners.forEach((l) => l()),
  };
}

class FakeSink implements StreamSink {
  connected: ConnectedInfo | null = null;
  seqs: number[] = [];
  ended: EndReason | null = null;
  closed = false;
  private cbs: (() => void)[] = [];
  open(info: ConnectedInfo) {
    this.connected = info;
  }
  event(ev: LiveEvent) {
    this.seqs.push(ev.seq);
    return true;
  }
  end(reason: EndReason) {
    this.ended = reason;
    this.close();
  }
  onClose(cb: () => void) {
    this.cbs.push(cb);
  }
  flushed() {
    return Promise.resolve();
  }
  close() {
    this.closed = true;
    this.cbs.splice(0).forEach((cb) => cb());
  }
}

const hubs: StreamHub[] = [];
function setup(options: Partial<StreamHub["options"]> = {}) {
  const log = memoryLog();
  const bus = testBus();
  const app = {
    config: { MAX_STREAMS_PER_INSTANCE: 100 },
    log: pino({ level: "silent" }),
    clock: { now: () => new Date() },
    prisma: {},
  } as any;
  const hub = new StreamHub({ app, bus, log: log.reader, options: { gapGraceMs: 20, headCheckMs: 60_000, ...options } });
  hubs.push(hub);
  const publish = (e: StoredEvent, strip = false) => {
    const m: BusMessage = busMessageOf(e);
    if (strip) delete m.envelope;
    return bus.publish(m);
  };
  const open = async (after: number | null, viewer = { moderator: false, readerId: null as string | null }) => {
    const sink = new FakeSink();
    await hub.open({ tenantId: T, discussionId: D, viewer, after, settings: DEFAULT_SETTINGS }, sink);
    return sink;
  };
  return { log, bus, hub, publish, open };
}

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.shutdown()));
});

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("stream fan-out core", () => {
  /**
   * Opens a client with Last-Event-ID 2 over 5 committed events while the log read it waits for
   * (`read`) is held open, and commits and publishes 3 more meanwhile: it must get 3..8 once each.
   */
  async function openDuringCommits(s: ReturnType<typeof setup>, read: "opening" | "replay") {
    for (let i = 0; i < 5; i++) s.log.commit();
    if (read === "replay") await s.open(null); // the channel exists: the next client's read is the replay alone
    const release = s.log.holdReplay();
    const opening = s.open(2);
    await vi.waitFor(() => expect(s.log.calls[read]).toBe(1), WAIT);
    for (let i = 0; i < 3; i++) await s.publish(s.log.commit());
    await new Promise((r) => setTimeout(r, 10));
    release();
    const sink = await opening;
    expect(sink.connected).toMatchObject({ replayed: 3, truncated: false });
    await vi.waitFor(() => expect(sink.seqs).toEqual(range(3, 8)), WAIT);
    return sink;
  }

  it("opens a discussion with no channel yet in one read of the log, merging live events that commit during it", async () => {
    const s = setup();
    const sink = await openDuringCommits(s, "opening");
    expect(s.log.calls).toMatchObject({ opening: 1, replay: 0, after: 0 });
    // a second client: the channel is there, so its one read is the replay
    const second = await s.open(6);
    expect(second.seqs).toEqual([7, 8]);
    expect(s.log.calls).toMatchObject({ opening: 1, replay: 1, after: 0 });
    await s.publish(s.log.commit());
    await vi.waitFor(() => expect(sink.seqs).toEqual(range(3, 9)), WAIT);
    await vi.waitFor(() => expect(second.seqs).toEqual([7, 8, 9]), WAIT);
  });

  it("404s an unknown discussion from the opening read and drops the channel", async () => {
    const { log, hub, open } = setup();
    log.missing = true;
    await expect(open(null)).rejects.toMatchObject({ status: 404 });
    expect(hub.stats()).toMatchObject({ sessions: 0, channels: 0 });
  });

  it("merges replay and live when events commit during the replay query: no duplicate, no gap", async () => {
    const s = setup();
    const sink = await openDuringCommits(s, "replay");
    await s.publish(s.log.commit());
    await vi.waitFor(() => expect(sink.seqs).toEqual(range(3, 9)), WAIT);
  });

  it("reads a gap from the log after the grace period and drops the late duplicate", async () => {
    const { log, publish, open } = setup();
    const sink = await open(null);
    const lost = log.commit(); // its message never arrives
    await publish(log.commit());
    await vi.waitFor(() => expect(sink.seqs).toEqual([1, 2]), WAIT);
    expect(log.calls.after).toBe(1);
    await publish(lost); // arrives late: a duplicate
    await publish(log.commit());
    await vi.waitFor(() => expect(sink.seqs).toEqual([1, 2, 3]), WAIT);
  });

  it("puts crossed messages back in order without reading the log", async () => {
    const { log, publish, open } = setup({ gapGraceMs: 200 });
    const sink = await open(null);
    const a = log.commit();
    const b = log.commit();
    await publish(b);
    await publish(a);
    await vi.waitFor(() => expect(sink.seqs).toEqual([1, 2]), WAIT);
    expect(log.calls.after).toBe(0);
  });

  it("reads the log at once for a message without its envelope", async () => {
    const { log, publish, open } = setup({ gapGraceMs: 10_000 });
    const sink = await open(null);
    await publish(log.commit(), true);
    await vi.waitFor(() => expect(sink.seqs).toEqual([1]), WAIT);
  });

  it("catches up from the log after a bus reconnect", async () => {
    const { log, bus, open } = setup({ gapGraceMs: 10_000 });
    const sink = await open(null);
    log.commit(); // published while the subscriber connection was down: lost
    log.commit();
    await new Promise((r) => setTimeout(r, 20));
    expect(sink.seqs).toEqual([]);
    bus.reconnect();
    await vi.waitFor(() => expect(sink.seqs).toEqual([1, 2]), WAIT);
  });

  it("catches up by the periodic head check when a publish was lost and nothing follows", async () => {
    const { log, open } = setup({ headCheckMs: 30 });
    const sink = await open(null);
    log.commit(); // never published
    await vi.waitFor(() => expect(sink.seqs).toEqual([1]), WAIT);
  });

  it("shares one bus subscription per discussion and drops it with the last session", async () => {
    const { hub, open } = setup();
    const a = await open(null);
    const b = await open(null);
    expect(hub.stats()).toMatchObject({ sessions: 2, channels: 1 });
    a.close();
    expect(hub.stats()).toMatchObject({ sessions: 1, channels: 1 });
    b.close();
    expect(hub.stats()).toMatchObject({ sessions: 0, channels: 0 });
  });

  it("applies visibility to live and replayed events and still advances past hidden ones", async () => {
    const { log, publish, open } = setup();
    log.commit("reader", "alice");
    log.commit("moderators");
    log.commit();
    const reader = await open(0, { moderator: false, readerId: "bob" });
    expect(reader.connected?.replayed).toBe(1);
    await publish(log.commit("reader", "bob"));
    await publish(log.commit("moderators"));
    await publish(log.commit());
    await vi.waitFor(() => expect(reader.seqs).toEqual([3, 4, 6]), WAIT);
  });

  it("shutdown ends every session with the shutdown reason", async () => {
    const { hub, open } = setup();
    const a = await open(null);
    await hub.shutdown();
    expect(a.ended).toBe("shutdown");
    await expect(open(null)).rejects.toMatchObject({ status: 503 });
  });
});
