// A linked post's thread brought in (contract section 30): each reply not yet here becomes a comment
// of its author's reader `at:<did>` (named by the display name, else the handle; the avatar), posted by
// postComment as any comment is — the same rules, status per bluesky.remoteModeration, events and
// webhooks — with its URI kept in bluesky_replies by the comment's own statement; threaded as on
// Bluesky (a reply to a reply answers that reply's comment; one whose parent is not here — skipped,
// blocked, or waiting for approval — waits for a later read). A reply that was brought in and is no
// longer in the thread was deleted there: its comment is deleted here as its author deletes one
// (unless the read was cut short at MAX_THREAD_REPLIES). A reply whose author was erased is known by its
// URI's hash alone and never comes back.
import { contextForTenant, loadTenant, store, type RequestContext } from "../../../context/request.js";
import { AppError } from "../../../lib/errors.js";
import { cleanRemoteName } from "../../../lib/reader-name.js";
import { sha256 } from "../../../lib/sha256.js";
import type { Settings } from "../../../tenancy/settings/tree.js";
import type { ReaderIdentity } from "../../../auth/identity.js";
import { deleteComment, postComment } from "../../comments/write.js";
import type { ReadThread, ThreadReply } from "../thread.js";

/** A Bluesky account as the service's reader. */
export const blueskyReaderId = (did: string): string => `at:${did}`;

const readerOf = (r: ThreadReply): ReaderIdentity => ({
  id: blueskyReaderId(r.did),
  name: cleanRemoteName(r.displayName ?? "") || cleanRemoteName(r.handle),
  avatarUrl: r.avatar,
});

/** The tenant's context acting as a reader (a key with no capability: never a moderator). */
async function asReader(ctx: RequestContext, reader: ReaderIdentity): Promise<RequestContext> {
  return contextForTenant(ctx.app, await loadTenant(ctx), { kind: "key", keyId: "bluesky", capabilities: new Set() }, reader);
}

interface KnownReply {
  uriHash: string;
  uri: string | null;
  commentId: string;
  readerId: string | null;
  status: string | null;
}

/** A domain refusal (422 parent, 409 held, 403 banned…) skips the reply: logged, tried again at the next read. */
async function quietly<T>(ctx: RequestContext, what: string, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    ctx.app.log.info({ code: err.code, detail: err.message, what }, "a Bluesky reply was not applied");
    return null;
  }
}

/** Brings the thread in: how many comments it posted or removed. */
export async function syncThread(
  ctx: RequestContext,
  settings: Settings,
  link: { discussionId: string; uri: string },
  read: ReadThread,
): Promise<number> {
  const known = await store(ctx).sql.query<KnownReply>(
    `SELECT r.uri_hash AS "uriHash", r.uri, r.comment_id AS "commentId", r.reader_id AS "readerId", c.status::text AS status
       FROM bluesky_replies r LEFT JOIN comments c ON c.tenant_id = r.tenant_id AND c.id = r.comment_id
      WHERE r.tenant_id = $1 AND r.discussion_id = $2`,
    [link.discussionId],
  );
  const held = new Set(known.map((k) => k.uriHash));
  const commentOf = new Map(known.flatMap((k) => (k.uri ? [[k.uri, k.commentId] as const] : [])));
  const now = ctx.app.clock.now();
  let changes = 0;
  for (const reply of read.replies) {
    const uriHash = sha256(reply.uri, "hex");
    if (held.has(uriHash)) continue;
    const parentId = reply.parentUri === link.uri ? null : commentOf.get(reply.parentUri);
    if (parentId === undefined) continue; // its parent is not here (yet)
    const reader = readerOf(reply);
    const written = reply.createdAt.getTime() > 0 && reply.createdAt < now ? reply.createdAt : now;
    const comment = await quietly(ctx, "post reply", async () =>
      postComment(
        await asReader(ctx, reader),
        link.discussionId,
        { body: reply.body, parentId },
        { moderation: settings.bluesky.remoteModeration, bluesky: { uri: reply.uri, uriHash, createdAt: written } },
      ),
    );
    if (!comment) continue;
    held.add(uriHash);
    commentOf.set(reply.uri, comment.id);
    changes++;
  }
  if (read.truncated) return changes;
  const present = new Set([...read.replies.map((r) => r.uri), ...read.blocked]);
  for (const k of known) {
    if (!k.uri || !k.readerId || present.has(k.uri) || k.status === null || k.status === "deleted") continue;
    const reader: ReaderIdentity = { id: k.readerId, name: k.readerId, avatarUrl: null };
    const removed = await quietly(ctx, "remove reply", async () => deleteComment(await asReader(ctx, reader), k.commentId));
    if (removed) changes++;
  }
  return changes;
}
