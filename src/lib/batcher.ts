// Group commit for calls to a shared store (Redis): the calls for one key that arrive while the
// store is still answering that key's previous batch wait, and go out together as the next batch
// (the first batch also takes whatever arrives in the same event-loop turn). An idle key's call
// leaves at the end of the turn: no added latency at rest; under load one command serves many.

export interface BatchItem<I, R> {
  readonly value: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/** `send` settles every item of its batch; if it throws, the items it left unsettled reject with that error. */
export type SendBatch<I, R> = (key: string, items: BatchItem<I, R>[]) => Promise<void>;

/**
 * `gatherMs`: an idle key's first call waits that long for others before it leaves (0: the end of
 * the turn), trading that much latency for fewer, larger batches.
 */
export function keyedBatcher<I, R>(send: SendBatch<I, R>, gatherMs = 0): (key: string, value: I) => Promise<R> {
  const pending = new Map<string, BatchItem<I, R>[]>();
  const busy = new Set<string>();

  function flush(key: string): void {
    const items = pending.get(key);
    if (!items) return;
    pending.delete(key);
    busy.add(key);
    send(key, items)
      .catch((err: unknown) => {
        for (const item of items) item.reject(err); // a settled promise ignores a second settle
      })
      .finally(() => {
        busy.delete(key);
        if (pending.has(key)) flush(key);
      });
  }

  return (key, value) =>
    new Promise<R>((resolve, reject) => {
      let items = pending.get(key);
      if (!items) {
        pending.set(key, (items = []));
        if (!busy.has(key)) {
          if (gatherMs > 0) setTimeout(() => flush(key), gatherMs);
          else setImmediate(() => flush(key));
        }
      }
      items.push({ value, resolve, reject });
    });
}
