// Keyset pagination: `{ items, nextCursor }` with an opaque cursor holding the sort key of the last
// item. Stable under concurrent inserts (no offsets), whatever the sort order.
import { errors } from "./errors.js";
import { TIME_MAX_MS, TIME_MIN_MS } from "./timestamps.js";

export type CursorValue = string | number | boolean | null;

export function encodeCursor(values: CursorValue[]): string {
  return Buffer.from(JSON.stringify(values), "utf8").toString("base64url");
}

/** The one answer to a cursor a list cannot read: a validation error on `cursor`. */
export const cursorNotIssued = () => errors.validation([{ path: "cursor", message: "is not a cursor this list issued" }]);

/** The cursor's values; `arity`: how many it must hold (or the counts a list accepts). */
export function decodeCursor(cursor: string, arity: number | readonly number[]): CursorValue[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw cursorNotIssued();
  }
  if (
    !Array.isArray(parsed) ||
    !(typeof arity === "number" ? [arity] : arity).includes(parsed.length) ||
    !parsed.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))
  ) {
    throw cursorNotIssued();
  }
  return parsed as CursorValue[];
}

/**
 * The cursor of a list ordered by a time and an id: `[ms, id]`, or `[tag, ms, id]` for a list whose
 * cursors name the list that issued them (a tag of its filter and sort), so that one list's cursor
 * is refused by another.
 */
export function timeIdCursor(at: Date, id: string, tag?: string): CursorValue[] {
  return tag === undefined ? [at.getTime(), id] : [tag, at.getTime(), id];
}

const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;
/** the longest id a cursor may hold (every id the service issues or imports is far shorter) */
const CURSOR_ID_MAX = 1000;

/**
 * A cursor's time: whole milliseconds within years 1–9999 (src/lib/timestamps.ts; every time a list
 * issues lies there, past it a forged value is an invalid Date or a timestamp PostgreSQL refuses);
 * else the validation error on `cursor`.
 */
export function cursorTime(v: CursorValue | undefined): Date {
  if (typeof v !== "number" || !Number.isInteger(v) || v < TIME_MIN_MS || v > TIME_MAX_MS) throw cursorNotIssued();
  return new Date(v);
}

/** A cursor's integer for an int4 column; else the validation error on `cursor`. */
export function cursorInt4(v: CursorValue | undefined): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < INT4_MIN || v > INT4_MAX) throw cursorNotIssued();
  return v;
}

/** A cursor's number for a double precision column: finite; else the validation error on `cursor`. */
export function cursorFloat(v: CursorValue | undefined): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw cursorNotIssued();
  return v;
}

/** A cursor's id (text): a string without NUL (PostgreSQL's text cannot hold it), of bounded length. */
export function cursorId(v: CursorValue | undefined): string {
  if (typeof v !== "string" || v.length > CURSOR_ID_MAX || v.includes("\u0000")) throw cursorNotIssued();
  return v;
}

/** The time and id of a cursor made by timeIdCursor with the same tag; else the validation error on `cursor`. */
export function decodeTimeIdCursor(cursor: string, tag?: string): [Date, string] {
  const values = decodeCursor(cursor, tag === undefined ? 2 : 3);
  if (tag !== undefined && values.shift() !== tag) throw cursorNotIssued();
  const [at, id] = values;
  return [cursorTime(at), cursorId(id)];
}

/** A list's page request: how many, and after which cursor. */
export interface PageArgs {
  limit?: number | null;
  cursor?: string | null;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export function checkLimit(limit: number | null | undefined): number {
  if (limit === null || limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw errors.validation([{ path: "limit", message: `must be an integer from 1 to ${MAX_LIMIT}` }]);
  }
  return limit;
}

export interface SortKey {
  field: string;
  dir: "asc" | "desc";
}

/**
 * The Prisma `where` selecting rows strictly after `values` in the order `keys`:
 * (k1 > v1) OR (k1 = v1 AND k2 > v2) OR … with > or < per direction.
 */
export function keysetAfter(keys: SortKey[], values: unknown[]): Record<string, unknown> {
  const ors: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i++) {
    const cond: Record<string, unknown> = {};
    for (let j = 0; j < i; j++) cond[keys[j]!.field] = values[j];
    cond[keys[i]!.field] = { [keys[i]!.dir === "asc" ? "gt" : "lt"]: values[i] };
    ors.push(cond);
  }
  return { OR: ors };
}

export function orderByOf(keys: SortKey[]): Record<string, "asc" | "desc">[] {
  return keys.map((k) => ({ [k.field]: k.dir }));
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /** the cursor after one item of the page (Relay edges carry one per item) */
  cursorOf: (item: T) => string;
}

/** Fetch limit+1 rows, return limit of them and a cursor when there are more. */
export function toPage<T>(rows: T[], limit: number, cursorOf: (row: T) => CursorValue[]): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: rows.length > limit && last ? encodeCursor(cursorOf(last)) : null,
    cursorOf: (item) => encodeCursor(cursorOf(item)),
  };
}

const NEWEST_FIRST: SortKey[] = [
  { field: "createdAt", dir: "desc" },
  { field: "id", dir: "desc" },
];

export interface FindManyPage {
  where: Record<string, unknown>;
  orderBy: Record<string, "asc" | "desc">[];
  take: number;
}

/** A newest-first page of any table with `createdAt` and `id`: `findMany` runs the query given. */
export async function newestFirstPage<T extends { createdAt: Date; id: string }>(
  args: PageArgs,
  findMany: (q: FindManyPage) => Promise<T[]>,
): Promise<Page<T>> {
  const limit = checkLimit(args.limit);
  const after = args.cursor ? decodeTimeIdCursor(args.cursor) : null;
  const rows = await findMany({
    where: after ? keysetAfter(NEWEST_FIRST, after) : {},
    orderBy: orderByOf(NEWEST_FIRST),
    take: limit + 1,
  });
  return toPage(rows, limit, (r) => timeIdCursor(r.createdAt, r.id));
}
