// What happens after a write that appended events has committed: the fan-out to every instance
// (best effort: streams recover anything missed from the log by seq) and, when the write queued
// webhook jobs, a wake-up for the local webhook worker. Built once by the composition root
// (src/runtime.ts); write statements (./statement.ts) drive it.
import type { Logger } from "pino";
import type { StoredEvent } from "./types.js";

export interface EventPipeline {
  /** After the commit: fan-out of the committed events. */
  publish(events: StoredEvent[]): void;
  /** After the commit of a write that queued webhook delivery jobs. */
  jobsQueued(): void;
}

export function createEventPipeline(opts: {
  publishOne: (event: StoredEvent) => Promise<void>;
  onJobsQueued: () => void;
  log: Logger;
}): EventPipeline {
  return {
    publish(events) {
      for (const e of events) {
        opts
          .publishOne(e)
          .catch((err: unknown) =>
            opts.log.warn({ err, eventId: e.envelope.id }, "event publish failed; streams will catch up from the log"),
          );
      }
    },
    jobsQueued: opts.onJobsQueued,
  };
}
