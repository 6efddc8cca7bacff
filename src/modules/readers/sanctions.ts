// Reader sanctions (contract section 12): a ban (no `until`) or a suspension (until a time) of one of
// the tenant's readers, kept as history in reader_sanctions; either may be a shadow ban (contract
// section 21), which refuses nothing: eng_post_comment stores the reader's new comments rejected
// (reason shadow_ban) and answers them, to that reader alone, as published. The write functions refuse a sanctioned
// reader's post, edit, reaction and report themselves (eng_assert_not_banned, judged at the write's
// time from the app's clock), so a ban holds on every instance at once, with nothing cached.
// Banning is one statement (eng_ban_reader): the sanction and, with rejectPending, the rejection of the
// reader's pending comments with the events a moderator's rejection appends. A ban (no `until`, not
// shadow) revokes the reader's hosted sign-in sessions for good, so lifting it brings none back; a
// suspension keeps them, as it ends by itself (verifySession, src/auth/reader-sessions.ts). Both
// actions are audited.
import { z } from "zod";
import { requirePrincipal, store, type RequestContext } from "../../context/request.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { actorOf, recordAudit } from "../audit/audit.js";
import type { Sanction } from "../../events/write-results.js";
import { isoTimestamp } from "../../lib/timestamps.js";

/** A sanction as the API shows it (eng_sanction_json; declared in src/events/write-results.ts). */
export type { Sanction };

export const SANCTION_REASON_MAX = 500;

export interface BanReaderInput {
  until?: string | null | undefined;
  reason?: string | null | undefined;
  rejectPending?: boolean | null | undefined;
  /** a shadow ban: nothing is refused; the reader's new comments are stored rejected, shown to them alone */
  shadow?: boolean | null | undefined;
}

const BanInput = z.object({
  until: isoTimestamp("must be an ISO 8601 timestamp or null").nullish(),
  reason: z
    .string({ error: "must be a string" })
    .refine((s) => [...s].length <= SANCTION_REASON_MAX, `must be at most ${SANCTION_REASON_MAX} characters`)
    .refine((s) => !s.includes("\u0000"), "must not contain NUL characters")
    .nullish(),
  rejectPending: z.boolean({ error: "must be a boolean" }).nullish(),
  shadow: z.boolean({ error: "must be a boolean" }).nullish(),
});

/**
 * Bans (no `until`) or suspends (`until` in the future; in the past: 422) the reader; a sanction in
 * force is replaced. Unknown reader: 404. Answers the sanction and how many pending comments were rejected.
 */
export async function banReader(
  ctx: RequestContext,
  readerId: string,
  input: BanReaderInput,
): Promise<{ sanction: Sanction; rejected: number }> {
  const principal = requirePrincipal(ctx);
  const parsed = BanInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const now = ctx.app.clock.now();
  const until = parsed.data.until ? new Date(parsed.data.until) : null;
  if (until && until.getTime() <= now.getTime()) throw errors.validation([{ path: "until", message: "must be in the future" }]);
  const reason = parsed.data.reason?.trim() ? parsed.data.reason : null;
  const result = await store(ctx).write("eng_ban_reader", {
    reader: readerId,
    id: newId("ban"),
    until,
    reason,
    shadow: parsed.data.shadow ?? false,
    by: actorOf(principal).actorId,
    rejectPending: parsed.data.rejectPending ?? false,
    at: now,
  });
  await recordAudit(
    ctx,
    "reader.ban",
    { type: "reader", id: readerId },
    { until: result.sanction.until, reason, shadow: result.sanction.shadow, rejectedPending: result.rejected },
  );
  return result;
}

const READER_EXISTS = "SELECT 1 AS one FROM readers WHERE tenant_id = $1 AND id = $2";
/** the sanction lifted, and the reader's row told that none is in force (eng_post_comment reads it there) */
const LIFT = `WITH lifted AS (
    UPDATE reader_sanctions SET lifted_at = $3, lifted_by = $4
     WHERE tenant_id = $1 AND reader_id = $2 AND lifted_at IS NULL AND (until IS NULL OR until > $3) RETURNING id
  ), reader AS (
    UPDATE readers SET sanctioned_until = NULL WHERE tenant_id = $1 AND id = $2
  )
  SELECT id FROM lifted`;

/** Lifts the reader's sanction in force; none in force is not an error. Unknown reader: 404. */
export async function liftReaderBan(ctx: RequestContext, readerId: string): Promise<{ lifted: boolean }> {
  const principal = requirePrincipal(ctx);
  const exists = await store(ctx).sql.query(READER_EXISTS, [readerId], "reader_exists");
  if (!exists.length) throw errors.notFound("Reader");
  const lifted = await store(ctx).sql.query(LIFT, [readerId, ctx.app.clock.now(), actorOf(principal).actorId], "reader_lift_ban");
  if (lifted.length) await recordAudit(ctx, "reader.unban", { type: "reader", id: readerId });
  return { lifted: lifted.length > 0 };
}
