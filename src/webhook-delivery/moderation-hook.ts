/**
 * Calls of a tenant's moderation hook (`safety.hook`, contract section 12): one POST of a
 * `comment.check` body, signed the Standard Webhooks way (signature.ts) with the hook's own secret,
 * through the webhooks' HTTP client (http-client.ts: the same SSRF guard, checked again at connect
 * time; no redirects; the answer's size bounded), within the hook's `timeoutMs`.
 *
 * The breaker is breaker.ts's (the same rules and the tenant's `delivery.breakerThreshold` and
 * `breakerCooldownMs`), kept in this instance's memory per tenant and url: a hook is called on the
 * request path, where a write per failure would cost every post, and each instance learns on its own
 * that a hook is down (at most `breakerThreshold` calls each). An open circuit skips the call; after
 * the cooldown one call is the trial. A hook is never disabled for good (`disableThreshold` does not
 * apply): it stays configured until the tenant removes it.
 *
 * The answer: HTTP 2xx with JSON `{"decision":"approve|hold|reject","reason"?: string}`. Anything else
 * (another status, not JSON, an unknown decision, a network or SSRF refusal) is an `error`; no complete
 * answer within `timeoutMs` is a `timeout`. Both count as a breaker failure.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Clock } from "../lib/clock.js";
import { canAttempt, initialBreakerState, onFailure, startTrial, type BreakerState, type BreakerTunables } from "./breaker.js";
import { DeliveryError, type WebhookHttpClient } from "./http-client.js";
import { standardWebhooksHeaders } from "./signature.js";

export const HOOK_DECISIONS = ["approve", "hold", "reject"] as const;
export type HookDecision = (typeof HOOK_DECISIONS)[number];

/** A hook's reason is kept on the comment: longer ones are cut to this many characters. */
export const MAX_HOOK_REASON = 500;

export const HOOK_USER_AGENT = "engagement-service-moderation-hook/1";

export type HookOutcome =
  | { kind: "decision"; decision: HookDecision; reason: string | null; status: number; latencyMs: number }
  | { kind: "timeout" | "error"; error: string; status: number | null; latencyMs: number }
  | { kind: "breaker_open"; error: string; status: null; latencyMs: 0 };

export interface HookCall {
  tenantId: string;
  url: string;
  /** the hook's signing secret (the plain `whsec_…` value sealed in the settings) */
  secret: string;
  timeoutMs: number;
  /** the JSON body, sent as it is */
  body: string;
  breaker: Pick<BreakerTunables, "breakerThreshold" | "breakerCooldownMs">;
}

export interface ModerationHookCaller {
  /** One check on the request path: through the breaker, counted in the metrics. */
  check(call: HookCall): Promise<HookOutcome>;
  /** The console's "Send test": the same request, past the breaker and leaving it as it is. */
  send(call: Omit<HookCall, "breaker" | "tenantId">): Promise<HookOutcome>;
  /** The breaker of a tenant's hook at this url on this instance (tests, diagnostics). */
  breakerState(tenantId: string, url: string): BreakerState;
}

export interface ModerationHookDeps {
  http: Pick<WebhookHttpClient, "post">;
  clock: Clock;
  /** each check's outcome (`approve|hold|reject|timeout|error|breaker_open`) and, when a request was made, its seconds */
  onOutcome?: (outcome: HookDecision | "timeout" | "error" | "breaker_open", seconds: number | null) => void;
}

/** At most this many hooks' breaker states are kept per instance (the least recently failing go first). */
const MAX_BREAKERS = 10_000;

/** Parses a hook's answer; a string says what is wrong with it. */
export function parseHookAnswer(status: number, body: string): { decision: HookDecision; reason: string | null } | string {
  if (status < 200 || status > 299) return `hook answered HTTP ${status}`;
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return "hook's answer is not JSON";
  }
  const { decision, reason } = (typeof answer === "object" && answer !== null ? answer : {}) as { decision?: unknown; reason?: unknown };
  if (typeof decision !== "string" || !(HOOK_DECISIONS as readonly string[]).includes(decision)) {
    return `hook's answer has no decision of ${HOOK_DECISIONS.join(", ")}`;
  }
  return {
    decision: decision as HookDecision,
    reason: typeof reason === "string" && reason !== "" ? reason.slice(0, MAX_HOOK_REASON) : null,
  };
}

export function createModerationHookCaller(deps: ModerationHookDeps): ModerationHookCaller {
  const breakers = new Map<string, BreakerState>();
  const keyOf = (tenantId: string, url: string) => `${tenantId} ${url}`;

  async function send(call: Omit<HookCall, "breaker" | "tenantId">): Promise<HookOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    // a check is not an event: its webhook-id names this request
    const headers = standardWebhooksHeaders({
      id: `chk_${randomUUID()}`,
      timestamp: deps.clock.now(),
      rawBody: call.body,
      secrets: [call.secret],
    });
    try {
      const res = await deps.http.post({
        url: call.url,
        body: call.body,
        timeoutMs: call.timeoutMs,
        headers: { "content-type": "application/json", "user-agent": HOOK_USER_AGENT, ...headers },
      });
      const answer = parseHookAnswer(res.statusCode, res.body);
      if (typeof answer === "string") return { kind: "error", error: answer, status: res.statusCode, latencyMs: latency() };
      return { kind: "decision", ...answer, status: res.statusCode, latencyMs: latency() };
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      if (err.kind === "timeout")
        return { kind: "timeout", error: `no answer within ${call.timeoutMs} ms`, status: null, latencyMs: latency() };
      return { kind: "error", error: `${err.kind}: ${err.message}`, status: err.statusCode ?? null, latencyMs: latency() };
    }
  }

  return {
    send,
    async check(call) {
      const key = keyOf(call.tenantId, call.url);
      const tunables: BreakerTunables = { ...call.breaker, disableThreshold: Number.POSITIVE_INFINITY };
      const state = breakers.get(key) ?? initialBreakerState();
      const now = deps.clock.now();
      const may = canAttempt(state, now);
      if (may === "no") {
        deps.onOutcome?.("breaker_open", null);
        const until = state.openedUntil ? ` until ${state.openedUntil.toISOString()}` : "";
        return { kind: "breaker_open", error: `the hook's circuit is open${until}`, status: null, latencyMs: 0 };
      }
      // the one trial of an open circuit: the others keep skipping while it is in flight
      if (may === "trial") breakers.set(key, startTrial(state, now, tunables));
      const outcome = await send(call);
      const current = breakers.get(key) ?? initialBreakerState();
      if (outcome.kind === "decision") {
        breakers.delete(key); // breaker.ts's onSuccess: active, no failures — what a missing entry stands for
      } else {
        breakers.delete(key); // re-inserted: the most recently failing is kept longest
        breakers.set(key, onFailure(current, deps.clock.now(), tunables));
        if (breakers.size > MAX_BREAKERS) breakers.delete(breakers.keys().next().value!);
      }
      deps.onOutcome?.(outcome.kind === "decision" ? outcome.decision : outcome.kind, outcome.latencyMs / 1000);
      return outcome;
    },
    breakerState(tenantId, url) {
      return breakers.get(keyOf(tenantId, url)) ?? initialBreakerState();
    },
  };
}
