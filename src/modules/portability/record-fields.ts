// Reading the fields of a JSON record of another system (remark42, Commento, GitHub) without
// trusting its shape: each helper answers the field when it is what it should be, else null.
export type Fields = Record<string, unknown>;

export const asObject = (v: unknown): Fields | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Fields) : null);

export const textOf = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** a string or a number as text (GitHub's ids are numbers) */
export const idOf = (v: unknown): string | null =>
  typeof v === "string" && v.trim() ? v.trim() : typeof v === "number" && Number.isSafeInteger(v) ? String(v) : null;

/** a count: a non-negative integer, else 0 */
export const countOf = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? Math.min(v, 2 ** 31 - 1) : 0);

/** Up- and downvotes from a net score (what Commento keeps): a positive score is that many upvotes. */
export const votesOfScore = (score: unknown): { upvotes: number; downvotes: number } => {
  const n = typeof score === "number" && Number.isSafeInteger(score) ? score : 0;
  return { upvotes: countOf(n), downvotes: countOf(-n) };
};
