// The times the service takes from a caller (a query's range, a key's expiry, a suspension's end, a
// replay's start, a cursor's key): instants from 0001-01-01 to 9999-12-31 UTC. Every time the
// service writes lies there; past it a value is a Date JavaScript cannot print, a timestamp
// PostgreSQL refuses (22008) or reads as another year (year 0 is 1 BC), not a time anyone meant.
import { z } from "zod";

export const TIME_MIN_MS = new Date("0001-01-01T00:00:00.000Z").getTime();
export const TIME_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Whether `d` is a time the service takes: a valid Date within years 1–9999. */
export function inTimeRange(d: Date): boolean {
  const ms = d.getTime();
  return !Number.isNaN(ms) && ms >= TIME_MIN_MS && ms <= TIME_MAX_MS;
}

export const TIME_RANGE_RULE = "must be a time from year 1 to 9999";

/** An ISO 8601 timestamp with its offset, within years 1–9999 (zod): one problem for a value, not the format's and the range's. */
export function isoTimestamp(message: string) {
  return z.iso.datetime({ offset: true, message }).refine((s) => {
    const d = new Date(s);
    return Number.isNaN(d.getTime()) || inTimeRange(d);
  }, TIME_RANGE_RULE);
}
