// What an import does once its rows are written (ImportWriter.finish): the planner's statistics
// refreshed after a large one (a sample, bounded whatever the table's size), then, for every
// discussion it touched, a group at a time under each one's lock, the counts recomputed where they
// differ (eng_import_recount in prisma/sql/95-import.sql) and the comments' search documents made
// again (eng_search_rebuild in prisma/sql/72-search.sql: an import writes comments without events, so
// the search projector, which follows the log, never hears of them; only what differs is written).
// Every statement has a longer limit than a request's (src/db/sql.ts `long`).
import type { Sql } from "../../../db/sql.js";
import type { TenantSql } from "../../../db/tenant-store.js";

/** discussions recounted by one statement */
const RECOUNT_GROUP = 50;
/** comments written from which the planner's statistics are refreshed */
const ANALYZE_AFTER = 10_000;

export interface Touched {
  /** every discussion the import wrote into */
  discussions: Iterable<string>;
  /** those whose comments' depths may have changed (an earlier run's top-level comment gained its parent) */
  depthDirty: ReadonlySet<string>;
  /** each discussion's comments that gained reactions */
  reacted: ReadonlyMap<string, ReadonlySet<string>>;
}

export async function settleImport(sql: Sql, store: TenantSql, touched: Touched, comments: number, timeoutMs: number): Promise<void> {
  const large = comments >= ANALYZE_AFTER;
  // after a large import the planner's statistics of comments are far off
  if (large) await sql.long("ANALYZE comments, discussions, readers", [], timeoutMs);
  const all = [...touched.discussions].sort();
  for (let i = 0; i < all.length; i += RECOUNT_GROUP) {
    const group = all.slice(i, i + RECOUNT_GROUP);
    await store.long(
      "SELECT eng_import_recount($1, $2::text[], $3::text[], $4::text[]) AS n",
      [group, group.filter((d) => touched.depthDirty.has(d)), group.flatMap((d) => [...(touched.reacted.get(d) ?? [])])],
      timeoutMs,
    );
    await store.long("SELECT eng_search_rebuild($1, $2::text[]) AS n", [group], timeoutMs);
  }
  // and the search documents' statistics, as the comments' above: a search is planned on them, and
  // until autovacuum comes by they would describe the table before the import's documents
  if (large) await sql.long("ANALYZE comment_search", [], timeoutMs);
}
