// The moderation queue across discussions: pending (or rejected) comments, oldest or newest first,
// with Approve / Reject / Pin, keyboard shortcuts (j/k move, a approve, r reject), and new pending
// comments arriving live (the pendingComments subscription over graphql-sse).
import { useEffect, useRef, useState } from "preact/hooks";
import { gql, subscribe, when } from "../api";
import {
  ApproveDocument,
  ModerationQueueDocument,
  PendingCommentsDocument,
  PinDocument,
  RejectDocument,
  type QueueCommentFragment,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf } from "../ui";

type Status = "pending" | "rejected";
type Sort = "oldest" | "newest";

export function ModerationScreen() {
  const [status, setStatus] = useState<Status>("pending");
  const [sort, setSort] = useState<Sort>("oldest");
  const [items, setItems] = useState<QueueCommentFragment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [selected, setSelected] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const listRef = useRef<HTMLUListElement>(null);

  const load = async (after: string | null) => {
    setLoading(true);
    try {
      const d = await gql(ModerationQueueDocument, { status, sort, first: 25, after });
      const page = d.moderationQueue.edges.map((e) => e.node);
      setItems((prev) => (after ? [...prev, ...page] : page));
      setNext(d.moderationQueue.pageInfo.hasNextPage ? (d.moderationQueue.pageInfo.endCursor ?? null) : null);
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    setSelected(0);
    void load(null);
  }, [status, sort]);

  // new pending comments appear without a reload
  useEffect(() => {
    if (status !== "pending") return;
    return subscribe(PendingCommentsDocument, (d) => {
      const c = d.pendingComments;
      setItems((prev) => (prev.some((x) => x.id === c.id) ? prev : sort === "oldest" ? [...prev, c] : [c, ...prev]));
      setNotice(`New pending comment by ${c.author.name} in ${c.discussionId}.`);
    });
  }, [status, sort]);

  const act = async (c: QueueCommentFragment, action: "approve" | "reject" | "pin") => {
    try {
      if (action === "approve") await gql(ApproveDocument, { id: c.id });
      if (action === "reject") await gql(RejectDocument, { id: c.id });
      if (action === "pin") await gql(PinDocument, { id: c.id });
      if (action !== "pin") setItems((prev) => prev.filter((x) => x.id !== c.id));
      else setItems((prev) => prev.map((x) => (x.id === c.id ? { ...x, pinned: true } : x)));
      setNotice(`${action === "approve" ? "Approved" : action === "reject" ? "Rejected" : "Pinned"} the comment by ${c.author.name}.`);
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const onKey = (e: KeyboardEvent) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    const current = items[selected];
    if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      const i = Math.max(0, Math.min(items.length - 1, selected + (e.key === "j" ? 1 : -1)));
      setSelected(i);
      listRef.current?.querySelectorAll<HTMLElement>("li")[i]?.focus();
    } else if (current && e.key === "a") void act(current, "approve");
    else if (current && e.key === "r" && status === "pending") void act(current, "reject");
  };

  return (
    <section aria-labelledby="moderation-title" onKeyDown={onKey}>
      <h1 id="moderation-title">Moderation queue</h1>
      <div class="toolbar">
        <label>
          Show
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)}>
            <option value="pending">Pending</option>
            <option value="rejected">Rejected</option>
          </select>
        </label>
        <label>
          Order
          <select value={sort} onChange={(e) => setSort(e.currentTarget.value as Sort)}>
            <option value="oldest">Oldest first</option>
            <option value="newest">Newest first</option>
          </select>
        </label>
        <span class="hint">Keys: j / k move, a approve, r reject</span>
      </div>
      <ErrorMessage error={error} />
      {notice && <Notice>{notice}</Notice>}
      {!loading && items.length === 0 && <p>Nothing to moderate.</p>}
      <ul class="queue" ref={listRef} aria-label={`${status === "pending" ? "Pending" : "Rejected"} comments`}>
        {items.map((c, i) => (
          <li
            key={c.id}
            tabIndex={i === selected ? 0 : -1}
            aria-current={i === selected ? "true" : undefined}
            class={i === selected ? "selected" : ""}
            onFocus={() => setSelected(i)}
            aria-label={`Comment by ${c.author.name} in ${c.discussionId}`}
          >
            <div class="meta">
              <a href={`#/discussions/${encodeURIComponent(c.discussionId)}`}>{c.discussionId}</a> · <strong>{c.author.name}</strong> ·{" "}
              <time dateTime={c.createdAt}>{when(c.createdAt)}</time>
              {c.pinned && <span class="badge">pinned</span>}
            </div>
            <p class="body">{c.body}</p>
            <div class="actions">
              <button type="button" onClick={() => void act(c, "approve")}>
                Approve
              </button>
              {status === "pending" && (
                <button type="button" onClick={() => void act(c, "reject")}>
                  Reject
                </button>
              )}
              <button type="button" onClick={() => void act(c, "pin")} disabled={c.pinned}>
                Pin
              </button>
            </div>
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
