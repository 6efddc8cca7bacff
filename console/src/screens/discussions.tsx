// Discussions: the list with state and counts, filtered by id or title; a discussion's page with
// Lock / Unlock / Archive, its counts by status and every comment whatever its status (pending,
// rejected and deleted included) as a thread, each with its status and the actions it allows.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  ArchiveDiscussionDocument,
  DiscussionThreadDocument,
  DiscussionsDocument,
  LockDiscussionDocument,
  UnlockDiscussionDocument,
  type DiscussionThreadQuery,
  type DiscussionsQuery,
} from "../gql/graphql";
import { ErrorMessage, Notice, useAction, useLoad } from "../ui";
import { httpHref } from "../safe-url";
import {
  CommentActions,
  CommentBody,
  CommentMeta,
  StatusBadge,
  doneLabel,
  plural,
  runCommentAction,
  type CommentAction,
} from "../comments";

type Row = DiscussionsQuery["discussions"]["edges"][number]["node"];

export function DiscussionsScreen({ id }: { id?: string | undefined }) {
  return id ? <DiscussionPage id={id} /> : <DiscussionList />;
}

function DiscussionList() {
  const [filter, setFilter] = useState("");
  const [rows, setRows] = useState<Row[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const list = useLoad(async () => {
    const d = await gql(DiscussionsDocument, { first: 100 });
    setRows(d.discussions.edges.map((e) => e.node));
    setNext(d.discussions.pageInfo.hasNextPage ? (d.discussions.pageInfo.endCursor ?? null) : null);
    return d;
  });
  const more = async () => {
    const d = await gql(DiscussionsDocument, { first: 100, after: next });
    setRows((r) => [...r, ...d.discussions.edges.map((e) => e.node)]);
    setNext(d.discussions.pageInfo.hasNextPage ? (d.discussions.pageInfo.endCursor ?? null) : null);
  };
  const f = filter.trim().toLowerCase();
  const shown = f ? rows.filter((r) => r.id.toLowerCase().includes(f) || (r.title ?? "").toLowerCase().includes(f)) : rows;
  return (
    <section aria-labelledby="discussions-title">
      <h1 id="discussions-title">Discussions</h1>
      <label class="filter">
        Filter by id or title
        <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </label>
      <ErrorMessage error={list.error} />
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
        <table>
          <caption class="sr-only">Discussions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Discussion</th>
              <th scope="col">State</th>
              <th scope="col">Published comments</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={`#/discussions/${encodeURIComponent(d.id)}`} title={`Discussion id: ${d.id}`}>
                    {d.title ?? d.id}
                  </a>
                  {d.title && <span class="muted id-detail block">{d.id}</span>}
                </td>
                <td>{d.state}</td>
                <td>{d.commentCount}</td>
                <td>{when(d.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!list.loading && shown.length === 0 && <p>No discussions match.</p>}
      {next && (
        <button type="button" onClick={() => void more()}>
          Load more
        </button>
      )}
    </section>
  );
}

type ThreadComment = NonNullable<DiscussionThreadQuery["discussionComments"]>["edges"][number]["node"];

/** Replies under their parent (each list oldest first); a reply whose parent is not loaded yet stays at the top level. */
function threadOrder(comments: ThreadComment[]): ThreadComment[] {
  const ids = new Set(comments.map((c) => c.id));
  const children = new Map<string | null, ThreadComment[]>();
  for (const c of comments) {
    const key = c.parentId && ids.has(c.parentId) ? c.parentId : null;
    children.set(key, [...(children.get(key) ?? []), c]);
  }
  const out: ThreadComment[] = [];
  const walk = (key: string | null) => {
    for (const c of children.get(key) ?? []) {
      out.push(c);
      walk(c.id);
    }
  };
  walk(null);
  return out;
}

function DiscussionPage({ id }: { id: string }) {
  const [comments, setComments] = useState<ThreadComment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const thread = useLoad(async () => {
    const d = await gql(DiscussionThreadDocument, { id });
    setComments(d.discussionComments.edges.map((e) => e.node));
    setNext(d.discussionComments.pageInfo.hasNextPage ? (d.discussionComments.pageInfo.endCursor ?? null) : null);
    return d;
  }, [id]);
  const more = async () => {
    const d = await gql(DiscussionThreadDocument, { id, after: next });
    setComments((c) => [...c, ...d.discussionComments.edges.map((e) => e.node)]);
    setNext(d.discussionComments.pageInfo.hasNextPage ? (d.discussionComments.pageInfo.endCursor ?? null) : null);
  };
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const d = thread.data?.discussion;
  const counts = thread.data?.discussionCommentCounts;
  const change = (which: "lock" | "unlock" | "archive") =>
    void action.run(async () => {
      if (which === "lock") await gql(LockDiscussionDocument, { id });
      if (which === "unlock") await gql(UnlockDiscussionDocument, { id });
      if (which === "archive") await gql(ArchiveDiscussionDocument, { id });
      thread.reload();
    });
  const moderate = (c: ThreadComment, a: CommentAction) =>
    void action.run(async () => {
      await runCommentAction(c.id, a);
      setNotice(`${doneLabel(a)} the comment by ${c.author.name}.`);
      thread.reload();
    });
  return (
    <section aria-labelledby="discussion-title">
      <p>
        <a href="#/discussions">← All discussions</a>
      </p>
      <h1 id="discussion-title">{d?.title ?? id}</h1>
      <ErrorMessage error={thread.error ?? action.error} />
      {notice && <Notice>{notice}</Notice>}
      {d && (
        <>
          <p>
            <code>{d.id}</code> · state <strong>{d.state}</strong> <DiscussionUrl url={d.url} />
          </p>
          {counts && (
            <p class="counts">
              {plural(counts.approved, "published comment")} · {counts.pending} pending · {counts.rejected} rejected · {counts.deleted}{" "}
              deleted
            </p>
          )}
          <p class="page-reactions">
            {d.reactions.length
              ? `Page reactions: ${d.reactions.map((r) => `${r.count} ${r.kind}`).join(" · ")}`
              : "No page reactions yet."}
          </p>
          <div class="actions">
            <button type="button" disabled={action.busy || d.state !== "open"} onClick={() => change("lock")}>
              Lock
            </button>
            <button type="button" disabled={action.busy || d.state !== "locked"} onClick={() => change("unlock")}>
              Unlock
            </button>
            <button type="button" disabled={action.busy || d.state === "archived"} onClick={() => change("archive")}>
              Archive
            </button>
          </div>
          <h2>Comments</h2>
          {comments.length === 0 && <p>No comments yet.</p>}
          <ul class="thread" aria-label="Every comment, replies under their parent">
            {threadOrder(comments).map((c) => (
              <li
                key={c.id}
                class={`status-${c.status}`}
                style={{ marginInlineStart: `${Math.min(c.depth ?? 0, 6) * 1.5}rem` }}
                aria-label={`Comment by ${c.author.name}, ${c.status === "approved" ? "published" : c.status}`}
              >
                <div class="meta">
                  <StatusBadge status={c.status} />
                  {c.pinned && <span class="badge">pinned</span>} <CommentMeta c={c} discussion={false} />
                </div>
                <CommentBody c={c} />
                <CommentActions c={c} busy={action.busy} onAction={(a) => moderate(c, a)} onBlocked={() => thread.reload()} />
              </li>
            ))}
          </ul>
          {next && (
            <button type="button" onClick={() => void more()}>
              Load more comments
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** The discussion's url: a link only when it is http(s); anything else (stored before the rule) as text. */
function DiscussionUrl({ url }: { url: string | null | undefined }) {
  if (!url) return null;
  const href = httpHref(url);
  if (href) {
    return (
      <a href={href} rel="noopener noreferrer">
        {url}
      </a>
    );
  }
  return <span title="Not shown as a link: not an http(s) URL">{url}</span>;
}
