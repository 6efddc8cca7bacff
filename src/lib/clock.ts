/** Time comes from here so expiry, backoff and cooldowns are testable without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can move by hand. */
export function manualClock(start: Date = new Date("2026-01-01T00:00:00.000Z")) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
    set(d: Date) {
      t = d.getTime();
    },
  };
}
