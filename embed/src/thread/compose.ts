// The Write/Preview tabs and the formatting help around a form's text field (embed/src/thread/forms.ts),
// drawn from the previews' state (embed/src/thread/preview.ts). The tabs follow the ARIA tabs pattern:
// a tablist of two tabs named "Write" and "Preview" (arrow keys, Home and End move between them), each
// controlling a tabpanel it names; the help is a disclosure button, "Formatting help", controlling a
// list of Markdown's most used forms. A preview is the service's sanitized HTML (contract section 18),
// shown as a comment's `bodyHtml` is.
import { html, nothing, type TemplateResult } from "lit";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import type { Strings } from "./i18n.js";

export type Tab = "write" | "preview";

/** A form's preview: the body it is of, and its HTML or the refusal. */
export interface Rendered {
  body: string;
  html?: string;
  error?: string;
}

/** What the tabs show and do (the element's Previews, embed/src/thread/preview.ts). */
export interface PreviewState {
  readonly rendered: ReadonlyMap<string, Rendered>;
  readonly loading: ReadonlySet<string>;
  readonly helpOpen: ReadonlySet<string>;
  tab(formKey: string): Tab;
  show(formKey: string, tab: Tab, draft: string): Promise<void>;
  toggleHelp(formKey: string): void;
}

const TABS: Tab[] = ["write", "preview"];

/** Markdown's forms, each with the word it shows in (the reader's language). */
const HELP: [(word: string) => string, (word: string) => TemplateResult, keyof Strings][] = [
  [(w) => `**${w}**`, (w) => html`<strong>${w}</strong>`, "help_bold"],
  [(w) => `_${w}_`, (w) => html`<em>${w}</em>`, "help_italic"],
  [(w) => `~~${w}~~`, (w) => html`<s>${w}</s>`, "help_strike"],
  [(w) => `\`${w}\``, (w) => html`<code>${w}</code>`, "help_code"],
  [(w) => `> ${w}`, (w) => html`<span class="quote">${w}</span>`, "help_quote"],
  [(w) => `- ${w}`, (w) => html`• ${w}`, "help_list"],
  [(w) => `[${w}](https://example.com)`, (w) => html`<span class="as-link">${w}</span>`, "help_link"],
];

/** Sanitized HTML from the service (a preview or a comment's `bodyHtml`): the one place it is put into the page. */
export const serviceHtml = (bodyHtml: string) => unsafeHTML(bodyHtml);

/** The refusal of the form's preview, shown where a post's refusal is (while the Preview tab is open). */
export function previewError(p: PreviewState, formKey: string, draft: string): string | undefined {
  const r = p.rendered.get(formKey);
  return p.tab(formKey) === "preview" && r?.body === draft.trim() ? r.error : undefined;
}

/**
 * The tabs, their panels (Write holds `field`, the label and text field) and the help. `draftOf` reads
 * the draft when a tab is chosen (typing does not draw the form again, so the text drawn may be older).
 */
export function writeOrPreview(t: Strings, p: PreviewState, formKey: string, draftOf: () => string, field: TemplateResult): TemplateResult {
  const selected = p.tab(formKey);
  const id = (what: string, tab: Tab) => `${what}-${tab}-${formKey}`;
  const move = (e: KeyboardEvent) => {
    const at = TABS.indexOf(selected);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: TABS.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = TABS[(to + TABS.length) % TABS.length]!;
    void p.show(formKey, next, draftOf());
    (e.currentTarget as HTMLElement).querySelector<HTMLElement>(`[data-tab="${next}"]`)?.focus();
  };
  const helpId = `help-${formKey}`;
  const helpOpen = p.helpOpen.has(formKey);
  return html`<div class="compose-head">
      <div role="tablist" class="tabs" part="tabs" @keydown=${move}>
        ${TABS.map(
          (tab) =>
            html`<button
              type="button"
              role="tab"
              part="tab"
              data-tab=${tab}
              id=${id("tab", tab)}
              aria-selected=${tab === selected ? "true" : "false"}
              aria-controls=${id("panel", tab)}
              tabindex=${tab === selected ? "0" : "-1"}
              @click=${() => void p.show(formKey, tab, draftOf())}
            >
              ${tab === "write" ? t.tab_write : t.tab_preview}
            </button>`,
        )}
      </div>
      <button
        type="button"
        class="link"
        part="help-toggle button"
        aria-expanded=${helpOpen ? "true" : "false"}
        aria-controls=${helpId}
        @click=${() => p.toggleHelp(formKey)}
      >
        ${t.formatting_help}
      </button>
    </div>
    <div role="tabpanel" id=${id("panel", "write")} aria-labelledby=${id("tab", "write")} ?hidden=${selected !== "write"}>${field}</div>
    <div
      role="tabpanel"
      class="preview"
      part="preview"
      id=${id("panel", "preview")}
      aria-labelledby=${id("tab", "preview")}
      tabindex="0"
      ?hidden=${selected !== "preview"}
    >
      ${selected === "preview" ? previewContent(t, p, formKey, draftOf()) : nothing}
    </div>
    <ul class="help" part="help" id=${helpId} ?hidden=${!helpOpen}>
      ${HELP.map(([source, shown, key]) => html`<li><code>${source(t[key])}</code> <span aria-hidden="true">→</span> ${shown(t[key])}</li>`)}
    </ul>`;
}

function previewContent(t: Strings, p: PreviewState, formKey: string, draft: string): TemplateResult {
  const r = p.rendered.get(formKey);
  if (!draft.trim()) return html`<p class="muted">${t.preview_empty}</p>`;
  if (p.loading.has(formKey) || r?.body !== draft.trim()) return html`<p class="muted" role="status">${t.preview_loading}</p>`;
  return r.html === undefined ? html`` : html`<div class="body rich">${serviceHtml(r.html)}</div>`;
}
