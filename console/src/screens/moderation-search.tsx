// Comment search on the moderation screen (contract section 21, GraphQL searchComments): the words
// (all must match; word* a prefix, "a phrase", -excluded; case and accents ignored) and the filters
// (reader, discussion, status, links, open reports, a range of UTC days). While a search is shown the
// queue below is hidden (onActive); its results carry the same actions as the queue's cards and the
// search runs again after one, so a result shows its new status (or leaves a status-filtered search).
// The seven filters are folded under the search box (a "Filters" disclosure) until used, so the queue
// starts near the top; they open by themselves when one is set.
import { useEffect, useState } from "preact/hooks";
import { gql } from "../api";
import { SearchCommentsDocument, type CommentStatus, type QueueCommentFragment, type SearchCommentsQueryVariables } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf } from "../ui";
import {
  CommentActions,
  CommentBody,
  CommentMeta,
  ModerationReason,
  ParentExcerpt,
  StatusBadge,
  doneLabel,
  runCommentAction,
  type CommentAction,
} from "../comments";

const PAGE = 25;

interface Fields {
  q: string;
  readerId: string;
  discussionId: string;
  status: "" | CommentStatus;
  links: "" | "yes" | "no";
  reported: "" | "yes" | "no";
  /** yyyy-mm-dd (a UTC day), inclusive */
  from: string;
  to: string;
}

const EMPTY: Fields = { q: "", readerId: "", discussionId: "", status: "", links: "", reported: "", from: "", to: "" };

const yesNo = (v: "" | "yes" | "no") => (v === "" ? null : v === "yes");
/** The day after a yyyy-mm-dd, at 00:00 UTC: `to` takes in its whole day. */
const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();

function variablesOf(f: Fields): SearchCommentsQueryVariables {
  return {
    q: f.q.trim() || null,
    readerId: f.readerId.trim() || null,
    discussionId: f.discussionId.trim() || null,
    status: f.status || null,
    hasLinks: yesNo(f.links),
    reported: yesNo(f.reported),
    from: f.from ? `${f.from}T00:00:00Z` : null,
    to: f.to ? dayAfter(f.to) : null,
  };
}

const where = (c: QueueCommentFragment) => c.discussionTitle ?? c.discussionId;

/** How many of the filters (every field but the words) are set. */
const filtersSet = (f: Fields) => (Object.keys(EMPTY) as (keyof Fields)[]).filter((k) => k !== "q" && f[k].trim() !== "").length;

