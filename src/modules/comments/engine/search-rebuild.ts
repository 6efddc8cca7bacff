// `engagement search rebuild [--tenant <id>]`: comment search's documents made again, a tenant's or
// every tenant's, while the service runs. A document is made from its comment's row as it is (the
// events only say which comments changed), so a rebuild reads the comments themselves, discussion by
// discussion (eng_search_rebuild, prisma/sql/72-search.sql: under the discussion's position lock, the
// documents made equal to its comments', the position moved to its head, from where the projector
// goes on). It covers what the log no longer holds: comments older than its retention (their days'
// partitions dropped) and imported ones (an import appends no events). Documents of a discussion
// that is not there any more go too.
// Under engine/: an operator's command over any number of tenants; each tenant's statements run on
// its own store (`app.stores(tenantId)`), and the tenants are listed with the raw client.
import type { AppServices } from "../../../context/services.js";

/** discussions one statement rebuilds */
const GROUP = 50;
/** a group's statement's own limit (a discussion of 100,000 comments is parsed whole) */
const REBUILD_TIMEOUT_MS = 10 * 60_000;

export interface SearchRebuilt {
  tenants: number;
  discussions: number;
  /** documents written (the others were as their comments' rows make them) */
  documents: number;
  /** documents deleted because their discussion is not there */
  orphans: number;
}

export async function rebuildSearch(app: Pick<AppServices, "prisma" | "stores">, tenantId: string | null): Promise<SearchRebuilt> {
  const tenants = tenantId
    ? await app.prisma.tenant.findMany({ where: { id: tenantId }, select: { id: true } })
    : await app.prisma.tenant.findMany({ select: { id: true }, orderBy: { id: "asc" } });
  const done: SearchRebuilt = { tenants: 0, discussions: 0, documents: 0, orphans: 0 };
  for (const { id } of tenants) {
    const sql = app.stores(id).sql;
    for (let after = ""; ;) {
      const page = await sql.query<{ id: string }>(
        "SELECT d.id FROM discussions d WHERE d.tenant_id = $1 AND d.id > $2 ORDER BY d.id LIMIT $3",
        [after, GROUP],
        "search_rebuild_page",
      );
      if (page.length === 0) break;
      const ids = page.map((d) => d.id);
      const [written] = await sql.long<{ n: number }>("SELECT eng_search_rebuild($1, $2::text[]) AS n", [ids], REBUILD_TIMEOUT_MS);
      done.documents += written?.n ?? 0;
      done.discussions += ids.length;
      after = ids.at(-1)!;
    }
    const orphans = await sql.long<{ n: number }>(
      `WITH gone AS (DELETE FROM comment_search s WHERE s.tenant_id = $1
                        AND NOT EXISTS (SELECT 1 FROM discussions d WHERE d.tenant_id = s.tenant_id AND d.id = s.discussion_id)
                      RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [],
      REBUILD_TIMEOUT_MS,
    );
    done.orphans += orphans[0]?.n ?? 0;
    done.tenants++;
  }
  return done;
}
