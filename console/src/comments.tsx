// A comment as moderators see it, shared by the queue, the Reported view, a discussion's page and a
// reader's page: its status badge, the reader (name and id, a link to the reader's page), the comment
// it replies to, and the actions its
// status allows — Approve and Reject (distinct colours and labels), Pin / Unpin only on a published
// (approved) comment, Delete after a confirmation — and why a safety rule or a moderator decided its
// status (moderationReason), in words. A remote reader's comment (the fediverse, a webmention) has its
// badge and "Block domain" (remote.tsx).
import { useState } from "preact/hooks";
import { when } from "./api";
import { gql } from "./api";
import { BlockDomainAction, RemoteBadge } from "./remote";
import {
  ApproveDocument,
  DeleteCommentDocument,
  PinDocument,
  RejectDocument,
  UnpinDocument,
  type CommentStatus,
  type QueueCommentFragment,
} from "./gql/graphql";

export type Moderated = Pick<QueueCommentFragment, "id" | "status" | "pinned" | "author" | "parent">;

/**
 * The comment as readers see it: the service's own rendering (`bodyHtml`, Markdown rendered and sanitized
 * by the server's one sanitizer when the comment was written, contract section 18), inserted as it is.
 * The console renders no Markdown and sanitizes nothing itself; its CSP (no inline script, images from
 * https only) holds whatever the HTML says. A deleted comment says so; a body the service has no HTML
 * for (none should be) shows its source as text.
 */
export function CommentBody({ c }: { c: Pick<QueueCommentFragment, "status" | "body" | "bodyHtml"> }) {
  if (c.status === "deleted")
    return (
      <div class="body">
        <p>
          <em>Deleted comment</em>
        </p>
      </div>
    );
  if (!c.bodyHtml) return <p class="body">{c.body}</p>;
  return <div class="body rendered" dangerouslySetInnerHTML={{ __html: c.bodyHtml }} />;
}

/** Tells the shell that the moderation queue changed (its Moderation (n) count reads it again). */
export const queueChanged = () => window.dispatchEvent(new Event("console:queue-changed"));

export type CommentAction = "approve" | "reject" | "pin" | "unpin" | "delete";

/** "1 comment", "2 comments". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const DONE: Record<CommentAction, string> = {
  approve: "Approved",
  reject: "Rejected",
  pin: "Pinned",
  unpin: "Unpinned",
  delete: "Deleted",
};
export const doneLabel = (a: CommentAction) => DONE[a];

export async function runCommentAction(id: string, action: CommentAction): Promise<void> {
  if (action === "approve") await gql(ApproveDocument, { id });
  else if (action === "reject") await gql(RejectDocument, { id });
  else if (action === "pin") await gql(PinDocument, { id });
  else if (action === "unpin") await gql(UnpinDocument, { id });
  else await gql(DeleteCommentDocument, { id });
  queueChanged();
}

const STATUS_LABEL: Record<CommentStatus, string> = {
  approved: "published",
  pending: "pending",
  rejected: "rejected",
  deleted: "deleted",
};

export function StatusBadge({ status }: { status: CommentStatus }) {
  return <span class={`badge status-${status}`}>{STATUS_LABEL[status]}</span>;
}

/** The reader: a link to their page (history, reports, Ban / Suspend / Lift ban); the name first, the id a muted detail. */
export function ReaderName({ author }: { author: { id: string; name: string; badge?: string | null } }) {
  return (
    <a class="reader" href={readerHref(author.id)}>
      <strong>{author.name}</strong> {author.badge && <ReaderBadge badge={author.badge} />} <RemoteBadge readerId={author.id} />{" "}
      <span class="muted id-detail">(reader {author.id})</span>
    </a>
  );
}

/** A reader's badge (contract section 21): the tenant's own short label, shown as a pill by the name. */
export function ReaderBadge({ badge }: { badge: string }) {
  return <span class="badge reader-badge">{badge}</span>;
}

export const readerHref = (id: string) => `#/readers/${encodeURIComponent(id)}`;

/** The discussion a comment is in: its title, a link to its page; its id on hover (the id when it has no title). */
export function DiscussionLink({ c }: { c: Pick<QueueCommentFragment, "discussionId" | "discussionTitle"> }) {
  return (
    <a href={`#/discussions/${encodeURIComponent(c.discussionId)}`} title={`Discussion id: ${c.discussionId}`}>
      {c.discussionTitle ?? c.discussionId}
    </a>
  );
}

/** A card's line: the discussion (unless the page is the discussion's), the reader, when. */
export function CommentMeta({
  c,
  discussion = true,
}: {
  c: Pick<QueueCommentFragment, "discussionId" | "discussionTitle" | "author" | "createdAt">;
  discussion?: boolean;
}) {
  return (
    <>
      {discussion && (
        <>
          <DiscussionLink c={c} /> ·{" "}
        </>
      )}
      <ReaderName author={c.author} /> · <time dateTime={c.createdAt}>{when(c.createdAt)}</time>
    </>
  );
}

const REPORT_REASON: Record<string, string> = { spam: "spam", abuse: "abuse", off_topic: "off topic", other: "other" };
export const reportReasonLabel = (r: string) => REPORT_REASON[r] ?? r;

