// Bluesky (#/bluesky, owners; contract section 30, docs/bluesky.md): a discussion linked to a Bluesky
// post, its replies brought in as comments. Account: the `bluesky` settings in one form as the
// settings screens have them (settings-fields.tsx: only what changed is saved, each problem beside its
// field); the app password is write-only: the field is always empty, its help says when one is stored,
// typed it replaces it. Linked posts: GraphQL blueskyLinks (how reading each thread goes: the last and
// next read, the last error), a discussion linked to a post that is there (upsertDiscussion's
// `bluesky`), unlinked, or posted from the site's account (postDiscussionToBluesky), each refusal in
// words. Moderation: how replies are moderated (remoteModeration) and the way to the queue.
import { useMemo, useRef, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { ApiError, gql } from "../api";
import {
  BlueskyDiscussionDocument,
  BlueskyLinksDocument,
  LinkBlueskyPostDocument,
  PostDiscussionToBlueskyDocument,
  type AllSettingsFragment,
  type BlueskyLinkRowFragment,
  type SettingsPatch,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { FieldError, type Errors } from "../components/fields";
import { httpHref } from "../safe-url";
import { Field, Help, describedBy, optionsOf, secretHelp, textOf, useSettingsForm } from "./settings-fields";

/** The settings' defaults for the two servers: an empty field stands for them. */
const DEFAULT_SERVICE = "https://bsky.social";
const DEFAULT_APP_VIEW = "https://public.api.bsky.app";

/** A time as the list shows it: the date and the minute, in the browser's language and zone. */
const at = (iso: string) => (
  <time dateTime={iso}>{new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}</time>
);

/** A text field's value, trimmed. */
const textIn = (f: FormData, name: string): string => String(f.get(name) ?? "").trim();

type Link = BlueskyLinkRowFragment;

export function BlueskyScreen() {
  const { settings, s, errors, save, saveBar } = useSettingsForm();
  // the form is drawn anew from each answer of the settings (a save's included): the password field is then empty again
  const drawn = useRef(0);
  const formKey = useMemo(() => ++drawn.current, [s]);

  const submit = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const appPassword = String(f.get("bluesky.appPassword") ?? "");
    const edited: SettingsPatch = {
      bluesky: {
        enabled: f.get("bluesky.enabled") === "on",
        handle: textIn(f, "bluesky.handle").replace(/^@/, "") || null,
        ...(appPassword ? { appPassword } : {}),
        service: textIn(f, "bluesky.service") || DEFAULT_SERVICE,
        appView: textIn(f, "bluesky.appView") || DEFAULT_APP_VIEW,
        remoteModeration: String(f.get("bluesky.remoteModeration")),
        autoPost: f.get("bluesky.autoPost") === "on",
      },
    };
    save(current, edited);
  };

  const b = s?.bluesky;
  return (
    <section class="bluesky" aria-labelledby="bluesky-title">
      <h1 id="bluesky-title">Bluesky</h1>
      <p class="hint">
        A discussion linked to a Bluesky post gets that post's replies as comments: posted from the site's account, or linked to a post that
        is already there. Replies are read every minute or so while a discussion is active, less often as it ages.
      </p>
      <ErrorMessage error={settings.error} />
      {b && (
        <dl class="summary facts" aria-label="The site on Bluesky">
          <dt>State</dt>
          <dd>{b.enabled ? "On: replies of linked posts are read" : "Off: nothing is read, linked or posted"}</dd>
          <dt>Account</dt>
          <dd>
            {b.handle
              ? `@${b.handle}${b.appPasswordSet ? "" : " (no app password yet: it cannot post)"}`
              : "None: posts that are already there can still be linked"}
          </dd>
        </dl>
      )}

      <section aria-labelledby="bluesky-account-title">
        <h2 id="bluesky-account-title">Account</h2>
        {s && b && (
          <form
            class="settings"
            key={formKey}
            onSubmit={(e) => {
              e.preventDefault();
              submit(e.currentTarget, s);
            }}
          >
            <fieldset>
              <legend>The site's account</legend>
              <div class="field">
                <label class="check">
                  <input
                    type="checkbox"
                    name="bluesky.enabled"
                    defaultChecked={b.enabled}
                    aria-describedby={describedBy(errors, "bluesky.enabled")}
                  />
                  {textOf("bluesky.enabled").label}
                </label>
                <FieldError errors={errors} path="bluesky.enabled" />
              </div>
              <Field
                label={textOf("bluesky.handle").label}
                path="bluesky.handle"
                value={b.handle ?? ""}
                errors={errors}
                help={textOf("bluesky.handle").help}
                type="text"
              />
              <div class="field">
                <label>
                  {textOf("bluesky.appPassword").label}
                  <input
                    name="bluesky.appPassword"
                    type="password"
                    autoComplete="new-password"
                    spellcheck={false}
                    placeholder={b.appPasswordSet ? "stored" : "xxxx-xxxx-xxxx-xxxx"}
                    aria-describedby={describedBy(errors, "bluesky.appPassword", true)}
                    aria-invalid={errors["bluesky.appPassword"] ? "true" : undefined}
                  />
                </label>
                <FieldError errors={errors} path="bluesky.appPassword" />
                <Help path="bluesky.appPassword">{secretHelp("bluesky.appPassword", b.appPasswordSet)}</Help>
              </div>
              <Field
                label={textOf("bluesky.service").label}
                path="bluesky.service"
                value={b.service}
                errors={errors}
                help={textOf("bluesky.service").help}
                type="url"
              />
            </fieldset>
            <fieldset>
              <legend>Replies and posts</legend>
              <div class="field">
                <label>
                  {textOf("bluesky.remoteModeration").label}
                  <select name="bluesky.remoteModeration" aria-describedby={describedBy(errors, "bluesky.remoteModeration")}>
                    {optionsOf("bluesky.remoteModeration").map(([value, o]) => (
                      <option key={value} value={value} selected={b.remoteModeration === value}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                </label>
                <FieldError errors={errors} path="bluesky.remoteModeration" />
              </div>
              <Field
                label={textOf("bluesky.appView").label}
                path="bluesky.appView"
                value={b.appView}
                errors={errors}
                help={textOf("bluesky.appView").help}
                type="url"
              />
              <div class="field">
                <label class="check">
                  <input
                    type="checkbox"
                    name="bluesky.autoPost"
                    defaultChecked={b.autoPost}
                    aria-describedby={describedBy(errors, "bluesky.autoPost", true)}
                    aria-invalid={errors["bluesky.autoPost"] ? "true" : undefined}
                  />
                  {textOf("bluesky.autoPost").label}
                </label>
                <FieldError errors={errors} path="bluesky.autoPost" />
                <Help path="bluesky.autoPost">{textOf("bluesky.autoPost").help}</Help>
              </div>
            </fieldset>
            {saveBar}
          </form>
        )}
      </section>

      <LinkedPosts enabled={b?.enabled} />

      <section aria-labelledby="bluesky-moderation-title">
        <h2 id="bluesky-moderation-title">Moderation</h2>
        {b && <p>{moderationText(b.remoteModeration)}</p>}
        <p>
          A reply deleted on Bluesky is deleted here. A reply rejected or deleted here stays so: nothing is written to Bluesky but the
          site's own posts. Each reply's author is a reader whose id starts with <code>at:</code>.
        </p>
        <p>
          <a href="#/moderation">Open the moderation queue (pending comments)</a>
        </p>
      </section>
    </section>
  );
}

/** How replies are moderated, per settings bluesky.remoteModeration. */
function moderationText(mode: string): string {
  const rules = "The site's safety rules (banned words, link limits, the moderation hook, Akismet, bans) apply to them as to any comment.";
  return mode === "post"
    ? `Replies from Bluesky are published at once, as local comments are. ${rules}`
    : `Each reply from Bluesky is held as pending until a moderator approves it: it waits in the moderation queue with the other pending comments. ${rules}`;
}

/** A refusal of linking, unlinking or posting the discussion `id`, in words. */
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
function LinkedPosts({ enabled }: { enabled: boolean | undefined }) {
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
