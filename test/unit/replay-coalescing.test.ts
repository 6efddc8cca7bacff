// Identical replays share one read of the log while it is in flight and for keepMs after it was
// asked for (a reconnect storm); different ranges, or a replay once that time has passed, read again.
import { describe, expect, it } from "vitest";
import { coalescingReplays, type EventLogReader, type ReplayResult } from "../../src/events/replay.js";

function countingReader(): { reader: EventLogReader; calls: () => number; release: () => void } {
  let calls = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reader: EventLogReader = {
    head: async () => 0,
    after: async () => [],
    heads: async () => new Map(),
    opening: async () => ({ head: null, events: [], truncated: false }),
    replay: async (_key, after, head): Promise<ReplayResult> => {
      calls++;
      await gate;
      return { events: [], truncated: after + 1 < head - 10 };
    },
  };
  return { reader, calls: () => calls, release };
}

const key = { tenantId: "t", discussionId: "d" };
const window = { maxEvents: 1000, maxAgeSeconds: 86_400 };

describe("coalescingReplays", () => {
  it("serves 1,000 identical concurrent replays with one read, keeps it for keepMs, then reads again", async () => {
    const { reader, calls, release } = countingReader();
    const r = coalescingReplays(reader, { keepMs: 1_000 });
    const t0 = new Date("2026-11-22T12:00:00.000Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    const all = Array.from({ length: 1000 }, () => r.replay(key, 5, 9, window, t0));
    const other = r.replay(key, 4, 9, window, t0);
    release();
    const results = await Promise.all([...all, other]);
    expect(results).toHaveLength(1001);
    expect(calls()).toBe(2);
    // finished, but within keepMs of the read: the same result
    expect(await r.replay(key, 5, 9, window, at(999))).toBe(results[0]);
    expect(calls()).toBe(2);
    // a new head is another range
    await r.replay(key, 5, 10, window, at(999));
    expect(calls()).toBe(3);
    // past keepMs: read again
    await r.replay(key, 5, 9, window, at(1_000));
    expect(calls()).toBe(4);
  });

  it("does not keep a failed read", async () => {
    let calls = 0;
    const failing: EventLogReader = {
      head: async () => 0,
      after: async () => [],
      heads: async () => new Map(),
      opening: async () => ({ head: null, events: [], truncated: false }),
      replay: async () => {
        calls++;
        throw new Error("database down");
      },
    };
    const r = coalescingReplays(failing);
    const now = new Date();
    await expect(r.replay(key, 1, 2, window, now)).rejects.toThrow("database down");
    await expect(r.replay(key, 1, 2, window, now)).rejects.toThrow("database down");
    expect(calls).toBe(2);
  });
});
