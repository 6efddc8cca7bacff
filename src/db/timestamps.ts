// Fast parsing of PostgreSQL timestamptz text ("2026-11-22 16:49:00.123+00", DateStyle ISO) for the
// plain-SQL pool. pg's default parser (postgres-date: a regular expression per value) was about a
// tenth of the CPU of a comment list, which carries six timestamps per row. Anything outside the
// common shape (BC dates, infinity, years before 100, odd offsets) goes to pg's own parser.
import pg from "pg";

const TIMESTAMPTZ_OID = 1184;
const fallback = pg.types.getTypeParser(TIMESTAMPTZ_OID, "text") as (text: string) => Date | number | string;

const digit = (s: string, i: number): number => {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : NaN;
};
const two = (s: string, i: number): number => digit(s, i) * 10 + digit(s, i + 1);

export function parseTimestamptz(s: string): Date | number | string {
  const n = s.length;
  if (
    n >= 22 &&
    s.charCodeAt(4) === 45 &&
    s.charCodeAt(7) === 45 &&
    s.charCodeAt(10) === 32 &&
    s.charCodeAt(13) === 58 &&
    s.charCodeAt(16) === 58
  ) {
    let i = 19;
    let ms = 0;
    if (s.charCodeAt(i) === 46) {
      // milliseconds: the first three fraction digits (further digits are dropped, as pg's parser
      // does), in small-integer arithmetic (no heap numbers)
      let digits = 0;
      for (i++; i < n; i++) {
        const c = s.charCodeAt(i) - 48;
        if (c < 0 || c > 9) break;
        if (digits < 3) {
          ms = ms * 10 + c;
          digits++;
        }
      }
      for (; digits < 3; digits++) ms *= 10;
    }
    const sign = s.charCodeAt(i);
    const hoursOnly = n === i + 3;
    if ((sign === 43 || sign === 45) && (hoursOnly || (n === i + 6 && s.charCodeAt(i + 3) === 58))) {
      const offset = (two(s, i + 1) * 60 + (hoursOnly ? 0 : two(s, i + 4))) * 60_000;
      const year = two(s, 0) * 100 + two(s, 2);
      const t = Date.UTC(year, two(s, 5) - 1, two(s, 8), two(s, 11), two(s, 14), two(s, 17), ms) - (sign === 43 ? offset : -offset);
      if (!Number.isNaN(t) && year >= 100) return new Date(t);
    }
  }
  return fallback(s);
}

/** pg's `types` option: timestamptz through the fast parser, every other type as pg parses it. */
export const fastPgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
    if (oid === TIMESTAMPTZ_OID && format !== "binary") return parseTimestamptz;
    return pg.types.getTypeParser(oid, format as "text") as (value: string) => unknown;
  },
};
