// The Bluesky screen's linked posts (console/src/screens/bluesky.tsx; contract section 30): GraphQL
// blueskyLinks (how reading each thread goes: the last and next read, the last error), a discussion
// linked to a post that is there (upsertDiscussion's `bluesky`), unlinked, or posted from the site's
// account (postDiscussionToBluesky), each refusal in words.
import { useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { ApiError, gql } from "../api";
import {
  BlueskyDiscussionDocument,
  BlueskyLinksDocument,
  LinkBlueskyPostDocument,
  PostDiscussionToBlueskyDocument,
  type BlueskyLinkRowFragment,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { FieldError, type Errors } from "../components/fields";
import { httpHref } from "../safe-url";
import { Help } from "./settings-fields";

/** A time as the list shows it: the date and the minute, in the browser's language and zone. */
const at = (iso: string) => (
  <time dateTime={iso}>{new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}</time>
);

/** A text field's value, trimmed. */
export const textIn = (f: FormData, name: string): string => String(f.get(name) ?? "").trim();

type Link = BlueskyLinkRowFragment;

function problemText(err: unknown, id: string): string {
  if (!(err instanceof ApiError)) return messageOf(err);
  switch (err.code) {
    case "bluesky_disabled":
      return "Bluesky is off for this site: tick “Bring in replies from Bluesky” under Account and save, then try again.";
    case "bluesky_account_missing":
      return "The site has no Bluesky account to post from: give its handle and an app password under Account and save, then try again.";
    case "bluesky_unreachable":
      return `Bluesky refused or did not answer, so nothing changed: ${err.message.replace(/\.$/, "")}. Check the account's handle, app password and server, or try again later.`;
    case "not_found":
      return `No discussion has the id “${id}”.`;
  }
  if (err.fields.some((f) => f.path === "url")) return noUrl(id);
  return err.message;
}

const noUrl = (id: string) =>
  `The discussion “${id}” has no page address (url): a Bluesky post shares a page. Give it one through the API first.`;

/** The discussion's id and url, checked before linking (a link needs a discussion with a page): a problem in words, or null. */
async function discussionProblem(id: string): Promise<string | null> {
  try {
    const { discussion } = await gql(BlueskyDiscussionDocument, { id });
    return discussion.url ? null : noUrl(id);
  } catch (err) {
    return problemText(err, id);
  }
}

/** The most links the list shows (blueskyLinks' own limit). */
const MAX_LINKS = 200;

/** The linked posts (newest first), and the forms that link, unlink and post; `enabled`: settings bluesky.enabled. */
export function LinkedPosts({ enabled }: { enabled: boolean | undefined }) {
  const links = useLoad(() => gql(BlueskyLinksDocument, { limit: MAX_LINKS }));
  const unlink = useAction();
  const [told, setTold] = useState<string | null>(null);
  const rows = links.data?.blueskyLinks;
  const failing = rows?.filter((l) => l.lastError).length ?? 0;
  const changed = (text: string) => {
    setTold(text);
    links.reload();
  };
  return (
    <section aria-labelledby="bluesky-links-title">
      <h2 id="bluesky-links-title">Linked posts</h2>
      <ErrorMessage error={links.error} />
      {rows && rows.length === 0 && <p>No discussion is linked to a Bluesky post yet.</p>}
      {rows && rows.length >= MAX_LINKS && <p class="hint">The newest {MAX_LINKS} links are shown.</p>}
      {failing > 0 && (
        <p class="warning">
          The last read of {failing === 1 ? "1 linked post" : `${failing} linked posts`} failed: each is tried again after 1, 2, 4 …
          minutes, at most an hour. Why is under Last error.
        </p>
      )}
      {rows && rows.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Linked posts, scrollable">
          <table class="bluesky-links">
            <thead>
              <tr>
                <th scope="col">Discussion</th>
                <th scope="col">Post</th>
                <th scope="col">Replies</th>
                <th scope="col">Last read</th>
                <th scope="col">Next read</th>
                <th scope="col">Last error</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((l) => (
                <LinkRow
                  key={l.discussionId}
                  l={l}
                  enabled={enabled}
                  busy={unlink.busy}
                  onUnlink={() =>
                    void unlink.run(async () => {
                      setTold(null);
                      try {
                        await gql(LinkBlueskyPostDocument, { id: l.discussionId, post: null });
                      } catch (err) {
                        throw new ApiError(problemText(err, l.discussionId), "refused");
                      }
                      changed(`Unlinked “${l.discussionId}”: its replies are no longer read; the comments brought in stay.`);
                    })
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorMessage error={unlink.error} />
      {told && <Notice>{told}</Notice>}
      <div class="bluesky-actions">
        <LinkForm onLinked={changed} />
        <PostForm onPosted={changed} />
      </div>
    </section>
  );
}

function LinkRow({ l, enabled, busy, onUnlink }: { l: Link; enabled: boolean | undefined; busy: boolean; onUnlink: () => void }) {
  const href = httpHref(l.url);
  return (
    <tr class={l.lastError ? "failing" : undefined}>
      <td>
        <a href={`#/discussions/${encodeURIComponent(l.discussionId)}`}>{l.discussionId}</a>
        {l.lastError && <span class="badge read-failed">read failed</span>}
      </td>
      <td>
        {!l.uri ? (
          <span class="muted">Waiting to be posted</span>
        ) : href ? (
          <a class="post-link" href={href} target="_blank" rel="noopener noreferrer">
            Open on Bluesky<span class="sr-only"> (the post of {l.discussionId})</span>
          </a>
        ) : (
          <code class="raw">{l.uri}</code>
        )}
        <div class="muted">
          {l.posted ? "Posted" : "Linked"} {at(l.createdAt)}
        </div>
      </td>
      <td>{l.replies.toLocaleString("en")}</td>
      <td>{l.polledAt ? at(l.polledAt) : <span class="muted">Not yet</span>}</td>
      <td>{enabled === false ? <span class="muted">Paused: Bluesky is off</span> : at(l.nextPollAt)}</td>
      <td>{l.lastError ? <LastError>{l.lastError}</LastError> : <span class="muted">None</span>}</td>
      <td>
        <button type="button" class="btn-plain" disabled={busy} aria-label={`Unlink ${l.discussionId}`} onClick={onUnlink}>
          Unlink
        </button>
      </td>
    </tr>
  );
}

function LastError({ children }: { children: ComponentChildren }) {
  return (
    <span class="last-error">
      <strong>Failed:</strong> {children}
    </span>
  );
}

/** "Link to a post": a discussion (by id) linked to a post that is there, by its at:// URI or bsky.app URL. */
function LinkForm({ onLinked }: { onLinked: (text: string) => void }) {
  const action = useAction();
  const [errors, setErrors] = useState<Errors>({});
  return (
    <form
      class="panel"
      aria-labelledby="bluesky-link-title"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const f = new FormData(form);
        const id = textIn(f, "discussion");
        const post = textIn(f, "bluesky");
        setErrors({});
        void action.run(async () => {
          const problem = await discussionProblem(id);
          if (problem) throw new ApiError(problem, "refused");
          try {
            const linked = (await gql(LinkBlueskyPostDocument, { id, post })).upsertDiscussion.discussion.bluesky;
            form.reset();
            onLinked(`Linked “${id}” to ${linked?.url ?? linked?.uri ?? "the post"}: its replies come in as comments.`);
          } catch (err) {
            const fields = err instanceof ApiError ? err.fields.filter((x) => x.path === "bluesky") : [];
            if (fields.length) {
              setErrors({ "link.bluesky": fields.map((x) => x.message).join("; ") });
              throw new ApiError("The post was not linked; see the message beside it.", "refused");
            }
            throw new ApiError(problemText(err, id), "refused");
          }
        });
      }}
    >
      <h3 id="bluesky-link-title">Link a discussion to a post</h3>
      <p class="hint">For a page already shared on Bluesky: its replies come in from now on. Linking again replaces the post.</p>
      <div class="field">
        <label>
          Discussion id
          <input name="discussion" required spellcheck={false} autoComplete="off" />
        </label>
      </div>
      <div class="field">
        <label>
          Post
          <input
            name="bluesky"
            required
            spellcheck={false}
            autoComplete="off"
            placeholder="https://bsky.app/profile/…/post/…"
            aria-describedby={["help-link.bluesky", errors["link.bluesky"] ? "err-link.bluesky" : null].filter(Boolean).join(" ")}
            aria-invalid={errors["link.bluesky"] ? "true" : undefined}
          />
        </label>
        <FieldError errors={errors} path="link.bluesky" />
        <Help path="link.bluesky">Its bsky.app address, or its at:// URI.</Help>
      </div>
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Linking…" : "Link discussion"}
        </button>
      </div>
      <ErrorMessage error={action.error} />
    </form>
  );
}

/** "Post to Bluesky": a discussion (by id) posted from the site's account (its title, its page as a card) and linked. */
function PostForm({ onPosted }: { onPosted: (text: string) => void }) {
  const action = useAction();
  return (
    <form
      class="panel"
      aria-labelledby="bluesky-post-title"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const id = textIn(new FormData(form), "discussion");
        void action.run(async () => {
          try {
            const { created, link } = (await gql(PostDiscussionToBlueskyDocument, { id })).postDiscussionToBluesky;
            form.reset();
            onPosted(
              created
                ? `Posted “${id}” to Bluesky${link.url ? ` (${link.url})` : ""}: its replies come in as comments.`
                : `“${id}” was linked to a post already${link.url ? ` (${link.url})` : ""}: nothing was posted.`,
            );
          } catch (err) {
            throw new ApiError(problemText(err, id), "refused");
          }
        });
      }}
    >
      <h3 id="bluesky-post-title">Post a discussion</h3>
      <p class="hint">Posts it from the site's account, its title with its page as a card, and links it.</p>
      <div class="field">
        <label>
          Discussion id
          <input name="discussion" required spellcheck={false} autoComplete="off" />
        </label>
      </div>
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Posting…" : "Post to Bluesky"}
        </button>
      </div>
      <ErrorMessage error={action.error} />
    </form>
  );
}
