// How <engagement-thread> looks: the heading with the count and the sort, the notices (locked,
// archived, pending, reconnecting), the "N new comments" button, the comments nested by reply with
// their reactions and actions, Load more, and a polite live region for what screen readers are told.
// Drawn from the store (embed/src/thread/store.ts) and the reader's forms (embed/src/thread/forms.ts).
// A comment shows the service's sanitized `bodyHtml` when it has one, else its text; its element is
// `#comment-<id>`, marked `part="comment highlighted"` when a permalink opened the thread at it.
import { html, nothing, type TemplateResult } from "lit";
import { repeat } from "lit/directives/repeat.js";
import { serviceHtml } from "./compose.js";
import { composer, deleteConfirm, editForm, reportForm } from "./forms.js";
import type { ThreadView } from "./thread-view.js";
export type { ThreadView } from "./thread-view.js";
import { fill, type StringKey } from "./i18n.js";
import { commentAnchor } from "./address.js";
import { renderPageReactions } from "./page-reactions.js";
import { renderVotes } from "./votes.js";
import type { Comment, Sort } from "./store.js";

export const SORTS: Sort[] = ["newest", "oldest", "top", "best", "score"];
/** The sorts by votes, offered only while the tenant's settings turn votes on. */
const VOTE_SORTS: readonly Sort[] = ["best", "score"];
const EMOJI: Record<string, string> = { like: "👍", love: "❤️", laugh: "😄", wow: "😮", sad: "😢", angry: "😠" };

/** A reply brought in from Bluesky says so, linking to the post it answers there (a new tab). */
const onBluesky = (words: string, url: string | null): TemplateResult =>
  url && /^https:\/\//.test(url)
    ? html`<span class="muted">· <a part="source" href=${url} target="_blank" rel="noopener noreferrer">${words}</a></span>`
    : html`<span class="muted">· ${words}</span>`;

export function renderThread(v: ThreadView): TemplateResult {
  const { t, store } = v;
  const open = store.state === "open";
  const total = store.total;
  return html`<section part="thread" aria-labelledby="heading">
    <header>
      <h2 id="heading">
        ${t.title}
        <span class="muted">${v.status === "ready" ? `(${fill(t[total === 1 ? "count_one" : "count_other"], { n: total })})` : ""}</span>
        ${v.reading > 1 ? html`<span class="muted reading" part="reading">${fill(t[v.reading === 1 ? "reading_one" : "reading_other"], { n: v.reading })}</span>` : nothing}
      </h2>
      <label class="sort"
        >${t.sort_label}
        <select part="sort" @change=${(e: Event) => v.on.changeSort((e.target as HTMLSelectElement).value)}>
          ${SORTS.filter((s) => v.settings.votes !== "off" || !VOTE_SORTS.includes(s) || s === store.sort).map(
            (s) => html`<option value=${s} ?selected=${s === store.sort}>${t[`sort_${s}`]}</option>`,
          )}
        </select></label
      >
      ${v.readerBar}
    </header>
    ${v.inboxList} ${renderPageReactions(v)} ${store.state === "locked" ? html`<p class="notice" part="notice">${t.locked}</p>` : nothing}
    ${store.state === "archived" ? html`<p class="notice" part="notice">${t.archived}</p>` : nothing}
    ${open ? composer(v, "new", null, t.composer_label, t.post, v.composerFolded ? v.on.unfoldComposer : null) : nothing}
    ${v.notice ? html`<p class="notice" part="notice" role="status">${v.notice}</p>` : nothing}
    ${v.live || v.status === "failed" ? nothing : html`<p class="muted" part="status">${t.reconnecting}</p>`}
    ${
      store.incoming.length
        ? html`<button class="new-comments" part="new-comments button" @click=${() => v.on.showIncoming()}>
            ${fill(t[store.incoming.length === 1 ? "new_comments_one" : "new_comments_other"], { n: store.incoming.length })}
          </button>`
        : nothing
    }
    ${renderBody(v)}
    <div class="sr-only" role="status" aria-live="polite">${v.announcement}</div>
  </section>`;
}

