// The look of what <engagement-thread> adds to its forms and comments beside embed/src/thread/styles.ts
// (same custom properties): the Write/Preview tabs and the formatting help, rendered bodies (the
// service's sanitized HTML: paragraphs, quotes, code, lists, links) and the comment a permalink opened
// the thread at (`--engagement-highlight-background`, `::part(highlighted)`).
import { css } from "lit";

export const richStyles = css`
  .compose-head {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-end;
    justify-content: space-between;
    gap: 4px;
  }
  .tabs {
    display: flex;
    gap: 2px;
  }
  [role="tab"] {
    border: 1px solid transparent;
    border-bottom: none;
    border-radius: 6px 6px 0 0;
    padding: 4px 12px;
    color: var(--_muted);
  }
  [role="tab"][aria-selected="true"] {
    border-color: var(--_border);
    background: var(--_surface);
    color: var(--_fg);
    font-weight: 600;
  }
  [hidden] {
    display: none !important;
  }
  .preview {
    min-height: 4.5em;
    padding: 8px 10px;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_surface);
  }
  .preview:focus-visible,
  article:focus-visible {
    outline: 2px solid var(--_accent);
    outline-offset: 2px;
  }
  .preview > .muted {
    margin: 0;
  }
  .help {
    list-style: none;
    margin: 6px 0 0;
    padding: 8px 10px;
    border: 1px dashed var(--_border);
    border-radius: var(--_radius);
    font-size: 0.88em;
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(15em, 1fr));
    gap: 2px 12px;
  }
  .help .quote {
    border-left: 3px solid var(--_border);
    padding-left: 6px;
  }
  .help .as-link {
    color: var(--_accent);
    text-decoration: underline;
  }
  .rich {
    white-space: normal;
  }
  .rich > :first-child {
    margin-top: 0;
  }
  .rich > :last-child {
    margin-bottom: 0;
  }
  .rich p,
  .rich ul,
  .rich ol,
  .rich pre,
  .rich blockquote {
    margin: 0 0 0.6em;
  }
  .rich ul,
  .rich ol {
    padding-left: 1.4em;
    border: none;
  }
  .rich ul {
    list-style: disc;
  }
  .rich ol {
    list-style: decimal;
    margin-left: 0;
  }
  .rich blockquote {
    padding-left: 10px;
    border-left: 3px solid var(--_border);
    color: var(--_muted);
  }
  code {
    font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    font-size: 0.9em;
    background: var(--_surface);
    border-radius: 4px;
    padding: 0 3px;
  }
  .rich pre {
    overflow-x: auto;
    padding: 8px 10px;
    background: var(--_surface);
    border-radius: 6px;
  }
  .rich pre code {
    padding: 0;
  }
  .rich a {
    color: var(--_accent);
  }
  .rich img {
    max-width: 100%;
  }
  article.highlighted {
    background: var(--engagement-highlight-background, color-mix(in srgb, var(--_accent) 12%, transparent));
    box-shadow: inset 3px 0 0 var(--_accent);
    border-radius: 0 var(--_radius) var(--_radius) 0;
    padding-left: 8px;
    padding-right: 8px;
  }
`;
