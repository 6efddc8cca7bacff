// A page's address as discussions are found by it (contract section 27): the same page whatever way
// its address is written. Scheme and host lower-cased, the default port dropped, the fragment dropped,
// an empty path `/`, trailing slashes of a longer path ignored; the query kept as it is (it can name
// another page). Pure and platform-neutral (WHATWG URL only): the service keys discussions with it
// (discussions.url_key) and the thread element (embed/src/thread.ts) names a page's discussion with it.
// The migration that filled url_key for discussions already stored does the same in SQL for URLs as
// the parser writes them (prisma/migrations/*_discussions_url_key).

/**
 * The key of an http(s) URL, or null for anything else (not absolute, another scheme). Userinfo is
 * left out: it names no other page.
 */
export function urlKey(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  if (u.hostname === "") return null;
  // the parser lower-cases scheme and host, drops the default port and makes an empty path "/"
  const path = u.pathname.replace(/\/+$/, "") || "/";
  return `${u.protocol}//${u.host}${path}${u.search}`;
}

/** 64-bit FNV-1a of the key's UTF-8 bytes, as 16 hex digits. */
function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

/**
 * The id a page's discussion gets when the page itself creates it (its first comment, from the thread
 * element without `discussion-id`): `page:` and a hash of the URL's key, so every reader of the page
 * (and the fragment rendered for it) names the same one. A discussion created otherwise keeps its own id.
 */
export function discussionIdForKey(key: string): string {
  return `page:${fnv1a64(key)}`;
}
