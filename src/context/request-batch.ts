// One statement per request for every object its resolvers ask about (a page of 20 comments costs
// one, not 20): the first call of an execution step opens the request's batch, every resolver of
// that step adds its key before the batch runs (at the next turn of the event loop), and each call
// reads its own answer from the batch's result. A later step opens a batch of its own.
import type { RequestContext } from "./request.js";

/** `run` gets the batch's keys, each once; the loader it returns answers each call with `run`'s result. */
export function requestBatch<R>(
  run: (ctx: RequestContext, keys: string[]) => Promise<R>,
): (ctx: RequestContext, key: string) => Promise<R> {
  const batches = new WeakMap<RequestContext, { keys: Set<string>; result: Promise<R> }>();
  return (ctx, key) => {
    let batch = batches.get(ctx);
    if (!batch) {
      const keys = new Set<string>();
      const result = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        batches.delete(ctx);
        return run(ctx, [...keys]);
      });
      batch = { keys, result };
      batches.set(ctx, batch);
    }
    batch.keys.add(key);
    return batch.result;
  };
}