export function CommentSearch({ onActive }: { onActive: (active: boolean) => void }) {
  const [fields, setFields] = useState<Fields>(EMPTY);
  /** the search shown: null while none is */
  const [shown, setShown] = useState<SearchCommentsQueryVariables | null>(null);
  const [items, setItems] = useState<QueueCommentFragment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const active = filtersSet(fields);
  const [open, setOpen] = useState(active > 0);
  // a filter set (by the form, or state given to it) shows the filters
  useEffect(() => {
    if (active > 0) setOpen(true);
  }, [active > 0]);

  const set =
    <K extends keyof Fields>(key: K) =>
    (e: { currentTarget: { value: string } }) =>
      setFields((f) => ({ ...f, [key]: e.currentTarget.value as Fields[K] }));

  const run = async (vars: SearchCommentsQueryVariables, after: string | null) => {
    setLoading(true);
    try {
      const d = await gql(SearchCommentsDocument, { ...vars, first: PAGE, after });
      const page = d.searchComments.edges.map((e) => e.node);
      setItems((prev) => (after ? [...prev, ...page] : page));
      setNext(d.searchComments.pageInfo.hasNextPage ? (d.searchComments.pageInfo.endCursor ?? null) : null);
      setShown(vars);
      onActive(true);
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  };

  const clear = () => {
    setFields(EMPTY);
    setShown(null);
    setItems([]);
    setNext(null);
    setError(null);
    setNotice(null);
    onActive(false);
  };

  const act = async (c: QueueCommentFragment, action: CommentAction) => {
    setBusy(true);
    try {
      await runCommentAction(c.id, action);
      setNotice(`${doneLabel(action)} the comment by ${c.author.name}.`);
      if (shown) await run(shown, null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="search">
      <form
        role="search"
        aria-label="Search comments"
        onSubmit={(e) => {
          e.preventDefault();
          void run(variablesOf(fields), null);
        }}
      >
        <div class="toolbar">
          <label class="grow">
            Search comments
            <input
              type="search"
              name="q"
              value={fields.q}
              maxLength={200}
              aria-describedby="search-syntax"
              onInput={set("q")}
              placeholder='words, prefix*, "a phrase", -excluded'
            />
          </label>
          <button type="submit" disabled={loading}>
            Search
          </button>
          {shown && (
            <button type="button" class="btn-plain" onClick={clear}>
              Clear search
            </button>
          )}
        </div>
        <p id="search-syntax" class="hint">
          Every word must match; <code>word*</code> matches a prefix, <code>"a phrase"</code> the words in order, <code>-word</code> leaves
          them out. Case and accents are ignored.
        </p>
        <button
          type="button"
          class="btn-plain disclosure"
          aria-expanded={open}
          aria-controls="search-filters"
          onClick={() => setOpen(!open)}
        >
          <span aria-hidden="true">{open ? "▾ " : "▸ "}</span>
          Filters{active > 0 ? ` (${active} set)` : ""}
        </button>
        <fieldset id="search-filters" hidden={!open}>
          <legend>Filters</legend>
          <div class="toolbar">
            <label>
              Reader id
              <input type="text" name="readerId" value={fields.readerId} onInput={set("readerId")} />
            </label>
            <label>
              Discussion id
              <input type="text" name="discussionId" value={fields.discussionId} onInput={set("discussionId")} />
            </label>
            <label>
              Status
              <select name="status" value={fields.status} onChange={set("status")}>
                <option value="">Any but deleted</option>
                <option value="approved">Approved</option>
                <option value="pending">Pending</option>
                <option value="rejected">Rejected</option>
                <option value="deleted">Deleted</option>
              </select>
            </label>
            <label>
              Links
              <select name="links" value={fields.links} onChange={set("links")}>
                <option value="">With or without</option>
                <option value="yes">With links</option>
                <option value="no">Without links</option>
              </select>
            </label>
            <label>
              Reports
              <select name="reported" value={fields.reported} onChange={set("reported")}>
                <option value="">Reported or not</option>
                <option value="yes">With open reports</option>
                <option value="no">Without open reports</option>
              </select>
            </label>
            <label>
              From (UTC day)
              <input type="date" name="from" value={fields.from} onInput={set("from")} />
            </label>
            <label>
              To (UTC day, included)
              <input type="date" name="to" value={fields.to} onInput={set("to")} />
            </label>
          </div>
        </fieldset>
      </form>
      <ErrorMessage error={error} />
      {notice && <Notice>{notice}</Notice>}
      {shown && !loading && items.length === 0 && <p>No comments match.</p>}
      {shown && (
        <ul class="queue" aria-label="Search results">
          {items.map((c) => (
            <li key={c.id} aria-label={`Comment by ${c.author.name} in ${where(c)}`}>
              <div class="meta">
                <StatusBadge status={c.status} /> <CommentMeta c={c} />
              </div>
              <ParentExcerpt parent={c.parent} />
              <CommentBody c={c} />
              <ModerationReason reason={c.moderationReason} />
              <CommentActions c={c} busy={busy} onAction={(a) => void act(c, a)} />
            </li>
          ))}
        </ul>
      )}
      {shown && next && (
        <button type="button" disabled={loading} onClick={() => void run(shown, next)}>
          More results
        </button>
      )}
    </div>
  );
}
