// Keyset pagination: `{ items, nextCursor }` with an opaque cursor holding the sort key of the last
// item. Stable under concurrent inserts (no offsets), whatever the sort order.
import { errors } from "./errors.js";

export type CursorValue = string | number | boolean | null;

export function encodeCursor(values: CursorValue[]): string {
  return Buffer.from(JSON.stringify(values), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, arity: number): CursorValue[] {
  const bad = () => errors.validation([{ path: "cursor", message: "is not a cursor this list issued" }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== arity ||
    !parsed.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))
  ) {
    throw bad();
  }
  return parsed as CursorValue[];
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
  args: { limit?: number | null; cursor?: string | null },
  findMany: (q: FindManyPage) => Promise<T[]>,
): Promise<Page<T>> {
  const limit = checkLimit(args.limit);
  const after = args.cursor ? decodeCursor(args.cursor, 2) : null;
  if (after && (typeof after[0] !== "number" || typeof after[1] !== "string")) {
    throw errors.validation([{ path: "cursor", message: "is not a cursor this list issued" }]);
  }
  const rows = await findMany({
    where: after ? keysetAfter(NEWEST_FIRST, [new Date(after[0] as number), after[1]]) : {},
    orderBy: orderByOf(NEWEST_FIRST),
    take: limit + 1,
  });
  return toPage(rows, limit, (r) => [r.createdAt.getTime(), r.id]);
}
