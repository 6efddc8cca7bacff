/**
 * Deliveries of another kind than webhook (jobs.ts `JobKind`): rows of the same queue whose request a
 * feature composes when the worker has claimed them. The worker keeps everything else as it is for
 * webhooks — the claim, the lease and its renewal, the attempt's timeout, the outcome and its retry
 * with backoff (the tenant's `delivery` settings), the claim token that guards the outcome — so a
 * feature's jobs get the queue's guarantees without a queue of their own. The composers are built by
 * the composition root (src/runtime.ts) and handed to the webhook runtime: the chat alerts'
 * (src/modules/alerts/engine/alert-jobs.ts).
 */
import type { JobKind } from "./jobs.js";
import type { MessageSnapshot } from "./job-context.js";
import type { DeliveryTunables } from "./tunables.js";

/** The one POST a claimed job makes now (JSON; the worker adds Content-Type). */
export interface ComposedRequest {
  url: string;
  body: string;
  headers?: Record<string, string>;
  /**
   * The same POST with other headers, sent once in the same attempt when the receiver answers the
   * first one 400 or 401 (a double knock: the ActivityPub composer's signature by the other spec);
   * its answer is then the attempt's. The headers are made only then.
   */
  fallback?: { headers: () => Promise<Record<string, string>> };
}

/**
 * A request; or why the job sends nothing at all (it ends `failed` with this as its last error); or
 * a time before which it must not be tried (its target's circuit is open: given back, no attempt counted);
 * or, for a job that makes its own request (a webmention's verification GETs its source:
 * src/modules/webmention/engine/verify.ts), that it is done (it ends `succeeded`, `done` saying how);
 * or, for a job that stands for many (a federated discussion's event: its activity to each inbox,
 * src/modules/federation/engine/outbound.ts), the jobs it becomes: `messages`, each a job of `kind`
 * of the same tenant, due now, inserted by the statement that ends this one `succeeded` (both or
 * neither: a lost claim inserts nothing); or, for a job that makes its own request and was refused
 * or could not reach its target (an email's SMTP server: src/modules/email/engine/sender.ts), that
 * the attempt failed (`fail` its error): retried after its backoff, or failed for good at its last.
 */
export type Composed =
  | ComposedRequest
  | { drop: string }
  | { defer: Date }
  | { done: string }
  | { fail: string }
  | { split: { kind: Exclude<JobKind, "webhook">; messages: unknown[] } };

/** What became of a composed request: 2xx or not, and the status (null: no answer); `fallback`: the answer is its fallback's. */
export interface SentOutcome {
  ok: boolean;
  statusCode: number | null;
  url: string;
  fallback: boolean;
}

export interface MessageComposer {
  /**
   * The kind's own retry rule over the tenant's `delivery` settings (an email's: 10 attempts, 30 s
   * doubling, as an SMTP server's temporary refusals need), where the kind's targets are not the tenant's endpoints.
   */
  tunables?: Partial<Pick<DeliveryTunables, "maxAttempts" | "backoffBaseMs">>;
  /** Composes a claimed job's request; a throw counts as a failed attempt (retried as one). */
  compose(job: MessageSnapshot & { attempts: number; claimToken: string }, now: Date): Promise<Composed>;
  /** Told each attempt's outcome (a per-target breaker: the ActivityPub domains'); a throw is logged, not retried. */
  settled?(outcome: SentOutcome, now: Date): Promise<void>;
}

/** A composer for each kind that is not a webhook. */
export type MessageComposers = Record<Exclude<JobKind, "webhook">, MessageComposer>;
