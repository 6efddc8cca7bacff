// The per-key gate of the write statements (src/lib/key-gate.ts): at most `limit` at once per key,
// the others in arrival order; a failure lets the next one in; other keys are not held up.
import { describe, expect, it, vi } from "vitest";
import { GateWaitTimeout, keyGate } from "../../src/lib/key-gate.js";

function deferred() {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((ok, no) => ((resolve = ok), (reject = no)));
  return { promise, resolve, reject };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("keyGate", () => {
  it("runs at most `limit` per key at once, the rest in arrival order, other keys freely", async () => {
    const gate = keyGate(2, 60_000);
    const started: string[] = [];
    const jobs = new Map<string, ReturnType<typeof deferred>>();
    const run = (key: string, name: string) =>
      gate(key, () => {
        started.push(name);
        const d = deferred();
        jobs.set(name, d);
        return d.promise;
      });
    const all = [run("d", "a1"), run("d", "a2"), run("d", "a3"), run("d", "a4"), run("e", "b1")];
    const settled = Promise.allSettled(all);
    await turn();
    expect(started).toEqual(["a1", "a2", "b1"]);
    jobs.get("a2")!.resolve();
    await turn();
    expect(started).toEqual(["a1", "a2", "b1", "a3"]);
    jobs.get("a1")!.reject(new Error("refused"));
    await turn();
    expect(started).toEqual(["a1", "a2", "b1", "a3", "a4"]);
    for (const name of ["a3", "a4", "b1"]) jobs.get(name)!.resolve();
    const outcomes = await settled;
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
  });

  it("passes on the value and the error of what it runs", async () => {
    const gate = keyGate(1, 60_000);
    await expect(gate("k", async () => 42)).resolves.toBe(42);
    await expect(gate("k", async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    await expect(gate("k", async () => "again")).resolves.toBe("again");
  });
});

describe("keyGate's wait", () => {
  it("gives up after maxWaitMs behind a stalled call, without running; the next in line still gets its turn", async () => {
    vi.useFakeTimers();
    try {
      const gate = keyGate(1, 1_000);
      const stalled = deferred();
      const first = gate("k", () => stalled.promise);
      let ran = false;
      const outcome = gate("k", async () => void (ran = true)).then(
        () => "ran",
        (e: unknown) => e,
      );
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await outcome).toBeInstanceOf(GateWaitTimeout);
      expect(ran).toBe(false);
      const third = gate("k", async () => "third");
      stalled.resolve();
      await first;
      await expect(third).resolves.toBe("third");
    } finally {
      vi.useRealTimers();
    }
  });
});