function renderBody(v: ThreadView): TemplateResult {
  const { t, store } = v;
  if (v.status === "loading") return html`<p class="muted" role="status">${t.loading}</p>`;
  if (v.status === "failed")
    return html`<p class="error" role="alert">${t.load_failed}</p>
      <button class="secondary" part="button" @click=${() => v.on.retry()}>${t.retry}</button>`;
  const shown = store.top.filter((id) => store.isShown(id));
  return html`${shown.length === 0 ? html`<p class="muted" part="empty">${t.empty}</p>` : nothing}
    ${
      v.openedAtThread
        ? html`<button class="wide" part="from-start button" @click=${() => v.on.fromStart()}>${t.from_start}</button>`
        : nothing
    }
    <ol part="comments">
      ${repeat(
        shown,
        (id) => id,
        (id) => renderComment(v, id),
      )}
    </ol>
    ${
      store.topAfter
        ? html`<button class="wide" part="load-more button" ?disabled=${v.loadingMore} @click=${() => v.on.loadMore()}>
            ${t.load_more}
          </button>`
        : nothing
    }`;
}

function renderComment(v: ThreadView, id: string): TemplateResult | typeof nothing {
  const { t, store, forms: f } = v;
  const c = store.comments.get(id);
  if (!c || !store.isShown(id)) return nothing;
  const own = store.isOwn(id);
  const deleted = c.status === "deleted";
  const children = (store.children.get(id) ?? []).filter((child) => store.isShown(child));
  const missing = store.missingReplies(id);
  const created = new Date(c.createdAt);
  const marked = v.highlighted === id;
  return html`<li>
    <article
      id=${commentAnchor(id)}
      part=${marked ? "comment highlighted" : "comment"}
      class=${marked ? "highlighted" : ""}
      data-comment-id=${id}
      tabindex="-1"
      aria-labelledby=${`author-${id}`}
    >
      <div class="avatar" aria-hidden="true">
        ${deleted ? nothing : c.author.avatarUrl ? html`<img src=${c.author.avatarUrl} alt="" loading="lazy" />` : (c.author.name[0] ?? "?").toUpperCase()}
      </div>
      <div>
        <div class="meta">
          <span class="author" part="author" id=${`author-${id}`}>${deleted ? "—" : c.author.name}</span>
          ${c.author.badge && !deleted ? html`<span class="badge reader-badge" part="badge reader-badge">${c.author.badge}</span>` : nothing}
          ${own && !deleted ? html`<span class="muted">(${t.you})</span>` : nothing}
          <time class="muted" datetime=${c.createdAt} title=${created.toLocaleString(v.locale)}>${relative(created, v.locale)}</time>
          ${c.editedAt && !deleted ? html`<span class="muted">· ${t.edited}</span>` : nothing}
          ${c.kind === "bluesky" && !deleted ? onBluesky(t.on_bluesky, store.blueskyUrl) : nothing}
          ${c.pinned ? html`<span class="badge" part="badge">${t.pinned}</span>` : nothing}
          ${c.status === "pending" ? html`<span class="badge pending" part="badge pending">${t.pending}</span>` : nothing}
        </div>
        ${
          deleted
            ? html`<p class="body tombstone" part="body">${t.deleted}</p>`
            : f.editing === id
              ? editForm(v, c)
              : c.bodyHtml
                ? html`<div class="body rich" part="body">${serviceHtml(c.bodyHtml)}</div>`
                : html`<p class="body" part="body">${c.body}</p>`
        }
        ${deleted ? nothing : renderActions(v, c, own)} ${f.confirmingDelete === id ? deleteConfirm(v, id) : nothing}
        ${f.reporting === id ? reportForm(v, id) : nothing}
        ${f.replyTo === id ? composer(v, `reply:${id}`, id, fill(t.reply_label, { name: c.author.name }), t.post_reply) : nothing}
      </div>
    </article>
    ${
      children.length
        ? html`<ol>
            ${repeat(
              children,
              (child) => child,
              (child) => renderComment(v, child),
            )}
          </ol>`
        : nothing
    }
    ${
      missing > 0
        ? html`<button class="link" part="more-replies button" ?disabled=${v.loadingReplies.has(id)} @click=${() => v.on.loadReplies(id)}>
            ${fill(t[missing === 1 ? "more_replies_one" : "more_replies_other"], { n: missing })}
          </button>`
        : nothing
    }
  </li>`;
}

