// Keyset pagination: `{ items, nextCursor }` with an opaque cursor holding the sort key of the last
// item. Stable under concurrent inserts (no offsets), whatever the sort order.
import { errors } from "./errors.js";

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

/** The time and id of a cursor made by timeIdCursor with the same tag; else the validation error on `cursor`. */
export function decodeTimeIdCursor(cursor: string, tag?: string): [Date, string] {
  const values = decodeCursor(cursor, tag === undefined ? 2 : 3);
  if (tag !== undefined && values.shift() !== tag) throw cursorNotIssued();
  const [at, id] = values;
  if (typeof at !== "number" || typeof id !== "string") throw cursorNotIssued();
  return [new Date(at), id];
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
