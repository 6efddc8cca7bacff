// How the signed-in reader's bar of <engagement-thread> looks (contract section 19): the Follow toggle
// (a pressed button while the reader follows the discussion) and the bell, named with the unread
// count, whose list shows the reader's latest inbox items, each linking to its comment (in this
// thread: its `#comment-<id>`; elsewhere: that discussion's address when the item has one). State and
// requests: embed/src/thread/inbox.ts.
import { css, html, nothing, svg, type TemplateResult } from "lit";
import { commentAddress, commentAnchor } from "./address.js";
import { fill, type Strings } from "./i18n.js";
import type { InboxItem } from "./api.js";
import type { ReaderInbox } from "./inbox.js";

const BELL = svg`<path d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z"/>`;

export interface ReaderBarView {
  t: Strings;
  inbox: ReaderInbox;
  /** the discussion the element shows */
  discussionId: string | null;
}

export function renderReaderBar({ t, inbox, discussionId }: ReaderBarView): TemplateResult | typeof nothing {
  if (!inbox.active) return nothing;
  const n = inbox.unreadCount;
  const following = inbox.follow === "all";
  return html`<div class="reader-bar" part="reader-bar">
    ${
      discussionId
        ? html`<button
            class="secondary follow"
            part="follow button"
            aria-pressed=${following ? "true" : "false"}
            @click=${() => void inbox.toggleFollow()}
          >
            ${following ? html`<span aria-hidden="true">✓ </span>` : nothing}${t.follow}
          </button>`
        : nothing
    }
    <button
      class="secondary bell"
      part="bell button"
      aria-expanded=${inbox.open ? "true" : "false"}
      aria-controls="inbox"
      aria-label=${n === 0 ? t.bell : fill(t[n === 1 ? "bell_unread_one" : "bell_unread_other"], { n })}
      @click=${() => void inbox.toggleList()}
    >
      <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">${BELL}</svg>
      ${n > 0 ? html`<span class="badge" part="badge" aria-hidden="true">${n > 99 ? "99+" : n}</span>` : nothing}
    </button>
  </div>`;
}

/** The bell's list, below the heading, while it is open. */
export function renderInboxList({ t, inbox, discussionId }: ReaderBarView): TemplateResult | typeof nothing {
  if (!inbox.active || !inbox.open) return nothing;
  return html`<section id="inbox" class="inbox" part="inbox" aria-labelledby="inbox-heading">
    <h3 id="inbox-heading">${t.inbox_title}</h3>
    ${
      inbox.items.length === 0
        ? html`<p class="muted">${t.inbox_empty}</p>`
        : html`<ul>
            ${inbox.items.map((item) => renderItem(t, item, discussionId))}
          </ul>`
    }
    ${inbox.unreadCount > 0 ? html`<button class="secondary" part="button" @click=${() => void inbox.markAllRead()}>${t.inbox_mark_all}</button>` : nothing}
  </section>`;
}

function renderItem(t: Strings, item: InboxItem, discussionId: string | null): TemplateResult {
  const name = item.comment.author?.name ?? "";
  const what =
    item.type === "reply"
      ? fill(t.inbox_reply, { name })
      : item.discussionTitle
        ? fill(t.inbox_new_comment_in, { name, title: item.discussionTitle })
        : fill(t.inbox_new_comment, { name });
  const excerpt = item.comment.body.length > 140 ? `${item.comment.body.slice(0, 139)}…` : item.comment.body;
  const href =
    item.discussionId === discussionId
      ? `#${commentAnchor(encodeURIComponent(item.comment.id))}`
      : item.discussionUrl
        ? commentAddress(item.discussionUrl, null, item.comment.id)
        : null;
  return html`<li class=${item.readAt === null ? "unread" : ""} part="inbox-item">
    ${href ? html`<a href=${href}>${what}</a>` : html`<span>${what}</span>`}
    <span class="muted excerpt">${excerpt}</span>
  </li>`;
}

export const bellStyles = css`
  .reader-bar {
    display: flex;
    gap: 0.5rem;
    align-items: center;
  }
  .bell {
    position: relative;
    display: inline-flex;
    align-items: center;
    padding: 0.3rem 0.5rem;
  }
  .bell svg {
    fill: currentColor;
  }
  .badge {
    margin-inline-start: 0.25rem;
    min-width: 1.2em;
    padding: 0 0.3em;
    border-radius: 999px;
    background: var(--_accent);
    color: var(--_accent-fg);
    font-size: 0.75rem;
    line-height: 1.4;
    text-align: center;
  }
  .follow[aria-pressed="true"] {
    border-color: var(--_accent);
    color: var(--_accent);
  }
  .inbox {
    border: 1px solid var(--_border);
    border-radius: 8px;
    padding: 0.5rem 0.75rem;
    margin-block: 0.5rem;
  }
  .inbox h3 {
    font-size: 1rem;
    margin: 0 0 0.5rem;
  }
  .inbox ul {
    list-style: none;
    margin: 0 0 0.5rem;
    padding: 0;
  }
  .inbox li {
    display: flex;
    flex-direction: column;
    padding: 0.35rem 0;
    border-top: 1px solid var(--_border);
  }
  .inbox li:first-child {
    border-top: 0;
  }
  .inbox li.unread > :first-child {
    font-weight: 600;
  }
  .excerpt {
    overflow-wrap: anywhere;
  }
`;
