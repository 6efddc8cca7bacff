/**
 * Signed calls made on the request path (a tenant's moderation hook: src/modules/moderation-hook/caller.ts):
 * one POST of a JSON body, signed the Standard Webhooks way (signature.ts) with the receiver's own
 * secret, through the webhooks' HTTP client (http-client.ts: the same SSRF guard, checked again at
 * connect time; no redirects; the answer's size bounded), within the call's `timeoutMs`. What the
 * answer means is the caller's: it reads the status and body into its answer, or a string saying
 * what is wrong with it (a failure). No complete answer within `timeoutMs` is a `timeout`; a network
 * or SSRF refusal an `error`.
 *
 * The breaker is breaker.ts's (the same rules, with the tunables each call brings), kept in this
 * instance's memory per tenant and url: a call on the request path cannot afford a write per
 * failure, and each instance learns on its own that a receiver is down (at most `breakerThreshold`
 * calls each). An open circuit skips the call; after the cooldown one call is the trial. Such a
 * receiver is never disabled for good (`disableThreshold` does not apply).
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Clock } from "../lib/clock.js";
import { canAttempt, initialBreakerState, onFailure, startTrial, type BreakerState, type BreakerTunables } from "./breaker.js";
import { DeliveryError, type WebhookHttpClient } from "./http-client.js";
import { standardWebhooksHeaders } from "./signature.js";

export interface SignedCall {
  tenantId: string;
  url: string;
  /** the receiver's signing secret (the plain `whsec_…` value) */
  secret: string;
  timeoutMs: number;
  /** the JSON body, sent as it is */
  body: string;
  userAgent: string;
  /** a call is not an event: its webhook-id is this prefix and a new UUID */
  idPrefix: string;
  breaker: Pick<BreakerTunables, "breakerThreshold" | "breakerCooldownMs">;
}

/** Reads an answer: what it means, or a string saying what is wrong with it. */
export type AnswerReader<T> = (status: number, body: string) => T | string;

export type SignedCallOutcome<T> =
  | { kind: "answer"; answer: T; status: number; latencyMs: number }
  | { kind: "timeout" | "error"; error: string; status: number | null; latencyMs: number }
  | { kind: "breaker_open"; openedUntil: Date | null; status: null; latencyMs: 0 };

export interface SignedCalls {
  /** Through the breaker of the call's tenant and url. */
  check<T>(call: SignedCall, read: AnswerReader<T>): Promise<SignedCallOutcome<T>>;
  /** The same request, past the breaker and leaving it as it is (a "Send test"). */
  send<T>(call: Omit<SignedCall, "breaker" | "tenantId">, read: AnswerReader<T>): Promise<SignedCallOutcome<T>>;
  /** The breaker of a tenant's receiver at this url on this instance (tests, diagnostics). */
  breakerState(tenantId: string, url: string): BreakerState;
}

/** At most this many receivers' breaker states are kept per instance (the least recently failing go first). */
const MAX_BREAKERS = 10_000;

export function createSignedCalls(deps: { http: Pick<WebhookHttpClient, "post">; clock: Clock }): SignedCalls {
  const breakers = new Map<string, BreakerState>();
  const keyOf = (tenantId: string, url: string) => `${tenantId} ${url}`;

  async function send<T>(call: Omit<SignedCall, "breaker" | "tenantId">, read: AnswerReader<T>): Promise<SignedCallOutcome<T>> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const headers = standardWebhooksHeaders({
      id: `${call.idPrefix}${randomUUID()}`,
      timestamp: deps.clock.now(),
      rawBody: call.body,
      secrets: [call.secret],
    });
    try {
      const res = await deps.http.post({
        url: call.url,
        body: call.body,
        timeoutMs: call.timeoutMs,
        headers: { "content-type": "application/json", "user-agent": call.userAgent, ...headers },
      });
      const answer = read(res.statusCode, res.body);
      if (typeof answer === "string") return { kind: "error", error: answer, status: res.statusCode, latencyMs: latency() };
      return { kind: "answer", answer, status: res.statusCode, latencyMs: latency() };
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      if (err.kind === "timeout")
        return { kind: "timeout", error: `no answer within ${call.timeoutMs} ms`, status: null, latencyMs: latency() };
      return { kind: "error", error: `${err.kind}: ${err.message}`, status: err.statusCode ?? null, latencyMs: latency() };
    }
  }

  return {
    send,
    async check(call, read) {
      const key = keyOf(call.tenantId, call.url);
      const tunables: BreakerTunables = { ...call.breaker, disableThreshold: Number.POSITIVE_INFINITY };
      const state = breakers.get(key) ?? initialBreakerState();
      const now = deps.clock.now();
      const may = canAttempt(state, now);
      if (may === "no") return { kind: "breaker_open", openedUntil: state.openedUntil, status: null, latencyMs: 0 };
      // the one trial of an open circuit: the others keep skipping while it is in flight
      if (may === "trial") breakers.set(key, startTrial(state, now, tunables));
      const outcome = await send(call, read);
      const current = breakers.get(key) ?? initialBreakerState();
      if (outcome.kind === "answer") {
        breakers.delete(key); // breaker.ts's onSuccess: active, no failures — what a missing entry stands for
      } else {
        breakers.delete(key); // re-inserted: the most recently failing is kept longest
        breakers.set(key, onFailure(current, deps.clock.now(), tunables));
        if (breakers.size > MAX_BREAKERS) breakers.delete(breakers.keys().next().value!);
      }
      return outcome;
    },
    breakerState(tenantId, url) {
      return breakers.get(keyOf(tenantId, url)) ?? initialBreakerState();
    },
  };
}
