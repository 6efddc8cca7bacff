// Group commit (src/lib/batcher.ts): one send per key for the calls of one turn, then one per
// batch gathered while the previous send was in flight; failures reach every caller of the batch.
import { describe, expect, it, vi } from "vitest";
import { keyedBatcher, type BatchItem } from "../../src/lib/batcher.js";

function recorder() {
  const sends: { key: string; values: number[]; release: () => void }[] = [];
  const call = keyedBatcher<number, number>(
    (key, items: BatchItem<number, number>[]) =>
      new Promise<void>((resolve) => {
        sends.push({
          key,
          values: items.map((i) => i.value),
          release: () => {
            items.forEach((i) => i.resolve(i.value * 10));
            resolve();
          },
        });
      }),
  );
  return { sends, call };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("keyedBatcher", () => {
  it("sends the calls of one turn together, gathers the calls made meanwhile into the next batch", async () => {
    const { sends, call } = recorder();
    const first = [call("a", 1), call("a", 2), call("b", 3)];
    await turn();
    expect(sends.map((s) => [s.key, s.values])).toEqual([
      ["a", [1, 2]],
      ["b", [3]],
    ]);
    // "a" is in flight: these wait, even across turns
    const later = [call("a", 4)];
    await turn();
    later.push(call("a", 5));
    await turn();
    expect(sends).toHaveLength(2);
    sends[0]!.release();
    sends[1]!.release();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    await turn();
    expect(sends.map((s) => s.values)).toEqual([[1, 2], [3], [4, 5]]);
    sends[2]!.release();
    expect(await Promise.all(later)).toEqual([40, 50]);
    // idle again: the next call goes out at the end of its turn
    const alone = call("a", 6);
    await turn();
    expect(sends[3]!.values).toEqual([6]);
    sends[3]!.release();
    expect(await alone).toBe(60);
  });

  it("rejects every call of a batch whose send fails, and keeps serving the key", async () => {
    let fail = true;
    const call = keyedBatcher<number, number>(async (_key, items) => {
      if (fail) throw new Error("store down");
      for (const i of items) i.resolve(i.value);
    });
    const failed = await Promise.allSettled([call("k", 1), call("k", 2)]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await call("k", 3)).toBe(3);
  });
});

describe("keyedBatcher with gatherMs", () => {
  it("holds an idle key's first call that long, so calls of later turns join its batch", async () => {
    vi.useFakeTimers();
    try {
      const sends: number[][] = [];
      const call = keyedBatcher<number, void>(async (_key, items) => {
        sends.push(items.map((i) => i.value));
        for (const i of items) i.resolve();
      }, 5);
      const calls = [call("k", 1)];
      await vi.advanceTimersByTimeAsync(2);
      calls.push(call("k", 2)); // a later turn, within the window
      expect(sends).toEqual([]);
      await vi.advanceTimersByTimeAsync(3);
      await Promise.all(calls);
      expect(sends).toEqual([[1, 2]]);
    } finally {
      vi.useRealTimers();
    }
  });
});
