// After a transaction commits, its events are published for fan-out. Publishing is best effort:
// streams recover anything missed from the log by seq, and webhooks are driven by the log itself.
import type { Logger } from "pino";
import type { StoredEvent } from "./types.js";

export interface EventPublisher {
  publish(events: StoredEvent[]): void;
}

export type PublishFn = (event: StoredEvent) => Promise<void>;

export function createEventPublisher(publishOne: PublishFn, log: Logger): EventPublisher {
  return {
    publish(events) {
      for (const e of events) {
        publishOne(e).catch((err: unknown) =>
          log.warn({ err, eventId: e.envelope.id }, "event publish failed; streams will catch up from the log"),
        );
      }
    },
  };
}
