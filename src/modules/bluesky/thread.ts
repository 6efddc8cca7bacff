// A linked post's thread as the AppView answers app.bsky.feed.getPostThread (contract section 30),
// read into the replies the service brings in: each reply's URI, its parent's, its author (DID,
// handle, display name, avatar), its text with its links as Markdown links, and when it was
// written — parents before their replies. A post the AppView answers as not found or blocked is
// skipped with everything under it; a blocked one's URI is kept as still there (its comment stays).
// The walk is iterative and bounded (MAX_THREAD_REPLIES): a thread is data from the network.

/** The most replies of one thread brought in (the rest wait for a later read, once these are here). */
export const MAX_THREAD_REPLIES = 5_000;
/** The depth asked of the AppView: the whole thread as Bluesky shows it. */
export const THREAD_DEPTH = 1_000;

export interface ThreadReply {
  uri: string;
  /** the post it answers: the linked post's URI for a reply to it */
  parentUri: string;
  did: string;
  handle: string;
  displayName: string | null;
  avatar: string | null;
  /** the text, its links written as Markdown links */
  body: string;
  createdAt: Date;
}

export interface ReadThread {
  /** the linked post is there (not deleted, not blocked) */
  found: boolean;
  /** its replies, parents first */
  replies: ThreadReply[];
  /** URIs the AppView answered as blocked: still there, not shown */
  blocked: Set<string>;
  /** the walk stopped at MAX_THREAD_REPLIES */
  truncated: boolean;
}

type Node = Record<string, unknown>;
const isObj = (v: unknown): v is Node => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The text with each link facet (a UTF-8 byte range and its URI) as a Markdown link; other facets stay text. */
export function textWithLinks(text: string, facets: unknown): string {
  if (!Array.isArray(facets) || facets.length === 0) return text;
  const bytes = Buffer.from(text, "utf8");
  const links: { start: number; end: number; uri: string }[] = [];
  for (const f of facets.slice(0, 100)) {
    if (!isObj(f) || !isObj(f.index) || !Array.isArray(f.features)) continue;
    const start = f.index.byteStart;
    const end = f.index.byteEnd;
    const link = f.features.find((x) => isObj(x) && x.$type === "app.bsky.richtext.facet#link" && typeof x.uri === "string");
    if (typeof start !== "number" || typeof end !== "number" || !link) continue;
    const uri = (link as Node).uri as string;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > bytes.length || start >= end) continue;
    if (!/^https?:\/\//i.test(uri) || uri.length > 2048) continue;
    links.push({ start, end, uri });
  }
  links.sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const l of links) {
    if (l.start < at) continue; // overlapping: the first wins
    out += bytes.subarray(at, l.start).toString("utf8");
    const label = bytes
      .subarray(l.start, l.end)
      .toString("utf8")
      .replace(/[[\]\\]/g, (c) => `\\${c}`);
    out += `[${label}](<${l.uri.replace(/[<>\s]/g, encodeURIComponent)}>)`;
    at = l.end;
  }
  return out + bytes.subarray(at).toString("utf8");
}

/** One reply's fields, or null when it is not a readable post. */
function replyOf(view: Node, parentUri: string): ThreadReply | null {
  const post = view.post;
  if (!isObj(post) || !isObj(post.author) || !isObj(post.record)) return null;
  const uri = str(post.uri);
  const did = str(post.author.did);
  const handle = str(post.author.handle);
  const text = str(post.record.text);
  if (!uri || !did || !handle || text === null) return null;
  const written = new Date(str(post.record.createdAt) ?? str(post.indexedAt) ?? "");
  const avatar = str(post.author.avatar);
  return {
    uri,
    parentUri,
    did,
    handle,
    displayName: str(post.author.displayName),
    avatar: avatar && /^https?:\/\//.test(avatar) && avatar.length <= 2048 ? avatar : null,
    body: textWithLinks(text, post.record.facets),
    createdAt: Number.isNaN(written.getTime()) ? new Date(0) : written,
  };
}

/** The replies of a getPostThread answer's `thread`, parents first. */
export function readThread(thread: unknown): ReadThread {
  const out: ReadThread = { found: false, replies: [], blocked: new Set(), truncated: false };
  if (!isObj(thread) || thread.$type !== "app.bsky.feed.defs#threadViewPost" || !isObj(thread.post)) return out;
  const rootUri = str(thread.post.uri);
  if (!rootUri) return out;
  out.found = true;
  // breadth first: a reply comes after its parent
  const queue: { node: Node; parentUri: string }[] = [];
  const enqueue = (node: Node, parentUri: string) => {
    for (const child of Array.isArray(node.replies) ? node.replies : []) if (isObj(child)) queue.push({ node: child, parentUri });
  };
  enqueue(thread, rootUri);
  for (let i = 0; i < queue.length; i++) {
    const { node, parentUri } = queue[i]!;
    if (node.$type === "app.bsky.feed.defs#blockedPost") {
      const uri = str(node.uri);
      if (uri) out.blocked.add(uri);
      continue;
    }
    if (node.$type !== "app.bsky.feed.defs#threadViewPost") continue; // not found, or unknown: skipped with its replies
    const reply = replyOf(node, parentUri);
    if (!reply) continue;
    if (out.replies.length >= MAX_THREAD_REPLIES) {
      out.truncated = true;
      break;
    }
    out.replies.push(reply);
    enqueue(node, reply.uri);
  }
  return out;
}
