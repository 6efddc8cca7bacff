// The moderation screen's "Reported" view: comments readers reported (contract section 12), open ones
// (at the tenant's reportThreshold) or dismissed ones, newest report first; each card shows the comment,
// how many readers reported it and why (counts per reason, the latest notes), and offers "Dismiss"
// (closes its reports; the comment stays as it is) besides the comment's own actions.
import { useEffect, useState } from "preact/hooks";
import { gql, when } from "../api";
import { DismissReportsDocument, ReportsDocument, type ReportedFragment } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf } from "../ui";
import {
  CommentActions,
  CommentBody,
  CommentMeta,
  ModerationReason,
  ParentExcerpt,
  StatusBadge,
  doneLabel,
  plural,
  reportReasonLabel,
  runCommentAction,
  type CommentAction,
} from "../comments";

type Status = "open" | "dismissed";

/** The queue and the Reported view: two views of one screen, each a link. */
export function ModerationViews({ current }: { current: "queue" | "reported" }) {
  return (
    <nav class="views" aria-label="Moderation views">
      <a href="#/moderation" aria-current={current === "queue" ? "page" : undefined}>
        Queue
      </a>
      <a href="#/moderation/reported" aria-current={current === "reported" ? "page" : undefined}>
        Reported
      </a>
    </nav>
  );
}

const where = (r: ReportedFragment) => r.comment.discussionTitle ?? r.comment.discussionId;
const cardName = (r: ReportedFragment) => `Reported comment by ${r.comment.author.name} in ${where(r)}`;

export function ReportedScreen() {
  const [status, setStatus] = useState<Status>("open");
  const [items, setItems] = useState<ReportedFragment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = async (after: string | null) => {
    setLoading(true);
    try {
      const d = await gql(ReportsDocument, { status, first: 25, after });
      const page = d.reports.edges.map((e) => e.node);
      setItems((prev) => (after ? [...prev, ...page] : page));
      setNext(d.reports.pageInfo.hasNextPage ? (d.reports.pageInfo.endCursor ?? null) : null);
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => void load(null), [status]);

  const run = async (r: ReportedFragment, fn: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    try {
      setNotice(await fn());
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  const dismiss = (r: ReportedFragment) =>
    void run(r, async () => {
      await gql(DismissReportsDocument, { commentId: r.comment.id });
      setItems((prev) => prev.filter((x) => x.comment.id !== r.comment.id));
      return `Dismissed ${plural(r.reportCount, "report")} on the comment by ${r.comment.author.name}.`;
    });
  const moderate = (r: ReportedFragment, a: CommentAction) =>
    void run(r, async () => {
      await runCommentAction(r.comment.id, a);
      await load(null);
      return `${doneLabel(a)} the comment by ${r.comment.author.name}.`;
    });

  return (
    <section aria-labelledby="reported-title">
      <h1 id="reported-title">Reported comments</h1>
      <ModerationViews current="reported" />
      <div class="toolbar">
        <label>
          Show
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)}>
            <option value="open">Open reports</option>
            <option value="dismissed">Dismissed reports</option>
          </select>
        </label>
      </div>
      <ErrorMessage error={error} />
      {notice && <Notice>{notice}</Notice>}
      {!loading && items.length === 0 && <p>{status === "open" ? "No reported comments." : "No dismissed reports."}</p>}
      <ul class="queue" aria-label={status === "open" ? "Reported comments" : "Comments with dismissed reports"}>
        {items.map((r) => (
          <li key={r.comment.id} aria-label={cardName(r)}>
            <div class="meta">
              <StatusBadge status={r.comment.status} /> <CommentMeta c={r.comment} />
            </div>
            <ParentExcerpt parent={r.comment.parent} />
            <CommentBody c={r.comment} />
            <p class="reports">
              <strong>
                {r.status === "open" ? "Reported by" : "Dismissed reports from"} {plural(r.reportCount, "reader")}:
              </strong>{" "}
              {r.reasonCounts.map((c) => `${reportReasonLabel(c.reason)} ${c.count}`).join(", ")}
              {r.status === "open" && r.lastReportedAt && <span class="muted"> · last {when(r.lastReportedAt)}</span>}
              {r.status === "dismissed" && r.dismissedAt && <span class="muted"> · dismissed {when(r.dismissedAt)}</span>}
            </p>
            {r.notes.length > 0 && (
              <ul class="notes" aria-label="Reporters' notes">
                {r.notes.map((n, i) => (
                  <li key={i}>
                    <span class="muted">{reportReasonLabel(n.reason)}:</span> {n.note}
                  </li>
                ))}
              </ul>
            )}
            <ModerationReason reason={r.comment.moderationReason} />
            <div class="actions">
              {r.status === "open" && (
                <button type="button" class="btn-plain" disabled={busy} onClick={() => dismiss(r)}>
                  Dismiss
                </button>
              )}
            </div>
            <CommentActions c={r.comment} busy={busy} onAction={(a) => moderate(r, a)} />
          </li>
        ))}
      </ul>
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Load more
        </button>
      )}
    </section>
  );
}
