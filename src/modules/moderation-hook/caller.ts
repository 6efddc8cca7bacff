/**
 * Calls of a tenant's moderation hook (`safety.hook`, contract section 12): one POST of a
 * `comment.check` body, signed with the hook's own secret, within the hook's `timeoutMs`, made by
 * the webhooks' signed calls (src/outbound/signed-calls.ts: the HTTP client and its SSRF
 * guard, the signature, and a breaker per tenant and url in this instance's memory, with the
 * tenant's `delivery.breakerThreshold` and `breakerCooldownMs`). A hook is never disabled for good:
 * it stays configured until the tenant removes it.
 *
 * The answer: HTTP 2xx with JSON `{"decision":"approve|hold|reject","reason"?: string}`. Anything else
 * (another status, not JSON, an unknown decision, a network or SSRF refusal) is an `error`; no complete
 * answer within `timeoutMs` is a `timeout`. Both count as a breaker failure.
 */
import type { AppServices } from "../../context/services.js";
import type { BreakerState, BreakerTunables } from "../../outbound/breaker.js";
import type { SignedCall, SignedCallOutcome, SignedCalls } from "../../outbound/signed-calls.js";

export const HOOK_DECISIONS = ["approve", "hold", "reject"] as const;
export type HookDecision = (typeof HOOK_DECISIONS)[number];

/** A hook's reason is kept on the comment: longer ones are cut to this many characters. */
export const MAX_HOOK_REASON = 500;

export const HOOK_USER_AGENT = "engagement-service-moderation-hook/1";

/** A check is not an event: its webhook-id is `chk_` and a new UUID. */
const HOOK_CALL = { userAgent: HOOK_USER_AGENT, idPrefix: "chk_" } satisfies Partial<SignedCall>;

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

/** Each check's outcome (`approve|hold|reject|timeout|error|breaker_open`) and, when a request was made, its seconds. */
export type HookOutcomeListener = (outcome: HookDecision | "timeout" | "error" | "breaker_open", seconds: number | null) => void;

type HookAnswer = { decision: HookDecision; reason: string | null };

/** Parses a hook's answer; a string says what is wrong with it. */
export function parseHookAnswer(status: number, body: string): HookAnswer | string {
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

function hookOutcome(outcome: SignedCallOutcome<HookAnswer>): HookOutcome {
  switch (outcome.kind) {
    case "answer":
      return { kind: "decision", ...outcome.answer, status: outcome.status, latencyMs: outcome.latencyMs };
    case "breaker_open": {
      const until = outcome.openedUntil ? ` until ${outcome.openedUntil.toISOString()}` : "";
      return { kind: "breaker_open", error: `the hook's circuit is open${until}`, status: null, latencyMs: 0 };
    }
    default:
      return outcome;
  }
}

export function createModerationHookCaller(calls: SignedCalls, onOutcome?: HookOutcomeListener): ModerationHookCaller {
  return {
    async send(call) {
      return hookOutcome(await calls.send({ ...call, ...HOOK_CALL }, parseHookAnswer));
    },
    async check(call) {
      const outcome = hookOutcome(await calls.check({ ...call, ...HOOK_CALL }, parseHookAnswer));
      const seconds = outcome.kind === "breaker_open" ? null : outcome.latencyMs / 1000;
      onOutcome?.(outcome.kind === "decision" ? outcome.decision : outcome.kind, seconds);
      return outcome;
    },
    breakerState: (tenantId, url) => calls.breakerState(tenantId, url),
  };
}

/** The app's hook caller: its signed calls, each check counted in the metrics. */
export function moderationHookOf(app: Pick<AppServices, "webhooks" | "metrics">): ModerationHookCaller {
  return createModerationHookCaller(app.webhooks.signedCalls, (outcome, seconds) => {
    app.metrics.moderationHookCalls.inc({ outcome });
    if (seconds !== null) app.metrics.moderationHookDuration.observe(seconds);
  });
}
