// At most `limit` calls at once per key, the others waiting their turn in order: the writes to one
// hot discussion (or comment) wait here, in this process, rather than as backends queued on one
// row's lock in PostgreSQL, where every commit wakes each waiter to recheck the row (CPU that grows
// with the number of waiters). Keys with nothing running or waiting take no memory.

export type KeyGate = <T>(key: string, run: () => Promise<T>) => Promise<T>;

export function keyGate(limit: number): KeyGate {
  const gates = new Map<string, { running: number; waiting: (() => void)[] }>();

  const release = (key: string) => {
    const g = gates.get(key)!;
    const next = g.waiting.shift();
    if (next)
      next(); // the slot passes to the next in line
    else if (--g.running === 0) gates.delete(key);
  };

  return async (key, run) => {
    let g = gates.get(key);
    if (!g) gates.set(key, (g = { running: 0, waiting: [] }));
    if (g.running < limit) g.running++;
    else await new Promise<void>((resolve) => g.waiting.push(resolve));
    try {
      return await run();
    } finally {
      release(key);
    }
  };
}
