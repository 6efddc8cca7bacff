// The moderation queue across discussions: pending (or rejected) comments, oldest or newest first,
// each card with the discussion's title, the comment it replies to and the reader; Approve / Reject /
// Delete per card and for the selected cards at once; keyboard shortcuts handled at document level
// from the moment the screen shows (j/k move, x selects, a approves, r rejects); new pending comments
// arrive live (the pendingComments subscription over graphql-sse); the operator's own digest email
// is chosen in the toolbar (moderation-digest.tsx). Above it, comment search (moderation-search.tsx):
// while a search is shown the queue, its toolbar and its shortcuts step aside.
import { useEffect, useRef, useState } from "preact/hooks";
import { gql, subscribe } from "../api";
import {
  ModerationQueueDocument,
  PendingCommentsDocument,
  type ModerationQueueSort as Sort,
  type ModerationQueueStatus as Status,
  type QueueCommentFragment,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf } from "../ui";
import {
  CommentActions,
  CommentBody,
  CommentMeta,
  ModerationReason,
  ParentExcerpt,
  doneLabel,
  plural,
  queueChanged,
  runCommentAction,
  type CommentAction,
} from "../comments";
import { ModerationViews } from "./reported";
import { DigestChoice } from "./moderation-digest";
import { CommentSearch } from "./moderation-search";

const where = (c: QueueCommentFragment) => c.discussionTitle ?? c.discussionId;
const cardName = (c: QueueCommentFragment) => `Comment by ${c.author.name} in ${where(c)}`;

/** Keys typed into a text field are the field's, not shortcuts. */
const typing = (t: EventTarget | null) =>
  t instanceof HTMLTextAreaElement ||
  t instanceof HTMLSelectElement ||
  (t instanceof HTMLInputElement && t.type !== "checkbox") ||
  (t instanceof HTMLElement && t.isContentEditable);

