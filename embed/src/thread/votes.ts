// The vote buttons of <engagement-thread> (contract section 18): a comment's score with ▲ (and ▼
// under settings votes "updown"), shown while the tenant's settings turn votes on.
import { html, nothing, type TemplateResult } from "lit";
import { fill } from "./i18n.js";
import type { Comment } from "./store.js";
import type { ThreadView } from "./thread-view.js";

/**
 * The comment's score with its vote buttons (▲, and ▼ under settings votes "updown"): pressed when it
 * is the reader's vote, pressed again to take it back. A reader's own comment shows its score alone.
 */
export function renderVotes(v: ThreadView, c: Comment, own: boolean): TemplateResult {
  const { t, forms: f, settings } = v;
  const disabled = v.store.state !== "open" || f.busy.has(`vote:${c.id}`);
  const button = (value: 1 | -1, label: string, arrow: string) =>
    html`<button
      class="vote"
      part="vote button"
      data-vote=${value === 1 ? "up" : "down"}
      aria-pressed=${c.myVote === value ? "true" : "false"}
      aria-label=${label}
      title=${label}
      ?disabled=${disabled}
      @click=${() => void f.vote(c, value)}
    >
      <span aria-hidden="true">${arrow}</span>
    </button>`;
  return html`<span class="votes" part="votes" role="group" aria-label=${t.votes_label}>
    ${own ? nothing : button(1, t.upvote, "▲")}
    <span class="score" part="score" title=${fill(t.score_detail, { up: c.upvotes, down: c.downvotes })}
      ><span class="sr-only">${t.score_label} </span>${c.score}</span
    >
    ${own || settings.votes !== "updown" ? nothing : button(-1, t.downvote, "▼")}
  </span>`;
}
