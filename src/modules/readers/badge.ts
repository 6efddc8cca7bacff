// A reader's badge (contract section 21), as a moderator sets it: PATCH /readers/{readerId}
// {"badge"} (moderate_content). A moderator's badge wins over the identity assertion's `badge` claim
// until a moderator clears it (null); the claim then gives the badge again from the reader's next
// comment (eng_claim_badge in prisma/sql/10-readers.sql). Audited as reader.badge.
import { store, type RequestContext } from "../../context/request.js";
import { parseBadge } from "../../lib/badge.js";
import { errors } from "../../lib/errors.js";
import { recordAudit } from "../audit/audit.js";

export interface UpdateReaderInput {
  /** absent: unchanged; null or blank: cleared */
  badge?: string | null | undefined;
}

const SET_BADGE = `UPDATE readers r SET badge = $3, badge_source = CASE WHEN $3::text IS NULL THEN NULL ELSE 'moderator' END, updated_at = $4
    FROM readers o WHERE o.tenant_id = r.tenant_id AND o.id = r.id AND r.tenant_id = $1 AND r.id = $2
  RETURNING o.badge AS previous, o.badge_source AS previous_source`;
const READER_EXISTS = "SELECT 1 AS one FROM readers WHERE tenant_id = $1 AND id = $2";

/** Applies the moderator's changes to the reader; unknown reader: 404; a bad badge: 422. */
export async function updateReader(ctx: RequestContext, readerId: string, input: UpdateReaderInput): Promise<void> {
  if (input.badge === undefined) {
    const exists = await store(ctx).sql.query(READER_EXISTS, [readerId], "reader_exists");
    if (!exists.length) throw errors.notFound("Reader");
    return;
  }
  const parsed = parseBadge(input.badge);
  if ("problem" in parsed) throw errors.validation([{ path: "badge", message: parsed.problem }]);
  const rows = await store(ctx).sql.query<{ previous: string | null; previous_source: string | null }>(
    SET_BADGE,
    [readerId, parsed.badge, ctx.app.clock.now()],
    "reader_set_badge",
  );
  const row = rows[0];
  if (!row) throw errors.notFound("Reader");
  await recordAudit(
    ctx,
    "reader.badge",
    { type: "reader", id: readerId },
    { badge: parsed.badge, previous: row.previous, previousSource: row.previous_source },
  );
}
