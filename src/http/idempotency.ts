// The Idempotency-Key header on writes (contract section 11; the IETF Idempotency-Key draft with
// Stripe's semantics), for the REST router and /graphql alike. `beginIdempotent` reads the header
// and claims the key for the caller's tenant: a repeat of a request that was answered gets that
// answer again (`Idempotent-Replayed: true`); the same key for another request is 422
// `idempotency_key_reused`; a repeat while the first still runs is 409 `idempotency_in_progress`.
// Otherwise the request runs with the claim in its context (its writes record their results in
// their own transactions: src/events/statement.ts, src/events/write-tx.ts) and `finishIdempotent`
// keeps its answer — unless nothing was written and it was refused (4xx) or failed (5xx), which
// are not kept, so a retry runs again.
import type { FastifyReply } from "fastify";
import { sha256 } from "../lib/sha256.js";
import { errors, type AppError } from "../lib/errors.js";
import { currentReader, loadTenant, type RequestContext } from "../context/request.js";
import { header, type HeaderBag } from "../context/headers.js";
import { resolveSettings } from "../tenancy/settings/resolve.js";
import type { Principal } from "../auth/principal.js";
import type { Claim, IdempotencyScope, StoredAnswer } from "../idempotency/records.js";

export const REPLAYED_HEADER = "Idempotent-Replayed";
/** 1–255 visible ASCII characters (the contract's rule; a quoted sf-string of the draft fits it too). */
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Headers of an answer a client needs back on a repeat (the others belong to each response). */
export const KEPT_HEADERS = ["content-type", "location"];

/** The request's Idempotency-Key; null without one; 400 `invalid_parameter` when malformed. */
export function idempotencyKeyOf(headers: HeaderBag): string | null {
  const raw = header(headers, "idempotency-key");
  if (raw === null) return null;
  const key = raw.trim();
  if (!KEY.test(key)) {
    throw errors.invalidParameter([{ path: "Idempotency-Key", message: "must be 1–255 visible ASCII characters" }]);
  }
  return key;
}

function credentialOf(p: Principal): string {
  if (p.kind === "admin") return `admin:${p.subject}`;
  if (p.kind === "operator") return `operator:${p.operatorId}`;
  if (p.kind === "alert_link") return `alert_link:${p.alertJobId}`;
  return `${p.kind}:${p.keyId}`;
}

export type Begun =
  /** run the request with `ctx.idempotency` set; then finishIdempotent */
  | { kind: "run"; scope: IdempotencyScope }
  /** answer this stored answer again */
  | { kind: "answered"; answer: StoredAnswer }
  | { kind: "refused"; error: AppError };

/**
 * Claims `key` for this request (method, path with its query, body, and who is calling: the
 * credential and, with an identity assertion, the reader). Call it once the caller is known.
 */
export async function beginIdempotent(
  ctx: RequestContext,
  key: string,
  request: { method: string; url: string; body: unknown },
  opts: { claimInWrite?: boolean } = {},
): Promise<Begun> {
  const principal = ctx.principal!;
  const tenant = await loadTenant(ctx);
  // an invalid assertion fails the request itself (401, not kept); it fingerprints as invalid here
  const reader = ctx.identityToken ? ((await currentReader(ctx).catch(() => null))?.id ?? "!invalid") : "";
  const fingerprint = sha256(JSON.stringify([request.method, request.url, credentialOf(principal), reader, request.body ?? null]), "hex");
  const settings = resolveSettings(tenant.settings);
  const input = { tenantId: tenant.id, key, fingerprint, now: ctx.app.clock.now(), ttlHours: settings.idempotency.ttlHours };
  // the write's own statement claims the key, unless an outside call (the moderation hook) runs
  // before it: then the key is claimed first, so a repeat meanwhile is told 409 rather than waiting
  if (opts.claimInWrite && !settings.safety.hook) return { kind: "run", scope: ctx.app.idempotency.deferred(input) };
  return answerClaim(await ctx.app.idempotency.claim(input));
}

/** What a claim means for the request. */
export function answerClaim(claim: Claim): Begun {
  switch (claim.kind) {
    case "run":
      return claim;
    case "answered":
      return claim;
    case "reused":
      return { kind: "refused", error: errors.idempotencyKeyReused() };
    case "in_progress":
      return { kind: "refused", error: errors.idempotencyInProgress(claim.retryAfterSeconds) };
  }
}

/**
 * After the request ran: keeps its answer, or lets the key go when nothing was written and it was
 * refused or failed (`failed`: a GraphQL answer with errors and no data). A 5xx is never kept: when
 * its writes committed (the database answered too late), a retry takes the key over and answers
 * from what they recorded.
 */
export async function finishIdempotent(ctx: RequestContext, scope: IdempotencyScope, answer: StoredAnswer, failed = false): Promise<void> {
  if (scope.superseded) return; // the key was another request's: nothing of it is ours to keep or let go
  // claimed by its one write with the write's result: that result is the outcome (a repeat answers from it)
  if (scope.outcomeRecorded) return;
  const now = ctx.app.clock.now();
  const keep = answer.status < 500 && (scope.writes > 0 || (answer.status < 400 && !failed));
  const pending = scope.pending;
  if (pending) {
    // no write tried, so the key was never claimed: only an answer worth keeping claims it now
    scope.pending = undefined;
    if (!keep) return;
    const claim = await pending.claim();
    if (claim.kind === "run") await ctx.app.idempotency.complete(claim.scope, answer, now);
    return;
  }
  if (keep) await ctx.app.idempotency.complete(scope, answer, now);
  // after a 5xx the database may be what failed: the release is retried in the background rather
  // than hold up the answer; after a refusal it is done before answering, so a retry finds it gone
  else if (answer.status >= 500) void ctx.app.idempotency.release(scope, now);
  else await ctx.app.idempotency.release(scope, now);
}

/** True when this run answered from an earlier run's recorded writes rather than writing. */
export const replayedFromRecords = (scope: IdempotencyScope): boolean => scope.replay.length > 0;

/**
 * Sends an answer under a key, REST's and /graphql's alike: its status, headers and body, and
 * `Idempotent-Replayed: true` when it is a kept one (or one rebuilt from an earlier run's recorded
 * writes).
 */
export function sendStoredAnswer(reply: FastifyReply, answer: StoredAnswer, replayed: boolean): FastifyReply {
  if (replayed) reply.header(REPLAYED_HEADER, "true");
  const { "content-type": type, ...headers } = answer.headers;
  reply.headers(headers).status(answer.status);
  if (type) reply.type(type);
  return answer.status === 204 ? reply.send() : reply.send(answer.body);
}