export function ModerationScreen() {
  const [status, setStatus] = useState<Status>("pending");
  const [sort, setSort] = useState<Sort>("oldest");
  const [items, setItems] = useState<QueueCommentFragment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [selected, setSelected] = useState(0);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [searching, setSearching] = useState(false);
  const listRef = useRef<HTMLUListElement>(null);
  // what the shortcuts act on, current at once: keys typed faster than a render (j then a) see the move
  const live = useRef({ items, selected, busy, searching });
  // every comment this screen has shown: the subscription's first answer repeats recent ones
  const known = useRef(new Set<string>());
  live.current.items = items;
  live.current.busy = busy;
  live.current.searching = searching;
  const select = (i: number) => {
    live.current.selected = i;
    setSelected(i);
  };

  const load = async (after: string | null) => {
    setLoading(true);
    try {
      const d = await gql(ModerationQueueDocument, { status, sort, first: 25, after });
      const page = d.moderationQueue.edges.map((e) => e.node);
      for (const c of page) known.current.add(c.id);
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
    select(0);
    setPicked(new Set());
    void load(null);
  }, [status, sort]);

  // new pending comments appear without a reload
  useEffect(() => {
    if (status !== "pending") return;
    return subscribe(
      PendingCommentsDocument,
      (d) => {
        const c = d.pendingComments;
        // one shown already (or acted on since) is no news: the notice of an action stays
        if (known.current.has(c.id)) return;
        known.current.add(c.id);
        setItems((prev) => (prev.some((x) => x.id === c.id) ? prev : sort === "oldest" ? [...prev, c] : [c, ...prev]));
        setNotice(`New pending comment by ${c.author.name} in ${where(c)}.`);
        queueChanged();
      },
      // back after a break: what arrived meanwhile may be older than the server's look-back
      () => void load(null),
    );
  }, [status, sort]);

  /** Runs an action on some cards; those that leave the queue go, failures are reported. */
  const act = async (targets: QueueCommentFragment[], action: CommentAction) => {
    if (targets.length === 0) return;
    live.current.busy = true;
    setBusy(true);
    const results = await Promise.allSettled(targets.map((c) => runCommentAction(c.id, action)));
    live.current.busy = false;
    setBusy(false);
    const done = new Set(targets.filter((_c, i) => results[i]!.status === "fulfilled").map((c) => c.id));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    setItems((prev) => prev.filter((x) => !done.has(x.id)));
    setPicked((prev) => new Set([...prev].filter((id) => !done.has(id))));
    setError(failed ? `${plural(targets.length - done.size, "comment")} not changed: ${messageOf(failed.reason)}` : null);
    if (done.size > 0)
      setNotice(
        targets.length === 1
          ? `${doneLabel(action)} the comment by ${targets[0]!.author.name}.`
          : `${doneLabel(action)} ${plural(done.size, "comment")}.`,
      );
  };

  const focusCard = (i: number) => {
    select(i);
    listRef.current?.querySelectorAll<HTMLElement>(":scope > li")[i]?.focus();
  };

  // shortcuts work as soon as the queue shows, wherever the focus is (text fields aside)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const { items: shown, selected: at, busy: working, searching: away } = live.current;
      if (typing(e.target) || e.altKey || e.ctrlKey || e.metaKey || working || away) return;
      const i = Math.min(at, shown.length - 1);
      const current = shown[i];
      if (e.key === "j" || e.key === "k") {
        e.preventDefault();
        focusCard(Math.max(0, Math.min(shown.length - 1, i + (e.key === "j" ? 1 : -1))));
      } else if (current && e.key === "x") {
        e.preventDefault();
        toggle(current.id);
      } else if (current && e.key === "a") void act([current], "approve");
      else if (current && e.key === "r" && status === "pending") void act([current], "reject");
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [status]);

  const toggle = (id: string) =>
    setPicked((prev) => {
      const s = new Set(prev);
      if (s.has(id)) s.delete(id);
      else s.add(id);
      return s;
    });
  const chosen = items.filter((c) => picked.has(c.id));
  const all = items.length > 0 && chosen.length === items.length;

  return (
    <section aria-labelledby="moderation-title">
      <h1 id="moderation-title">Moderation queue</h1>
      <ModerationViews current="queue" />
      <CommentSearch onActive={setSearching} />
      {!searching && queueView()}
    </section>
  );

  // a plain function, not a component: the cards keep their DOM (and focus) across renders
  function queueView() {
    return (
      <>
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
          <span class="hint">Keys: j / k move, x select, a approve{status === "pending" ? ", r reject" : ""}</span>
          <DigestChoice />
        </div>
        {items.length > 0 && (
          <div class="toolbar bulk" role="group" aria-label="Selected comments">
            <label class="check">
              <input
                type="checkbox"
                checked={all}
                onChange={(e) => setPicked(e.currentTarget.checked ? new Set(items.map((c) => c.id)) : new Set())}
              />
              Select all shown
            </label>
            <button type="button" class="btn-approve" disabled={busy || chosen.length === 0} onClick={() => void act(chosen, "approve")}>
              Approve {plural(chosen.length, "selected comment")}
            </button>
            {status === "pending" && (
              <button type="button" class="btn-reject" disabled={busy || chosen.length === 0} onClick={() => void act(chosen, "reject")}>
                Reject {plural(chosen.length, "selected comment")}
              </button>
            )}
          </div>
        )}
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
              onFocus={() => select(i)}
              aria-label={cardName(c)}
            >
              <div class="card-head">
                <input type="checkbox" aria-label={`Select the ${cardName(c)}`} checked={picked.has(c.id)} onChange={() => toggle(c.id)} />
                <div class="meta">
                  <CommentMeta c={c} />
                </div>
              </div>
              <ParentExcerpt parent={c.parent} />
              <CommentBody c={c} />
              <ModerationReason reason={c.moderationReason} />
              <CommentActions
                c={c}
                busy={busy}
                onAction={(a) => void act([c], a)}
                onBlocked={(told) => {
                  // the domain's comments were rejected: the queue read again (pending ones leave it)
                  setNotice(told);
                  void load(null);
                }}
              />
            </li>
          ))}
        </ul>
        {next && (
          <button type="button" onClick={() => void load(next)}>
            Load more
          </button>
        )}
      </>
    );
  }
}
