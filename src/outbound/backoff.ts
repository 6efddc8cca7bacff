/**
 * Retry timing for webhook deliveries (API.md §0 "Delivery rules").
 *
 * Delay before attempt n+1 = base × 2^(n−1) plus up to 50 % random jitter, i.e. a value in
 * [d, 1.5·d] with d = base × 2^(n−1). A receiver's Retry-After (on 429/503) can be honoured with
 * parseRetryAfter, capped so a receiver cannot park deliveries for arbitrarily long.
 */

/** Exponent cap so absurd attempt numbers cannot overflow to Infinity. */
const MAX_EXPONENT = 40;

/**
 * Delay in ms before the next attempt.
 *
 * @param attempt the attempt that just failed, 1-based (attempt 1 failed → delay before attempt 2)
 * @param baseMs  backoff base (tunable `backoffBaseMs`, default 1000)
 * @param random  source of [0, 1) randomness, injectable for tests
 * @returns an integer in [d, 1.5·d], d = baseMs × 2^(attempt−1)
 */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const base = Number.isFinite(baseMs) ? Math.max(0, baseMs) : 0;
  const d = base * 2 ** Math.min(n - 1, MAX_EXPONENT);
  let r = random();
  if (!Number.isFinite(r) || r < 0) r = 0;
  if (r >= 1) r = 1;
  return Math.floor(d + d * 0.5 * r);
}

const DELTA_SECONDS = /^\d+$/;

/**
 * Parses a Retry-After header value (RFC 9110 §10.2.3).
 *
 * Accepts delta-seconds (`"120"`) and HTTP-dates (`"Wed, 21 Oct 2026 07:28:00 GMT"`, plus the
 * obsolete RFC 850 / asctime forms Date.parse understands). Dates in the past give 0.
 *
 * @returns milliseconds to wait, capped at `capMs`, or null when the value is absent or invalid
 */
export function parseRetryAfter(headerValue: string | readonly string[] | null | undefined, now: Date, capMs: number): number | null {
  const raw = Array.isArray(headerValue) ? headerValue[0] : headerValue;
  if (typeof raw !== "string") return null;
  const value = raw.trim();
  if (value === "") return null;

  let ms: number;
  if (DELTA_SECONDS.test(value)) {
    ms = Number(value) * 1000;
  } else {
    // An HTTP-date always contains letters (day/month names); reject other numeric-ish junk
    // such as "1.5" or "-3" that Date.parse might otherwise accept.
    if (!/[A-Za-z]/.test(value)) return null;
    const at = Date.parse(value);
    if (!Number.isFinite(at)) return null;
    ms = Math.max(0, at - now.getTime());
  }
  if (!Number.isFinite(ms)) ms = Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(ms, capMs));
}
