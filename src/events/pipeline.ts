// What happens to an event besides its row: steps that must join the change's transaction (webhook
// jobs), and after the commit the fan-out to every instance. Built once by the composition root
// (src/runtime.ts) with the steps the app has; writeTx (./write-tx.ts) drives it.
import type { Logger } from "pino";
import type { Tx } from "./log.js";
import type { StoredEvent } from "./types.js";

/** Something to do once the transaction has committed (e.g. wake the webhook worker). */
export type AfterCommit = () => void;

/** Runs inside the change's transaction right after its event row is written. */
export type InTransactionStep = (tx: Tx, event: StoredEvent) => Promise<AfterCommit | undefined>;

export interface EventPipeline {
  /** Every in-transaction step for one event; returns what to run after the commit. */
  inTransaction(tx: Tx, event: StoredEvent): Promise<AfterCommit[]>;
  /**
   * After the commit: fan-out. Best effort: streams recover anything missed from the log by seq,
   * and webhooks are driven by their jobs, which committed with the event.
   */
  publish(events: StoredEvent[]): void;
}

export function createEventPipeline(opts: {
  steps: InTransactionStep[];
  publishOne: (event: StoredEvent) => Promise<void>;
  log: Logger;
}): EventPipeline {
  return {
    async inTransaction(tx, event) {
      const after: AfterCommit[] = [];
      for (const step of opts.steps) {
        const then = await step(tx, event);
        if (then) after.push(then);
      }
      return after;
    },
    publish(events) {
      for (const e of events) {
        opts.publishOne(e).catch((err: unknown) =>
          opts.log.warn({ err, eventId: e.envelope.id }, "event publish failed; streams will catch up from the log"),
        );
      }
    },
  };
}
