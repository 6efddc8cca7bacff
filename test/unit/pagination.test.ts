import { describe, expect, it } from "vitest";
import { AppError } from "../../src/lib/errors.js";
import {
  checkLimit,
  cursorFloat,
  cursorId,
  cursorInt4,
  cursorTime,
  decodeCursor,
  decodeTimeIdCursor,
  encodeCursor,
  keysetAfter,
  timeIdCursor,
  toPage,
} from "../../src/lib/pagination.js";

describe("cursor codec", () => {
  it("round-trips the sort key of the last item", () => {
    const c = encodeCursor([1_795_000_000_000, "cmt_abc", true, null]);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c, 4)).toEqual([1_795_000_000_000, "cmt_abc", true, null]);
  });

  it.each([
    ["not base64 json", "%%%"],
    ["json of the wrong shape", Buffer.from('{"a":1}').toString("base64url")],
    ["wrong arity", encodeCursor([1, "x", 3])],
    ["nested values", Buffer.from('[[1],"x"]').toString("base64url")],
  ])("refuses %s with a validation error on `cursor`", (_name, cursor) => {
    try {
      decodeCursor(cursor, 2);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).fieldErrors?.[0]?.path).toBe("cursor");
    }
  });
});

describe("time and id cursors", () => {
  const at = new Date("2026-03-01T12:00:00.000Z");
  const refusal = (f: () => unknown) => {
    try {
      f();
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).fieldErrors).toEqual([{ path: "cursor", message: "is not a cursor this list issued" }]);
    }
  };

  it("round-trips a time and an id, tagged or not", () => {
    expect(decodeTimeIdCursor(encodeCursor(timeIdCursor(at, "cmt_a")))).toEqual([at, "cmt_a"]);
    expect(decodeTimeIdCursor(encodeCursor(timeIdCursor(at, "cmt_a", "queue:pending:oldest")), "queue:pending:oldest")).toEqual([
      at,
      "cmt_a",
    ]);
  });

  it("refuses another list's cursor, and values of the wrong kind", () => {
    const queue = encodeCursor(timeIdCursor(at, "cmt_a", "queue:pending:oldest"));
    refusal(() => decodeTimeIdCursor(queue, "queue:rejected:oldest"));
    refusal(() => decodeTimeIdCursor(queue));
    refusal(() => decodeTimeIdCursor(encodeCursor(timeIdCursor(at, "cmt_a")), "queue:pending:oldest"));
    refusal(() => decodeTimeIdCursor(encodeCursor(["2026-03-01", "cmt_a"])));
    refusal(() => decodeTimeIdCursor(encodeCursor([at.getTime(), 7])));
    refusal(() => decodeTimeIdCursor(encodeCursor(["t", at.getTime(), null]), "t"));
  });

  it("reads each value as its column holds it: times within years 1–9999 in whole ms, int4, finite numbers, ids without NUL", () => {
    expect(cursorTime(at.getTime())).toEqual(at);
    expect(cursorTime(Date.UTC(9999, 11, 31, 23, 59, 59, 999)).getUTCFullYear()).toBe(9999);
    for (const bad of [8.64e15 + 1, 1e20, Date.UTC(10000, 0, 1), -62_135_596_800_001, at.getTime() + 0.5, Infinity, NaN, "1", null]) {
      refusal(() => cursorTime(bad as number));
    }
    expect(cursorInt4(2_147_483_647)).toBe(2_147_483_647);
    expect(cursorInt4(-2_147_483_648)).toBe(-2_147_483_648);
    for (const bad of [2_147_483_648, -2_147_483_649, 1.5, 1e300, Infinity, "7", true]) refusal(() => cursorInt4(bad as number));
    expect(cursorFloat(0.25)).toBe(0.25);
    for (const bad of [Infinity, -Infinity, NaN, "0.5"]) refusal(() => cursorFloat(bad as number));
    expect(cursorId("cmt_a")).toBe("cmt_a");
    for (const bad of ["cmt_\u0000", "\u0000", "x".repeat(1001), 7, null]) refusal(() => cursorId(bad as string));
    refusal(() => decodeTimeIdCursor(Buffer.from('[1e400,"cmt_a"]').toString("base64url")));
    refusal(() => decodeTimeIdCursor(encodeCursor([at.getTime(), "cmt\u0000"])));
  });
});

describe("limits and pages", () => {
  it("defaults to 20 and accepts 1–100 only", () => {
    expect(checkLimit(undefined)).toBe(20);
    expect(checkLimit(100)).toBe(100);
    for (const bad of [0, 101, 2.5, -1]) expect(() => checkLimit(bad)).toThrow(AppError);
  });

  it("returns `limit` items and a cursor only when there are more", () => {
    const rows = [1, 2, 3].map((n) => ({ n }));
    const more = toPage(rows, 2, (r) => [r.n]);
    expect(more.items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(decodeCursor(more.nextCursor!, 1)).toEqual([2]);
    expect(toPage(rows, 3, (r) => [r.n]).nextCursor).toBeNull();
  });

  it("builds the strict-after condition for a compound order", () => {
    expect(
      keysetAfter(
        [
          { field: "createdAt", dir: "desc" },
          { field: "id", dir: "asc" },
        ],
        [5, "b"],
      ),
    ).toEqual({ OR: [{ createdAt: { lt: 5 } }, { createdAt: 5, id: { gt: "b" } }] });
  });
});
