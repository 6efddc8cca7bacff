// If-None-Match against an answer's ETag, for every route that answers 304 (the REST table's
// `cache`, the fragment, the feeds, the embed's and ALTCHA's files): the weak comparison RFC 9110
// (section 13.1.2) asks of If-None-Match, so `W/"x"` matches `"x"` — a gzip-ing proxy weakens the
// ETag it passes on, and its clients send that one back. `*` matches any answer.

/** The entity tags of an If-None-Match header (quoted, with their W/ if any); commas inside quotes are part of a tag. */
const ENTITY_TAG = /(?:W\/)?"[^"]*"|\*/g;

/** Whether If-None-Match names the answer's ETag (weakly) or is `*`: the answer is then 304. */
export function notModified(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const text = Array.isArray(ifNoneMatch) ? ifNoneMatch.join(",") : ifNoneMatch;
  if (text.length > 8192) return false;
  const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);
  const ours = opaque(etag);
  for (const tag of text.match(ENTITY_TAG) ?? []) if (tag === "*" || opaque(tag) === ours) return true;
  return false;
}
