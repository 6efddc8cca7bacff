// Reader reports (contract section 12): a reader reports a comment once (a repeat answers the same
// report); the tenant's reportThreshold distinct open reporters put it on the reported list and,
// with reportAction "hold", take a published comment out of public view as a moderator's rejection
// does — both in the one statement of eng_report_comment (prisma/sql/60-safety.sql), under the
// discussion's lock. Moderators list reported comments (reported.ts) and dismiss their reports.
// Reports append no event of their own: readers' streams and webhooks never carry them.
import { z } from "zod";
import { loadTenant, requireReader, store, type RequestContext } from "../../context/request.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import type { CommentReport } from "../../events/write-results.js";
import { ReportReason as ReportReasons, ReportStatus as ReportStatuses } from "../../generated/prisma/enums.js";

export const REPORT_REASONS = Object.values(ReportReasons);
export type ReportReason = (typeof REPORT_REASONS)[number];
export const REPORT_STATUSES = Object.values(ReportStatuses);
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** A note's length limit, in characters (code points). */
export const NOTE_MAX = 500;

/** One reader's report as the API shows it (eng_report_json; declared in src/events/write-results.ts). */
export type { CommentReport };

export interface ReportCommentInput {
  reason?: string | null | undefined;
  note?: string | null | undefined;
}

const required = (i: { input: unknown }) => (i.input === undefined || i.input === null ? "is required" : "must be a string");

const ReportInput = z.object({
  reason: z
    .string({ error: required })
    .refine((r) => (REPORT_REASONS as readonly string[]).includes(r), `must be one of ${REPORT_REASONS.join(", ")}`),
  note: z
    .string({ error: "must be a string" })
    .refine((s) => [...s].length <= NOTE_MAX, `must be at most ${NOTE_MAX} characters`)
    .refine((s) => !s.includes("\u0000"), "must not contain NUL characters")
    .nullish(),
});

/**
 * Reports the comment as the asserted reader. 201 (`created`) the first time, the same report again
 * (`created: false`, 200 over REST) on a repeat. A comment the reader cannot see (or a deleted one)
 * is 404; their own is 422 on `comment`; a banned or suspended reader is 403 reader_banned.
 */
export async function reportComment(
  ctx: RequestContext,
  commentId: string,
  input: ReportCommentInput,
): Promise<{ report: CommentReport; created: boolean }> {
  const reader = await requireReader(ctx);
  const parsed = ReportInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const { safety } = resolveSettings((await loadTenant(ctx)).settings);
  const note = parsed.data.note?.trim() ? parsed.data.note : null;
  return store(ctx).write("eng_report_comment", {
    comment: commentId,
    id: newId("rpt"),
    reader: reader.id,
    name: reader.name,
    avatar: reader.avatarUrl,
    reason: parsed.data.reason,
    note,
    threshold: safety.reportThreshold,
    hold: safety.reportAction === "hold",
    at: ctx.app.clock.now(),
  });
}
