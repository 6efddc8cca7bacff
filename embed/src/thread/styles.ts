// The look of <engagement-thread>: one constructable stylesheet (lit adopts it into the shadow root,
// so a page whose CSP forbids inline styles still styles it). Hosts theme it with CSS custom
// properties (--engagement-*) and ::part(); light and dark follow `prefers-color-scheme` unless the
// `theme` attribute says "light" or "dark".
// A server-rendered thread (`:state(in-page)`, thread/in-page.ts: it is in the page's text) takes the
// page's font, as its HTML had before the upgrade, and spaces its comments by the line height and its
// paragraphs by 1em, as that HTML's were; a folded composer (`form.folded`) shows its text field alone,
// one line high, until the reader moves into it. (No comments inside css``: they would ship in thread.js.)
import { css } from "lit";

/** the dark palette: for theme="dark", and for a dark system unless theme="light" */
const dark = css`
  --_bg: var(--engagement-background, #15191f);
  --_fg: var(--engagement-color, #e6e9ee);
  --_muted: var(--engagement-muted-color, #a3acb9);
  --_border: var(--engagement-border-color, #39414d);
  --_surface: var(--engagement-surface, #1f252d);
  --_accent: var(--engagement-accent, #8ab4ff);
  --_accent-fg: var(--engagement-accent-color, #0b1220);
  --_danger: var(--engagement-danger, #ffb4ab);
  --_notice: var(--engagement-notice-background, #3a3217);
  color-scheme: dark;
`;

