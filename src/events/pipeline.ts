// What happens after a write that appended events has committed (write statements, ./statement.ts,
// call it once the statement is done):
//   publish     each event goes on the bus (./bus.ts) as its bus message (./fanout.ts), counted in
//               events_published_total by outcome; best effort: a failure is logged, and streams
//               recover anything missed from the log by seq. A `notification_reply` also pokes its
//               reader's channel: the reply wrote an item to their inbox in the same statement. The
//               events' discussions go to this instance's search projector, which applies them to
//               comment search's documents (src/modules/comments/engine/search-projector.ts; its
//               sweep finds what a lost nudge leaves behind).
//   jobsQueued  the write queued webhook delivery jobs: the local webhook worker is woken
//   inboxItems  inbox items committed for these readers (a reply's, or another writer's after its
//               own commit: announceInboxItems in src/modules/inbox/announce.ts): their own streams
//               (GET /api/v1/stream/me) read them from the database by seq
//   inboxRead   the reader marked items read: their streams send `inbox_read` with the count
// Built once by the composition root (src/runtime.ts) from the bus, the metrics and the workers' nudges.
import type { Logger } from "pino";
import type { Metrics } from "../lib/metrics.js";
import type { EventBus, ReaderPoke } from "./bus.js";
import { busMessageOf } from "./fanout.js";
import type { StoredEvent } from "./types.js";

export interface EventPipeline {
  /** After the commit: fan-out of the committed events. */
  publish(events: StoredEvent[]): void;
  /** After the commit of a write that queued webhook delivery jobs. */
  jobsQueued(): void;
  /** After the commit of inbox items for these readers: pokes each reader's channel (best effort). */
  inboxItems(tenantId: string, readerIds: Iterable<string>): void;
  /** After a reader's mark-read: their streams send `inbox_read` with this count (best effort). */
  inboxRead(tenantId: string, readerId: string, unreadCount: number): void;
}

export interface EventPipelineDeps {
  bus: Pick<EventBus, "publish" | "pokeReader">;
  metrics: Pick<Metrics, "eventsPublished">;
  /** wakes the local webhook worker to claim the jobs just queued */
  nudgeWorker: () => void;
  /** hands the discussions of committed events to the local search projector */
  nudgeSearch: (keys: { tenantId: string; discussionId: string }[]) => void;
  log: Logger;
}

export function createEventPipeline({ bus, metrics, nudgeWorker, nudgeSearch, log }: EventPipelineDeps): EventPipeline {
  const published = () => void metrics.eventsPublished.inc({ outcome: "ok" });
  // a lost poke is caught up by the streams' periodic check of the readers' inbox sequences
  const poke = (p: ReaderPoke) =>
    bus.pokeReader(p).catch((err: unknown) => log.warn({ err, readerId: p.readerId }, "reader poke failed; their streams will catch up"));
  const inboxItems = (tenantId: string, readerIds: Iterable<string>) => {
    for (const readerId of new Set(readerIds)) void poke({ tenantId, readerId });
  };
  return {
    publish(events) {
      for (const e of events) {
        bus.publish(busMessageOf(e)).then(published, (err: unknown) => {
          metrics.eventsPublished.inc({ outcome: "failed" });
          log.warn({ err, eventId: e.envelope.id }, "event publish failed; streams will catch up from the log");
        });
      }
      nudgeSearch(events.map((e) => ({ tenantId: e.envelope.tenantId, discussionId: e.envelope.discussionId })));
      const replied = events.flatMap((e) => (e.envelope.type === "notification_reply" && e.readerId ? [e] : []));
      for (const e of replied) inboxItems(e.envelope.tenantId, [e.readerId as string]);
    },
    jobsQueued: nudgeWorker,
    inboxItems,
    inboxRead(tenantId, readerId, unreadCount) {
      void poke({ tenantId, readerId, unreadCount });
    },
  };
}
