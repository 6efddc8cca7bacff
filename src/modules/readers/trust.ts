// A reader's trust level (contract section 21), as a moderator sets it: PUT /readers/{readerId}/trust
// {"level": "trusted|default|premoderated"} (moderate_content). The write path reads it in the write's
// own statement (eng_post_comment, eng_edit_comment in prisma/sql/20-comments.sql): a trusted reader's
// comment skips newReaderHold, suspect words, maxLinks, the hook, Akismet and pre-moderation (banned
// words still reject); a premoderated reader's every comment is held. Audited as reader.trust.
import { z } from "zod";
import { store, type RequestContext } from "../../context/request.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { recordAudit } from "../audit/audit.js";

export const TRUST_LEVELS = ["trusted", "default", "premoderated"] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];

const TrustInput = z.object({
  level: z.enum(TRUST_LEVELS, {
    error: (i) => (i.input === undefined ? "is required" : `must be one of ${TRUST_LEVELS.join(", ")}`),
  }),
});

const SET_TRUST = `UPDATE readers r SET trust_level = $3::"TrustLevel", updated_at = $4
    FROM readers o WHERE o.tenant_id = r.tenant_id AND o.id = r.id AND r.tenant_id = $1 AND r.id = $2
  RETURNING o.trust_level::text AS previous`;

/** Sets the reader's trust level; unknown reader: 404; an unknown level: 422. */
export async function setReaderTrust(ctx: RequestContext, readerId: string, input: { level?: unknown }): Promise<void> {
  const parsed = TrustInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const { level } = parsed.data;
  const rows = await store(ctx).sql.query<{ previous: TrustLevel }>(SET_TRUST, [readerId, level, ctx.app.clock.now()], "reader_set_trust");
  const row = rows[0];
  if (!row) throw errors.notFound("Reader");
  if (row.previous !== level) await recordAudit(ctx, "reader.trust", { type: "reader", id: readerId }, { level, previous: row.previous });
}
