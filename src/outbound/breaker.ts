/**
 * Circuit breaker for one webhook endpoint (API.md §0 "Delivery rules", §4 "Webhooks").
 *
 * Pure functions over a small state record persisted with the endpoint: the one source of the rules.
 * The delivery path decides with canAttempt (deliver.ts) and writes what startTrial, onSuccess,
 * onFailure and onGone return (endpoint-state.ts); the console's re-enable writes enable()
 * (src/modules/webhooks/endpoints.ts); the claim's SQL only pre-filters what canAttempt would hold.
 *
 *   active ──(breakerThreshold consecutive failures)──▶ circuit_open (until now + cooldown)
 *   circuit_open ──(cooldown passed)──▶ one trial attempt
 *        trial succeeds ──▶ active, failures reset
 *        trial fails    ──▶ circuit_open again for another cooldown
 *   any ──(disableThreshold consecutive failures, or HTTP 410 Gone)──▶ disabled
 *   disabled ──(enable(), console / admin JWT only)──▶ active, failures reset
 *
 * Failures count per attempt (not per event). While open nothing is dropped: the caller keeps
 * the queued deliveries and tries again after the cooldown. Nothing here re-enables a disabled
 * endpoint except `enable`.
 */

export type EndpointState = "active" | "circuit_open" | "disabled";

export interface BreakerState {
  consecutiveFailures: number;
  state: EndpointState;
  /** When the open circuit admits its next trial; null unless state is circuit_open. */
  openedUntil: Date | null;
}

export interface BreakerTunables {
  /** Consecutive failures that open the circuit. Default 10. */
  breakerThreshold: number;
  /** How long the circuit stays open before a trial. Default 60 000 ms. */
  breakerCooldownMs: number;
  /** Consecutive failures that disable the endpoint for good (until the console re-enables). Default 50. */
  disableThreshold: number;
}

export const DEFAULT_BREAKER_TUNABLES: Readonly<BreakerTunables> = Object.freeze({
  breakerThreshold: 10,
  breakerCooldownMs: 60_000,
  disableThreshold: 50,
});

/** "yes": deliver normally; "trial": cooldown over, send exactly one trial; "no": hold. */
export type AttemptDecision = "yes" | "trial" | "no";

export function initialBreakerState(): BreakerState {
  return { consecutiveFailures: 0, state: "active", openedUntil: null };
}

/** Whether a delivery may go out now. */
export function canAttempt(state: BreakerState, now: Date): AttemptDecision {
  switch (state.state) {
    case "active":
      return "yes";
    case "disabled":
      return "no";
    case "circuit_open":
      if (state.openedUntil === null || now.getTime() >= state.openedUntil.getTime()) return "trial";
      return "no";
  }
}

/**
 * Claims the single trial of an open circuit: pushes `openedUntil` one cooldown ahead so other
 * workers reading the persisted state see "no" while the trial is in flight (if the trial's
 * outcome is never recorded, the lease simply expires and another trial is allowed). Call it
 * when `canAttempt` said "trial" and persist the result before sending.
 */
export function startTrial(state: BreakerState, now: Date, tunables: BreakerTunables = DEFAULT_BREAKER_TUNABLES): BreakerState {
  if (state.state !== "circuit_open") return state;
  return { ...state, openedUntil: new Date(now.getTime() + tunables.breakerCooldownMs) };
}

/** A 2xx: closes the circuit and resets the count. A disabled endpoint stays disabled. */
export function onSuccess(state: BreakerState): BreakerState {
  if (state.state === "disabled") return state;
  return { consecutiveFailures: 0, state: "active", openedUntil: null };
}

/**
 * A failed attempt (non-2xx, timeout, network error). Counts one failure; opens the circuit at
 * `breakerThreshold`, re-opens it when a trial (any attempt while open) fails, and disables the
 * endpoint at `disableThreshold`.
 */
export function onFailure(state: BreakerState, now: Date, tunables: BreakerTunables = DEFAULT_BREAKER_TUNABLES): BreakerState {
  const consecutiveFailures = state.consecutiveFailures + 1;
  if (state.state === "disabled" || consecutiveFailures >= tunables.disableThreshold) {
    return { consecutiveFailures, state: "disabled", openedUntil: null };
  }
  if (state.state === "circuit_open" || consecutiveFailures >= tunables.breakerThreshold) {
    return {
      consecutiveFailures,
      state: "circuit_open",
      openedUntil: new Date(now.getTime() + tunables.breakerCooldownMs),
    };
  }
  return { consecutiveFailures, state: "active", openedUntil: null };
}

/** HTTP 410 Gone: the receiver asked us to stop; disable immediately. */
export function onGone(state: BreakerState): BreakerState {
  return { consecutiveFailures: state.consecutiveFailures + 1, state: "disabled", openedUntil: null };
}

/** Console (admin JWT) re-enable: back to active with the failure count reset. */
export function enable(): BreakerState {
  return initialBreakerState();
}
