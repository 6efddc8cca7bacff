// Discussions: the list with state and counts, filtered by id or title; a discussion's page with its
// thread (pinned first, tombstones as such) and Lock / Unlock / Archive.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  ArchiveDiscussionDocument,
  DiscussionThreadDocument,
  DiscussionsDocument,
  LockDiscussionDocument,
  UnlockDiscussionDocument,
  type DiscussionsQuery,
} from "../gql/graphql";
import { ErrorMessage, useAction, useLoad } from "../ui";
import { httpHref } from "../safe-url";

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
              <th scope="col">Title</th>
              <th scope="col">State</th>
              <th scope="col">Comments</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={`#/discussions/${encodeURIComponent(d.id)}`}>{d.id}</a>
                </td>
                <td>{d.title ?? "—"}</td>
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

function DiscussionPage({ id }: { id: string }) {
  const thread = useLoad(() => gql(DiscussionThreadDocument, { id }), [id]);
  const action = useAction();
  const d = thread.data?.discussion;
  const change = (which: "lock" | "unlock" | "archive") =>
    void action.run(async () => {
      if (which === "lock") await gql(LockDiscussionDocument, { id });
      if (which === "unlock") await gql(UnlockDiscussionDocument, { id });
      if (which === "archive") await gql(ArchiveDiscussionDocument, { id });
      thread.reload();
    });
  const comments = thread.data?.comments.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="discussion-title">
      <p>
        <a href="#/discussions">← All discussions</a>
      </p>
      <h1 id="discussion-title">{d?.title ?? id}</h1>
      <ErrorMessage error={thread.error ?? action.error} />
      {d && (
        <>
          <p>
            <code>{d.id}</code> · state <strong>{d.state}</strong> · {d.commentCount} comments <DiscussionUrl url={d.url} />
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
          <h2>Thread</h2>
          {comments.length === 0 && <p>No comments yet.</p>}
          <ul class="thread">
            {comments.map((c) => (
              <li key={c.id} style={{ marginInlineStart: `${Math.min(c.depth ?? 0, 6) * 1.5}rem` }}>
                <div class="meta">
                  <strong>{c.author.name}</strong> · <time dateTime={c.createdAt}>{when(c.createdAt)}</time>
                  {c.pinned && <span class="badge">pinned</span>}
                  {c.status !== "approved" && <span class="badge">{c.status}</span>}
                </div>
                <p class="body">{c.status === "deleted" ? <em>Deleted comment</em> : c.body}</p>
              </li>
            ))}
          </ul>
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
