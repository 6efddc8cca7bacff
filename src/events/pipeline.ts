// What happens after a write that appended events has committed (write statements, ./statement.ts,
// call it once the statement is done):
//   publish     each event goes on the bus (./bus.ts) as its bus message (./fanout.ts), counted in
//               events_published_total by outcome; best effort: a failure is logged, and streams
//               recover anything missed from the log by seq
//   jobsQueued  the write queued webhook delivery jobs: the local webhook worker is woken
// Built once by the composition root (src/runtime.ts) from the bus, the metrics and the worker's nudge.
import type { Logger } from "pino";
import type { Metrics } from "../lib/metrics.js";
import type { EventBus } from "./bus.js";
import { busMessageOf } from "./fanout.js";
import type { StoredEvent } from "./types.js";

export interface EventPipeline {
  /** After the commit: fan-out of the committed events. */
  publish(events: StoredEvent[]): void;
  /** After the commit of a write that queued webhook delivery jobs. */
  jobsQueued(): void;
}

export interface EventPipelineDeps {
  bus: Pick<EventBus, "publish">;
  metrics: Pick<Metrics, "eventsPublished">;
  /** wakes the local webhook worker to claim the jobs just queued */
  nudgeWorker: () => void;
  log: Logger;
}

export function createEventPipeline({ bus, metrics, nudgeWorker, log }: EventPipelineDeps): EventPipeline {
  const published = () => void metrics.eventsPublished.inc({ outcome: "ok" });
  return {
    publish(events) {
      for (const e of events) {
        bus.publish(busMessageOf(e)).then(published, (err: unknown) => {
          metrics.eventsPublished.inc({ outcome: "failed" });
          log.warn({ err, eventId: e.envelope.id }, "event publish failed; streams will catch up from the log");
        });
      }
    },
    jobsQueued: nudgeWorker,
  };
}
