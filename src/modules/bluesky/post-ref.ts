// Which Bluesky post a discussion is linked to (contract section 30): an `at://` URI or a bsky.app
// post URL, parsed into the few fields used — the repository (a DID, or a handle to resolve) and
// the record key — and nothing else of the string kept. A handle is resolved to its DID by the
// AppView (client.ts) before the link is stored: the stored URI is always at://<did>/app.bsky.feed.post/<rkey>.
import { BLUESKY_HANDLE_PATTERN } from "../../tenancy/settings/bluesky.js";

export const POST_COLLECTION = "app.bsky.feed.post";

/** A post named by its repository (`did` when it is a DID, `handle` otherwise) and record key. */
export type PostRef = { did: string; rkey: string } | { handle: string; rkey: string };

const DID = /^did:(plc:[a-z2-7]{24}|web:[a-zA-Z0-9.%-]{1,253}(:[a-zA-Z0-9.%-]+)*)$/;
const RKEY = /^[A-Za-z0-9._:~-]{1,512}$/;

export const POST_REF_RULE =
  "must be an at:// URI of a post (at://<did or handle>/app.bsky.feed.post/<key>) or a https://bsky.app/profile/<handle>/post/<key> URL";

const repoOf = (repo: string, rkey: string): PostRef | null => {
  if (!RKEY.test(rkey) || rkey === "." || rkey === "..") return null;
  if (DID.test(repo)) return { did: repo, rkey };
  const handle = repo.toLowerCase();
  return BLUESKY_HANDLE_PATTERN.test(handle) ? { handle, rkey } : null;
};

/** The post a string names, or null. */
export function parsePostRef(input: string): PostRef | null {
  if (input.length > 1024) return null;
  const at = /^at:\/\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)$/.exec(input);
  if (at) return at[2] === POST_COLLECTION ? repoOf(decodeURIComponent(at[1]!), at[3]!) : null;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || url.hostname !== "bsky.app" || url.port || url.username || url.password) return null;
  const path = /^\/profile\/([^/]+)\/post\/([^/]+)\/?$/.exec(url.pathname);
  return path ? repoOf(decodeURIComponent(path[1]!), decodeURIComponent(path[2]!)) : null;
}

/** A post's at:// URI. */
export const postUri = (did: string, rkey: string): string => `at://${did}/${POST_COLLECTION}/${rkey}`;

/** The DID and record key of a stored post URI (at://<did>/app.bsky.feed.post/<rkey>). */
export function splitPostUri(uri: string): { did: string; rkey: string } | null {
  const ref = parsePostRef(uri);
  return ref && "did" in ref ? ref : null;
}

/** Where a browser opens a post: https://bsky.app/profile/<did>/post/<rkey>. */
export function postWebUrl(uri: string): string | null {
  const ref = splitPostUri(uri);
  return ref ? `https://bsky.app/profile/${ref.did}/post/${encodeURIComponent(ref.rkey)}` : null;
}
