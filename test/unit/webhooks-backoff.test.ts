import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelayMs } from "../../src/outbound/backoff.js";

const almostOne = () => 0.9999999;

describe("retryDelayMs", () => {
  it("is base × 2^(n−1) with no jitter when random() = 0", () => {
    expect(retryDelayMs(1, 1000, () => 0)).toBe(1000);
    expect(retryDelayMs(2, 1000, () => 0)).toBe(2000);
    expect(retryDelayMs(3, 1000, () => 0)).toBe(4000);
    expect(retryDelayMs(5, 250, () => 0)).toBe(4000);
  });

  it("adds at most 50 % jitter", () => {
    expect(retryDelayMs(1, 1000, almostOne)).toBe(1499);
    expect(retryDelayMs(2, 1000, almostOne)).toBe(2999);
    expect(retryDelayMs(3, 1000, () => 0.5)).toBe(5000);
    for (let n = 1; n <= 6; n++) {
      for (let i = 0; i < 50; i++) {
        const d = 1000 * 2 ** (n - 1);
        const v = retryDelayMs(n, 1000);
        expect(v).toBeGreaterThanOrEqual(d);
        expect(v).toBeLessThanOrEqual(1.5 * d);
        expect(Number.isInteger(v)).toBe(true);
      }
    }
  });

  it("tolerates odd inputs", () => {
    expect(retryDelayMs(0, 1000, () => 0)).toBe(1000);
    expect(retryDelayMs(1, 1000, () => 7)).toBe(1500);
    expect(retryDelayMs(1, 1000, () => Number.NaN)).toBe(1000);
    expect(Number.isFinite(retryDelayMs(10_000, 1000, () => 0))).toBe(true);
  });
});

describe("parseRetryAfter", () => {
  const now = new Date("2026-11-21T10:00:00.000Z");
  const cap = 3_600_000;

  it("accepts delta-seconds", () => {
    expect(parseRetryAfter("120", now, cap)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now, cap)).toBe(0);
    expect(parseRetryAfter(["30", "60"], now, cap)).toBe(30_000);
  });

  it("accepts HTTP-dates (IMF-fixdate and obsolete forms)", () => {
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:01:30 GMT", now, cap)).toBe(90_000);
    expect(parseRetryAfter("Saturday, 21-Nov-26 10:00:10 GMT", now, cap)).toBe(10_000);
    expect(parseRetryAfter("Sat Nov 21 10:00:05 2026", now, cap)).not.toBeNull();
    expect(parseRetryAfter("Sat, 21 Nov 2026 09:00:00 GMT", now, cap)).toBe(0); // in the past
  });

  it("caps long waits", () => {
    expect(parseRetryAfter("999999", now, cap)).toBe(cap);
    expect(parseRetryAfter("Sun, 21 Nov 2027 10:00:00 GMT", now, 60_000)).toBe(60_000);
    expect(parseRetryAfter("9".repeat(400), now, cap)).toBe(cap);
  });

  it("returns null for missing or invalid values", () => {
    for (const v of [undefined, null, "", "  ", "soon", "1.5", "-3", "12abc", "Sat, 99 Foo 2026"]) {
      expect(parseRetryAfter(v, now, cap)).toBeNull();
    }
    expect(parseRetryAfter([], now, cap)).toBeNull();
  });
});
