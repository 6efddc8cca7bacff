// Who or what decided a chat alert's comment after the alert was queued, in words for the link's page
// and its audit entry (contract section 21: a link whose comment was decided since changes nothing and
// says so). The last decision about the comment since then is read from the audit log — this alert's
// own other link (or this one), another alert's link, a moderator (an operator's email, a key's label,
// the admin token's subject), a deletion by a moderator, an erasure of the reader — or, for what no
// entry records, from the comment itself: the author's edit, readers' reports, a ban's rejection, a
// deletion by the author.
import { db, type RequestContext } from "../../../context/request.js";
import type { AuditEntry } from "../../../generated/prisma/client.js";
import type { CommentSubject } from "../../comments/engine/subject.js";
import type { AlertLinkData } from "./links.js";

/** The audit actions that decide a comment (a refused link's `alert_link.refused` does not). */
const DECIDING = ["comment.approve", "comment.reject", "comment.delete"];

const DONE: Record<string, string> = { "comment.approve": "approved", "comment.reject": "rejected", "comment.delete": "deleted" };
const STATE: Record<string, string> = { approved: "approved", rejected: "rejected", pending: "held for review", deleted: "deleted" };
const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;

/** Who an audit entry's actor is, from the point of view of the alert whose link is used. */
function actorWords(e: AuditEntry, link: AlertLinkData): string {
  switch (e.actorType) {
    case "alert_link": {
      const action = e.action === "comment.reject" ? "reject" : "approve";
      if (e.actorId !== link.jobId) return `another ${e.actorLabel ?? "chat alert"}'s ${capital(action)} link`;
      return action === link.action ? "this link" : `this alert's ${capital(action)} link`;
    }
    case "operator":
      return `a moderator (${e.actorLabel ?? e.actorId})`;
    case "admin":
      return `the admin token (${e.actorId})`;
    case "key":
      return e.actorLabel ? `a moderator's API key (${e.actorLabel})` : "a moderator's API key";
    default:
      return e.actorLabel ?? e.actorType;
  }
}

/** The last entry about the comment (or, for an erasure, its reader) since the alert was queued. */
async function lastDecision(ctx: RequestContext, comment: Pick<CommentSubject, "id" | "readerId">, since: Date) {
  return db(ctx).auditEntry.findFirst({
    where: {
      createdAt: { gte: since },
      OR: [
        { resourceType: "comment", resourceId: comment.id, action: { in: DECIDING } },
        { resourceType: "reader", resourceId: comment.readerId, action: "reader.erase" },
      ],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
}

/**
 * What became of the comment since the alert was queued, as a sentence: "The comment was already
 * approved by a moderator (ann@example.com) at …". `comment` null: it is gone (its reader erased).
 */
export async function describeDecided(
  ctx: RequestContext,
  link: AlertLinkData,
  comment: CommentSubject | null,
  since: Date,
): Promise<{ sentence: string; by: string; status: string }> {
  if (!comment) return { sentence: "The comment was deleted.", by: "a deletion", status: "deleted" };
  const entry = await lastDecision(ctx, comment, since);
  const reason = (
    typeof comment.moderationReason === "object" && comment.moderationReason !== null ? comment.moderationReason : {}
  ) as Record<string, unknown>;
  const edited = comment.editedAt && comment.editedAt.getTime() >= since.getTime() ? comment.editedAt : null;
  const at = (d: Date) => ` at ${d.toISOString()}`;
  const state = STATE[comment.status] ?? comment.status;
  let by: string;
  let what: string;
  if (entry && (!edited || entry.createdAt.getTime() >= edited.getTime())) {
    by = entry.action === "reader.erase" ? "an erasure of its reader's data" : actorWords(entry, link);
    what = `${DONE[entry.action] ?? "deleted"} by ${by}${at(entry.createdAt)}`;
  } else if (comment.status === "deleted") {
    by = "its author";
    what = "deleted by its author";
  } else if (edited) {
    by = "the author's edit";
    what = `edited by its author${at(edited)} (it is ${state} now)`;
  } else if (reason.source === "moderator" && typeof reason.ban === "object") {
    by = "a ban of its reader";
    what = `${state} with a ban of its reader`;
  } else if (reason.source === "reports") {
    by = "readers' reports";
    what = `${state} by readers' reports`;
  } else if (reason.source === "moderator") {
    by = "a moderator";
    what = `${state} by a moderator`;
  } else {
    by = "a change";
    what = `changed (it is ${state} now)`;
  }
  const already = what.startsWith("approved") || what.startsWith("rejected") ? "already " : "";
  return { sentence: `The comment was ${already}${what}.`, by, status: comment.status };
}
