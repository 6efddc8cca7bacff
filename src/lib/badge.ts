// A reader's badge (contract section 21): a short label shown by their name, from the identity
// assertion's `badge` claim or set by a moderator. One rule for both: trimmed, at most 20 characters,
// on one line (no control characters); empty after trimming means none.
import { isSingleLine, SINGLE_LINE_RULE } from "./single-line.js";

export const BADGE_MAX = 20;

/** The badge `v` stands for (null: none), or the rule it breaks. */
export function parseBadge(v: unknown): { badge: string | null } | { problem: string } {
  if (v === null || v === undefined) return { badge: null };
  if (typeof v !== "string") return { problem: "must be a string or null" };
  const badge = v.trim();
  if (!isSingleLine(badge)) return { problem: SINGLE_LINE_RULE };
  if ([...badge].length > BADGE_MAX) return { problem: `must be at most ${BADGE_MAX} characters` };
  return { badge: badge || null };
}
