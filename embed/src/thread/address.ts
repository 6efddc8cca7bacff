// A comment's place in a page (contract section 18): the hash `#comment-<id>` that names it, the id
// of its element inside <engagement-thread>, and its address, which is the one reply emails link to
// (commentLink in src/modules/email/templates.ts). Pure (test/unit/embed-permalink.test.ts); the
// element's permalinks (embed/src/thread/permalink.ts) and its view use them.

const HASH = /^#comment-(.+)$/;

/** The comment a URL's hash names (`#comment-<id>`, the id URL-encoded or not); null for any other hash. */
export function commentIdFromHash(hash: string): string | null {
  const m = HASH.exec(hash);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  // a comment's id is its type prefix and base64url (src/lib/ids.ts); anything else is some other anchor
  return /^[A-Za-z0-9._:~-]{1,128}$/.test(id) ? id : null;
}

/** The id of a comment's element inside the thread (what its address's hash names). */
export const commentAnchor = (id: string): string => `comment-${id}`;

/** A comment's address: the discussion's URL (else the page's), without its hash, then `#comment-<id>`. */
export function commentAddress(pageUrl: string, discussionUrl: string | null | undefined, id: string): string {
  const base = (discussionUrl?.trim() || pageUrl).split("#")[0]!;
  return `${base}#${commentAnchor(encodeURIComponent(id))}`;
}
