// The page reactions bar of <engagement-thread> (contract section 18): one button per kind of the
// tenant's pageReactionKinds, above the comments, each with the count, its accessible name ("Like: 3")
// and whether the reader's own reaction is on (aria-pressed). Nothing when no kinds are set.
import { html, nothing, type TemplateResult } from "lit";
import { fill, type StringKey } from "./i18n.js";
import type { ThreadView } from "./thread-view.js";
import { PAGE_REACTION } from "./writes.js";

/** Emoji for the usual kinds; any other kind is shown by its name. */
const EMOJI: Record<string, string> = {
  like: "👍",
  up: "👍",
  down: "👎",
  love: "❤️",
  heart: "❤️",
  laugh: "😄",
  wow: "😮",
  sad: "😢",
  angry: "😠",
  clap: "👏",
  party: "🎉",
  fire: "🔥",
  think: "🤔",
};

export function renderPageReactions(v: ThreadView): TemplateResult | typeof nothing {
  const { t, store, settings, forms } = v;
  const kinds = settings.pageReactionKinds;
  if (!kinds.length || v.status !== "ready") return nothing;
  const open = store.state === "open";
  const mine = new Set(store.myPageReactions);
  const busy = forms.busy.has(PAGE_REACTION);
  const error = forms.errors.get(PAGE_REACTION);
  const name = (k: string) => (t[`reaction_${k}` as StringKey] as string | undefined) ?? k;
  return html`<div class="page-reactions" part="page-reactions" role="group" aria-label=${t.page_reactions_label}>
      ${kinds.map((k) => {
        const n = store.pageReactions[k] ?? 0;
        const emoji = EMOJI[k];
        return html`<button
          class="reaction"
          part="page-reaction button"
          data-kind=${k}
          aria-pressed=${mine.has(k) ? "true" : "false"}
          aria-label=${fill(t.reaction_count, { name: name(k), n })}
          title=${name(k)}
          ?disabled=${!open || busy}
          @click=${() => void forms.reactPage(k)}
        >
          <span aria-hidden="true">${emoji ?? name(k)} ${n}</span>
        </button>`;
      })}
    </div>
    ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}`;
}