/** The comment a reply answers: its author and the start of its body. */
export function ParentExcerpt({ parent }: { parent: Moderated["parent"] }) {
  if (!parent) return null;
  return (
    <blockquote class="parent">
      <span class="muted">
        In reply to <strong>{parent.author.name}</strong>
        {parent.author.badge && (
          <>
            {" "}
            <ReaderBadge badge={parent.author.badge} />
          </>
        )}
        {parent.status !== "approved" && (
          <>
            {" "}
            <StatusBadge status={parent.status} />
          </>
        )}
        :
      </span>{" "}
      {parent.status === "deleted" ? <em>deleted comment</em> : parent.excerpt}
    </blockquote>
  );
}

type Reason = {
  source?: string;
  rule?: string;
  words?: string[];
  links?: number;
  maxLinks?: number;
  newReaderHold?: number;
  earlierComments?: number;
  decision?: string;
  previous?: Reason;
  reportCount?: number;
  reasons?: Record<string, number>;
  reason?: string;
  fallback?: string;
  error?: string;
  ban?: { until?: string | null };
};

/** A comment's moderationReason in words ("" when it has none or one this console does not know). */
export function reasonText(reason: unknown): string {
  if (!reason || typeof reason !== "object") return "";
  const r = reason as Reason;
  const words = (r.words ?? []).join(", ");
  if (r.source === "rule" && r.rule === "bannedWords")
    return `banned word${r.words?.length === 1 ? "" : "s"}: ${words} (rejected by a rule)`;
  if (r.source === "rule" && r.rule === "suspectWords") return `suspect word${r.words?.length === 1 ? "" : "s"}: ${words} (held by a rule)`;
  if (r.source === "rule" && r.rule === "maxLinks")
    return `${plural(r.links ?? 0, "link")}, more than the ${r.maxLinks} allowed (held by a rule)`;
  if (r.source === "new_reader")
    return `new reader: ${plural(r.earlierComments ?? 0, "earlier comment")}, none approved yet (the first ${r.newReaderHold} are held)`;
  if (r.source === "reports") {
    const why = Object.entries(r.reasons ?? {})
      .map(([k, n]) => `${reportReasonLabel(k)} ${n}`)
      .join(", ");
    return `reported by ${plural(r.reportCount ?? 0, "reader")}${why ? ` (${why})` : ""}, held until a moderator decides`;
  }
  if (r.source === "hook" && r.fallback)
    return `the moderation hook gave no answer (${r.fallback.replace("_", " ")}${r.error ? `: ${r.error}` : ""}); its fallback decided ${r.decision}`;
  if (r.source === "hook") return `the moderation hook decided ${r.decision}${r.reason ? `: ${r.reason}` : ""}`;
  if (r.source === "akismet") return "Akismet called it spam";
  if (r.source === "trust") return "the reader is premoderated: every comment of theirs is held";
  if (r.source === "shadow_ban") return "the reader is shadow-banned: only they see this comment, as if published";
  if (r.source === "moderator") {
    const before = reasonText(r.previous);
    const by = r.ban ? (r.ban.until ? "by a moderator suspending the reader" : "by a moderator banning the reader") : "by a moderator";
    return `${r.decision === "approved" ? "approved" : "rejected"} ${by}${before ? `; before that, ${before}` : ""}`;
  }
  return "";
}

/** Why the comment has its status, when a rule or a moderator decided it. */
export function ModerationReason({ reason }: { reason: unknown }) {
  const text = reasonText(reason);
  if (!text) return null;
  return (
    <p class="reason">
      <strong>Why:</strong> {text}
    </p>
  );
}

/**
 * The actions the comment's status allows; `onAction` runs one (and reports errors). `onBlocked`: the
 * reader's domain was blocked (its comments here are now rejected): the screen reads them again.
 */
export function CommentActions({
  c,
  onAction,
  busy,
  onBlocked,
}: {
  c: Moderated;
  onAction: (a: CommentAction) => void;
  busy?: boolean;
  onBlocked?: (told: string) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  if (c.status === "deleted") return null;
  if (confirming)
    return (
      <div class="actions" role="group" aria-label={`Confirm deleting the comment by ${c.author.name}`}>
        Delete this comment for everyone?{" "}
        <button
          type="button"
          class="btn-delete"
          disabled={busy}
          onClick={() => {
            setConfirming(false);
            onAction("delete");
          }}
        >
          Confirm delete
        </button>
        <button type="button" class="btn-plain" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </div>
    );
  return (
    <div class="actions">
      {c.status !== "approved" && (
        <button type="button" class="btn-approve" disabled={busy} onClick={() => onAction("approve")}>
          <span aria-hidden="true">✓ </span>Approve
        </button>
      )}
      {c.status !== "rejected" && (
        <button type="button" class="btn-reject" disabled={busy} onClick={() => onAction("reject")}>
          <span aria-hidden="true">✕ </span>Reject
        </button>
      )}
      {c.status === "approved" && (
        <button type="button" class="btn-plain" disabled={busy} onClick={() => onAction(c.pinned ? "unpin" : "pin")}>
          {c.pinned ? "Unpin" : "Pin"}
        </button>
      )}
      <button type="button" class="btn-delete" disabled={busy} onClick={() => setConfirming(true)}>
        Delete
      </button>
      <BlockDomainAction
        readerId={c.author.id}
        onBlocked={(told) => {
          // its held comments left the queue: the shell's Moderation (n) reads its count again
          queueChanged();
          onBlocked?.(told);
        }}
      />
    </div>
  );
}
