import fc from "fast-check";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseTimestamptz } from "./timestamps.js";

const reference = pg.types.getTypeParser(1184, "text") as (s: string) => Date | number;
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

describe("parseTimestamptz", () => {
  it("agrees with pg's own parser on the shapes PostgreSQL prints", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0100-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        fc.integer({ min: -12 * 60, max: 14 * 60 }).map((m) => m - (m % 15)),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 999_999 }),
        (date, offsetMin, fractionDigits, micros) => {
          const local = new Date(date.getTime() + offsetMin * 60_000);
          const fraction = fractionDigits ? "." + pad(micros, 6).slice(0, fractionDigits) : "";
          const sign = offsetMin < 0 ? "-" : "+";
          const abs = Math.abs(offsetMin);
          const offset = `${sign}${pad(Math.floor(abs / 60))}` + (abs % 60 ? `:${pad(abs % 60)}` : "");
          const text =
            `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
            `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction}${offset}`;
          const ours = parseTimestamptz(text);
          const theirs = reference(text);
          expect(ours instanceof Date ? ours.getTime() : ours).toBe(theirs instanceof Date ? theirs.getTime() : theirs);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("hands everything else to pg's parser", () => {
    for (const text of ["infinity", "-infinity", "2026-11-22 16:49:00+00 BC", "0099-01-01 00:00:00+00", "2026-11-22 16:49:00.5+05:30:15"]) {
      const ours = parseTimestamptz(text);
      const theirs = reference(text);
      expect(ours instanceof Date ? ours.getTime() : ours).toEqual(theirs instanceof Date ? theirs.getTime() : theirs);
    }
  });
});
