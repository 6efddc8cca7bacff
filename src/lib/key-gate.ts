// At most `limit` calls at once per key, the others waiting their turn in order: the writes to one
// hot discussion (or comment) wait here, in this process, rather than as backends queued on one
// row's lock in PostgreSQL, where every commit wakes each waiter to recheck the row (CPU that grows
// with the number of waiters). A call that waits `maxWaitMs` without its turn (what runs for its key
// is stalled) gives up without running. Keys with nothing running or waiting take no memory.

export interface KeyGate {
  <T>(key: string, run: () => Promise<T>): Promise<T>;
  /** calls waiting for their turn now, over every key */
  waiting(): number;
}

/** A call that waited `maxWaitMs` without its turn: it did not run. */
export class GateWaitTimeout extends Error {
  constructor(ms: number) {
    super(`waited ${ms} ms for a turn behind the calls stalled on the same key`);
    this.name = "GateWaitTimeout";
  }
}

export function keyGate(limit: number, maxWaitMs: number): KeyGate {
  const gates = new Map<string, { running: number; waiting: (() => void)[] }>();

  const release = (key: string) => {
    const g = gates.get(key)!;
    const next = g.waiting.shift();
    if (next) {
      next(); // the slot passes to the next in line
    } else if (--g.running === 0) gates.delete(key);
  };

  const turn = (g: { waiting: (() => void)[] }) =>
    new Promise<void>((resolve, reject) => {
      const take = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        g.waiting.splice(g.waiting.indexOf(take), 1);
        reject(new GateWaitTimeout(maxWaitMs));
      }, maxWaitMs);
      g.waiting.push(take);
    });

  const gate = async <T>(key: string, run: () => Promise<T>): Promise<T> => {
    let g = gates.get(key);
    if (!g) gates.set(key, (g = { running: 0, waiting: [] }));
    if (g.running < limit) g.running++;
    else await turn(g);
    try {
      return await run();
    } finally {
      release(key);
    }
  };
  return Object.assign(gate, { waiting: () => [...gates.values()].reduce((n, g) => n + g.waiting.length, 0) });
}