export const threadStyles = css`
  :host {
    --_bg: var(--engagement-background, #ffffff);
    --_fg: var(--engagement-color, #1d2430);
    --_muted: var(--engagement-muted-color, #5b6472);
    --_border: var(--engagement-border-color, #d8dde5);
    --_surface: var(--engagement-surface, #f5f7fa);
    --_accent: var(--engagement-accent, #2457c5);
    --_accent-fg: var(--engagement-accent-color, #ffffff);
    --_danger: var(--engagement-danger, #b3261e);
    --_notice: var(--engagement-notice-background, #fff6d6);
    --_radius: var(--engagement-radius, 8px);
    display: block;
    color: var(--_fg);
    background: var(--_bg);
    font: var(--engagement-font, 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
    color-scheme: light;
  }
  :host([hidden]) {
    display: none;
  }
  :host(:state(in-page)) {
    font: var(--engagement-font);
  }
  :host(:state(in-page)) article {
    padding-top: 0.5lh;
    padding-bottom: 0.5lh;
  }
  :host(:state(in-page)) .rich > :not(:last-child) {
    margin-bottom: 1em;
  }
  :host([theme="dark"]) {
    ${dark}
  }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme="light"])) {
      ${dark}
    }
  }
  * {
    box-sizing: border-box;
  }
  section {
    padding: 4px 0;
  }
  header {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: 8px;
    margin-bottom: 12px;
  }
  h2 {
    margin: 0;
    font-size: 1.15em;
  }
  label.sort {
    display: flex;
    align-items: center;
    gap: 6px;
    color: var(--_muted);
    font-size: 0.9em;
  }
  select,
  textarea,
  button {
    font: inherit;
    color: inherit;
  }
  select {
    background: var(--_bg);
    border: 1px solid var(--_border);
    border-radius: 6px;
    padding: 4px 6px;
  }
  textarea {
    display: block;
    width: 100%;
    min-height: 4.5em;
    resize: vertical;
    padding: 8px 10px;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_bg);
  }
  textarea:focus-visible,
  button:focus-visible,
  select:focus-visible {
    outline: 2px solid var(--_accent);
    outline-offset: 2px;
  }
  form {
    margin: 0 0 12px;
  }
  form.folded .compose-head,
  form.folded .form-row {
    display: none;
  }
  form.folded textarea {
    min-height: 0;
    resize: none;
  }
  .form-row {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: flex-end;
    gap: 8px;
    margin-top: 6px;
  }
  .hint {
    margin-right: auto;
    color: var(--_muted);
    font-size: 0.85em;
  }
  button {
    cursor: pointer;
    border-radius: 6px;
    border: 1px solid transparent;
    background: none;
    padding: 4px 8px;
  }
  button[disabled] {
    cursor: default;
    opacity: 0.6;
  }
  button.primary {
    background: var(--_accent);
    color: var(--_accent-fg);
    padding: 6px 14px;
    font-weight: 600;
  }
  button.secondary {
    border-color: var(--_border);
    background: var(--_bg);
  }
  button.link {
    color: var(--_muted);
    font-size: 0.88em;
    padding: 2px 6px;
  }
  button.link:hover {
    color: var(--_fg);
    background: var(--_surface);
  }
  button.wide {
    display: block;
    width: 100%;
    margin: 8px 0;
    border-color: var(--_border);
    background: var(--_surface);
    padding: 8px;
  }
  .new-comments {
    display: block;
    margin: 0 auto 12px;
    background: var(--_accent);
    color: var(--_accent-fg);
    border-radius: 999px;
    padding: 6px 16px;
    font-weight: 600;
  }
  .notice {
    padding: 8px 12px;
    border-radius: var(--_radius);
    background: var(--_notice);
    margin: 0 0 12px;
  }
  .error {
    color: var(--_danger);
    margin: 6px 0 0;
    font-size: 0.92em;
  }
  .muted {
    color: var(--_muted);
  }
  .reading {
    margin-inline-start: 0.5em;
    font-size: 0.75em;
    font-weight: normal;
  }
  ol {
    list-style: none;
    margin: 0;
    padding: 0;
  }
  ol ol {
    margin-left: 14px;
    padding-left: 12px;
    border-left: 2px solid var(--_border);
  }
  li {
    margin: 0;
  }
  article {
    display: grid;
    grid-template-columns: 36px 1fr;
    gap: 0 10px;
    padding: 10px 0;
  }
  .avatar {
    width: 36px;
    height: 36px;
    border-radius: 50%;
    background: var(--_surface);
    border: 1px solid var(--_border);
    display: flex;
    align-items: center;
    justify-content: center;
    font-weight: 600;
    color: var(--_muted);
    overflow: hidden;
  }
  .avatar img {
    width: 100%;
    height: 100%;
    object-fit: cover;
  }
  .meta {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 4px 8px;
    font-size: 0.9em;
  }
  .author {
    font-weight: 600;
  }
  .badge {
    font-size: 0.78em;
    border-radius: 999px;
    padding: 0 8px;
    border: 1px solid var(--_border);
    color: var(--_muted);
  }
  .badge.reader-badge {
    background: var(--_accent);
    border-color: var(--_accent);
    color: var(--_accent-fg);
    font-weight: 600;
  }
  .badge.pending {
    background: var(--_notice);
    color: var(--_fg);
  }
  .body {
    margin: 2px 0 4px;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .tombstone {
    font-style: italic;
    color: var(--_muted);
  }
  .actions {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 2px 4px;
    margin-left: -6px;
  }
  .reactions {
    display: inline-flex;
    flex-wrap: wrap;
    gap: 4px;
    margin-right: 6px;
  }
  .reaction {
    border: 1px solid var(--_border);
    border-radius: 999px;
    padding: 0 8px;
    font-size: 0.9em;
    line-height: 1.7;
  }
  .reaction[aria-pressed="true"] {
    border-color: var(--_accent);
    background: var(--_surface);
    color: var(--_accent);
    font-weight: 600;
  }
  fieldset {
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    margin: 6px 0;
    padding: 8px 10px;
  }
  legend {
    font-size: 0.9em;
    padding: 0 4px;
  }
  fieldset label {
    display: block;
    margin: 2px 0;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
`;
