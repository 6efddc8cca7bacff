// The look of the page reactions bar (embed/src/thread/page-reactions.ts) and the vote buttons
// (embed/src/thread/votes.ts) of <engagement-thread>, beside embed/src/thread/styles.ts (same custom
// properties; a pressed reaction's look is the comment reactions' own, there).
import { css } from "lit";

export const tallyStyles = css`
  .page-reactions {
    display: flex;
    flex-wrap: wrap;
    gap: 6px;
    margin: 0 0 12px;
  }
  .page-reactions .reaction {
    font-size: 1em;
    padding: 2px 12px;
  }
  .votes {
    display: inline-flex;
    align-items: center;
    gap: 2px;
    margin-right: 8px;
  }
  .vote {
    border: 1px solid transparent;
    border-radius: 999px;
    padding: 0 6px;
    font-size: 0.8em;
    line-height: 2;
    color: var(--_muted);
  }
  .vote[aria-pressed="true"] {
    border-color: var(--_accent);
    color: var(--_accent);
  }
  .score {
    min-width: 1.5em;
    text-align: center;
    font-weight: 600;
    font-variant-numeric: tabular-nums;
  }
`;
