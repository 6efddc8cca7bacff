import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/lib/clock.js";
import {
  DEFAULT_BREAKER_TUNABLES,
  canAttempt,
  enable,
  initialBreakerState,
  onFailure,
  onGone,
  onSuccess,
  startTrial,
  type BreakerState,
} from "../../src/outbound/breaker.js";

const tunables = DEFAULT_BREAKER_TUNABLES;

function failTimes(state: BreakerState, n: number, now: Date): BreakerState {
  let s = state;
  for (let i = 0; i < n; i++) s = onFailure(s, now, tunables);
  return s;
}

describe("breaker", () => {
  it("has the contract's defaults", () => {
    expect(tunables).toEqual({ breakerThreshold: 10, breakerCooldownMs: 60_000, disableThreshold: 50 });
  });

  it("counts failures and resets on success while below the threshold", () => {
    const clock = manualClock();
    let s = failTimes(initialBreakerState(), 9, clock.now());
    expect(s).toEqual({ consecutiveFailures: 9, state: "active", openedUntil: null });
    expect(canAttempt(s, clock.now())).toBe("yes");
    s = onSuccess(s);
    expect(s).toEqual(initialBreakerState());
  });

  it("opens → no attempts → trial after cooldown → closes on success", () => {
    const clock = manualClock();
    let s = failTimes(initialBreakerState(), 10, clock.now());
    expect(s.state).toBe("circuit_open");
    expect(s.openedUntil?.getTime()).toBe(clock.now().getTime() + 60_000);
    expect(canAttempt(s, clock.now())).toBe("no");

    clock.advance(59_999);
    expect(canAttempt(s, clock.now())).toBe("no");
    clock.advance(1);
    expect(canAttempt(s, clock.now())).toBe("trial");

    // claiming the trial holds off other workers
    s = startTrial(s, clock.now(), tunables);
    expect(canAttempt(s, clock.now())).toBe("no");

    s = onSuccess(s);
    expect(s).toEqual({ consecutiveFailures: 0, state: "active", openedUntil: null });
    expect(canAttempt(s, clock.now())).toBe("yes");
  });

  it("reopens for another cooldown when the trial fails", () => {
    const clock = manualClock();
    let s = failTimes(initialBreakerState(), 10, clock.now());
    clock.advance(60_000);
    expect(canAttempt(s, clock.now())).toBe("trial");
    s = startTrial(s, clock.now(), tunables);
    clock.advance(500);
    s = onFailure(s, clock.now(), tunables);
    expect(s.state).toBe("circuit_open");
    expect(s.consecutiveFailures).toBe(11);
    expect(s.openedUntil?.getTime()).toBe(clock.now().getTime() + 60_000);
    expect(canAttempt(s, clock.now())).toBe("no");
    clock.advance(60_000);
    expect(canAttempt(s, clock.now())).toBe("trial");
  });

  it("lets an unrecorded trial lease expire", () => {
    const clock = manualClock();
    let s = failTimes(initialBreakerState(), 10, clock.now());
    clock.advance(60_000);
    s = startTrial(s, clock.now(), tunables);
    clock.advance(60_000);
    expect(canAttempt(s, clock.now())).toBe("trial");
  });

  it("auto-disables at 50 consecutive failures; only enable() re-enables", () => {
    const clock = manualClock();
    let s = failTimes(initialBreakerState(), 10, clock.now());
    for (let i = 0; i < 39; i++) {
      clock.advance(60_000);
      expect(canAttempt(s, clock.now())).toBe("trial");
      s = onFailure(startTrial(s, clock.now(), tunables), clock.now(), tunables);
    }
    expect(s).toMatchObject({ consecutiveFailures: 49, state: "circuit_open" });
    clock.advance(60_000);
    s = onFailure(s, clock.now(), tunables);
    expect(s).toEqual({ consecutiveFailures: 50, state: "disabled", openedUntil: null });
    clock.advance(10 * 60 * 60_000);
    expect(canAttempt(s, clock.now())).toBe("no");
    // a late success does not re-enable; neither do more failures
    expect(onSuccess(s).state).toBe("disabled");
    expect(onFailure(s, clock.now(), tunables).state).toBe("disabled");

    s = enable();
    expect(s).toEqual({ consecutiveFailures: 0, state: "active", openedUntil: null });
    expect(canAttempt(s, clock.now())).toBe("yes");
  });

  it("respects custom tunables", () => {
    const clock = manualClock();
    const t = { breakerThreshold: 2, breakerCooldownMs: 1000, disableThreshold: 3 };
    let s = onFailure(initialBreakerState(), clock.now(), t);
    expect(s.state).toBe("active");
    s = onFailure(s, clock.now(), t);
    expect(s.state).toBe("circuit_open");
    expect(s.openedUntil?.getTime()).toBe(clock.now().getTime() + 1000);
    s = onFailure(s, clock.now(), t);
    expect(s.state).toBe("disabled");
  });

  it("disables immediately on 410 Gone", () => {
    const clock = manualClock();
    const s = onGone(initialBreakerState());
    expect(s.state).toBe("disabled");
    expect(canAttempt(s, clock.now())).toBe("no");
    expect(onGone(failTimes(initialBreakerState(), 10, clock.now())).state).toBe("disabled");
    expect(enable().state).toBe("active");
  });

  it("does not mutate its input", () => {
    const clock = manualClock();
    const s = initialBreakerState();
    const frozen = Object.freeze({ ...s });
    onFailure(frozen, clock.now(), tunables);
    onSuccess(frozen);
    onGone(frozen);
    expect(frozen).toEqual(s);
  });
});
