// Identical replays in flight at once share one read of the log (a reconnect storm); different
// ranges, or a replay after the first has finished, read again.
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
  it("serves 1,000 identical concurrent replays with one read, and reads again once it is done", async () => {
    const { reader, calls, release } = countingReader();
    const r = coalescingReplays(reader);
    const all = Array.from({ length: 1000 }, () => r.replay(key, 5, 9, window, new Date()));
    const other = r.replay(key, 4, 9, window, new Date());
    release();
    const results = await Promise.all([...all, other]);
    expect(results).toHaveLength(1001);
    expect(calls()).toBe(2);
    await r.replay(key, 5, 9, window, new Date());
    expect(calls()).toBe(3);
  });
});