function renderActions(v: ThreadView, c: Comment, own: boolean): TemplateResult {
  const { t, forms: f, settings } = v;
  const open = v.store.state === "open";
  const kinds = settings.reactionKinds;
  const expanded = f.moreKinds.has(c.id);
  const shownKinds = kinds.filter((k, i) => i === 0 || expanded || (c.reactions[k] ?? 0) > 0);
  const mine = new Set(c.viewerReactions ?? []);
  const editable =
    own &&
    open &&
    c.status !== "deleted" &&
    (settings.editWindowSeconds === 0 || Date.now() - new Date(c.createdAt).getTime() < settings.editWindowSeconds * 1000);
  const error = [`vote:${c.id}`, `react:${c.id}`, `delete:${c.id}`, `report:${c.id}`].map((k) => f.errors.get(k)).find(Boolean);
  const reactionName = (k: string) => (t[`reaction_${k}` as StringKey] as string | undefined) ?? k;
  return html`<div class="actions" part="actions">
      ${settings.votes === "off" ? nothing : renderVotes(v, c, own)}
      <span class="reactions" part="reactions" role="group" aria-label=${t.reactions_label}>
        ${shownKinds.map((k) => {
          const n = c.reactions[k] ?? 0;
          return html`<button
            class="reaction"
            part="reaction button"
            data-kind=${k}
            aria-pressed=${mine.has(k) ? "true" : "false"}
            aria-label=${fill(t.reaction_count, { name: reactionName(k), n })}
            title=${reactionName(k)}
            ?disabled=${!open || f.busy.has(`react:${c.id}`)}
            @click=${() => void f.react(c, k)}
          >
            <span aria-hidden="true">${EMOJI[k] ?? k}${n ? ` ${n}` : ""}</span>
          </button>`;
        })}
        ${
          shownKinds.length < kinds.length
            ? html`<button
                class="reaction"
                part="reaction button"
                aria-label=${t.reactions_label}
                aria-expanded="false"
                @click=${() => f.expandKinds(c.id)}
              >
                <span aria-hidden="true">+</span>
              </button>`
            : nothing
        }
      </span>
      ${
        open && c.status === "approved"
          ? html`<button class="link" part="action button" data-action="reply" data-for=${c.id} @click=${() => f.openReply(c.id)}>
              ${t.reply}
            </button>`
          : nothing
      }
      ${
        editable
          ? html`<button class="link" part="action button" data-action="edit" data-for=${c.id} @click=${() => f.openEdit(c)}>
              ${t.edit}
            </button>`
          : nothing
      }
      <button
        class="link"
        part="action button"
        data-action="link"
        data-for=${c.id}
        aria-label=${t.copy_link}
        title=${t.copy_link}
        @click=${() => v.on.copyLink(c.id)}
      >
        ${t.link}
      </button>
      ${
        own
          ? html`<button class="link" part="action button" data-action="delete" data-for=${c.id} @click=${() => f.openDelete(c.id)}>
              ${t.delete}
            </button>`
          : html`<button
              class="link"
              part="action button"
              data-action="report"
              data-for=${c.id}
              ?disabled=${f.reported.has(c.id)}
              @click=${() => f.openReport(c.id)}
            >
              ${f.reported.has(c.id) ? t.reported : t.report}
            </button>`
      }
    </div>
    ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}`;
}

/** "3 minutes ago", "yesterday": the time of a comment in the reader's language. */
function relative(when: Date, locale: string): string {
  const seconds = (when.getTime() - Date.now()) / 1000;
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ["year", 31_536_000],
    ["month", 2_592_000],
    ["day", 86_400],
    ["hour", 3_600],
    ["minute", 60],
  ];
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  return format.format(0, "minute");
}
