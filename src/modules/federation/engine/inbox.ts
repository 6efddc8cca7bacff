// The inbox (contract section 24): what each inbound activity does, once the mount has verified its
// HTTP signature and that its actor owns the key (unsigned or forged: 401 before any of this runs; a
// blocked domain or one over its rate: refused by the mount, ../http-routes.ts) and stored it; the
// worker applies it through these listeners later (inbound.ts).
//   Follow            stored in federation_followers, answered with Accept (queued, delivery.ts)
//   Undo(Follow)      the follower removed;  Undo(Like) the like taken back
//   Create(Note)      in reply to a discussion's Article or a comment's Note: a comment by reader
//                     `ap:<actor>` (postComment: the same rules, events and webhooks as a local one;
//                     status per federation.remoteModeration), its Note's id kept in federation_objects
//                     by the comment's own statement
//   Update(Note)      edits that comment (editComment);  Delete / Tombstone deletes it (deleteComment)
//   Like              a `like` reaction of the actor's reader (toggleReaction), taken back by Undo(Like);
//                     the Like's id kept in federation_objects by the toggle's own statement
// Only the actor who wrote a Note may update or delete its comment. A reply attaches only to a
// discussion that exists with a url (an Article we serve) or to a comment of one: it never creates a
// discussion, whatever discussions.autoCreate says (it comes from no page of the site's allowedOrigins).
// A Note is taken only with its id on its actor's origin (scheme, host and port), and a follower only
// with an inbox on its own origin. What names nothing of ours is accepted and ignored (202), as
// Mastodon expects of a server that is not concerned.
import { type Context, type InboxListenerSetters } from "@fedify/fedify";
import { Article, Create, Delete, Follow, Like, Note, Undo, Update, Accept } from "@fedify/vocab";
import { AppError } from "../../../lib/errors.js";
import { postComment, editComment, deleteComment } from "../../comments/write.js";
import { toggleReaction } from "../../reactions/reactions.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { FederationData } from "./context.js";
import { domainBlocked, federatingTenant, type FederatingTenant } from "./tenants.js";
import { remoteContext, remoteReader, remoteReaderId } from "./remote-reader.js";
import { contentToBody } from "./remote-content.js";
import { readDiscussion } from "./objects.js";
import { sameOrigin } from "./signer.js";

/** The longest actor id a reader id (`ap:` + id, at most 255 characters) can hold. */
const MAX_ACTOR_ID = 252;

interface ObjectRow {
  tenantId: string;
  commentId: string;
  readerId: string | null;
  actorId: string | null;
}

/** The tenant a URI of ours names (an actor, an Article, a Note), else null. */
function tenantOfUri(
  ctx: Context<FederationData>,
  uri: URL | null,
): { tenantId: string; discussionId?: string; commentId?: string } | null {
  const parsed = ctx.parseUri(uri);
  if (!parsed) return null;
  if (parsed.type === "actor") return { tenantId: parsed.identifier };
  if (parsed.type === "object" && parsed.class === Article && parsed.values.tenant && parsed.values.discussion) {
    return { tenantId: parsed.values.tenant, discussionId: parsed.values.discussion };
  }
  if (parsed.type === "object" && parsed.class === Note && parsed.values.tenant && parsed.values.comment) {
    return { tenantId: parsed.values.tenant, commentId: parsed.values.comment };
  }
  return null;
}

/** The comments a remote object became: the recipient's, or every tenant's for the shared inbox (one per tenant that has it). */
async function objectsOf(
  ctx: Context<FederationData>,
  objectId: string,
  kind: "note" | "like",
  recipient: string | null,
): Promise<ObjectRow[]> {
  if (recipient !== null) {
    return ctx.data.app.stores(recipient).sql.query<ObjectRow>(
      `SELECT tenant_id AS "tenantId", comment_id AS "commentId", reader_id AS "readerId", actor_id AS "actorId"
           FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = $3`,
      [objectId, kind],
    );
  }
  // across tenants: the shared inbox's activity concerns every tenant that holds the object
  return ctx.data.app.sql.query<ObjectRow>(
    `SELECT tenant_id AS "tenantId", comment_id AS "commentId", reader_id AS "readerId", actor_id AS "actorId"
       FROM federation_objects WHERE object_id = $1 AND kind = $2`,
    [objectId, kind],
  );
}

/** The tenant, federating and not blocking the actor's domain; else null (the activity is ignored). */
async function admitted(ctx: Context<FederationData>, tenantId: string, actorId: URL): Promise<FederatingTenant | null> {
  const t = await federatingTenant(ctx.data.app, tenantId);
  if (!t || domainBlocked(t.settings.blockedDomains, actorId.hostname)) return null;
  return t;
}

/** A domain refusal of ours (422 parent, 409 locked, 404 gone…) ends the activity quietly: logged, answered 202. */
async function quietly(ctx: Context<FederationData>, what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    ctx.data.app.log.info({ code: err.code, detail: err.message, what }, "an inbound activity was not applied");
  }
}

async function onFollow(ctx: Context<FederationData> & { recipient: string | null }, follow: Follow): Promise<void> {
  const target = tenantOfUri(ctx, follow.objectId);
  if (!follow.actorId || !target || target.commentId || target.discussionId) return;
  if (ctx.recipient !== null && ctx.recipient !== target.tenantId) return;
  if (!(await admitted(ctx, target.tenantId, follow.actorId))) return;
  const follower = await follow.getActor(ctx);
  if (!follower?.id || !follower.inboxId) return;
  // deliveries go only to the follower's own server: a shared inbox elsewhere is not taken, nor the follow of an inbox elsewhere
  const actorId = follower.id;
  if (!sameOrigin(follower.inboxId, actorId)) {
    ctx.data.app.log.info({ actor: actorId.href }, "a follow whose inbox is on another origin than its actor's was ignored");
    return;
  }
  const shared = follower.endpoints?.sharedInbox;
  const inbox = shared && sameOrigin(shared, actorId) ? shared : follower.inboxId;
  await ctx.data.app.stores(target.tenantId).sql.query(
    `INSERT INTO federation_followers (tenant_id, actor_id, inbox, follow_id, created_at) VALUES ($1, $2, $3, $4, $5::timestamptz)
     ON CONFLICT (tenant_id, actor_id) DO UPDATE SET inbox = EXCLUDED.inbox, follow_id = EXCLUDED.follow_id`,
    [follower.id.href, inbox.href, follow.id?.href ?? null, ctx.data.app.clock.now()],
  );
  const actorUri = ctx.getActorUri(target.tenantId);
  const accept = new Accept({
    id: new URL(`${actorUri.href}#accepts/${crypto.randomUUID()}`),
    actor: actorUri,
    object: follow,
    to: follower.id,
  });
  await ctx.data.outbound.send(ctx, target.tenantId, accept, [follower.inboxId.href]);
}

async function onUndo(ctx: Context<FederationData> & { recipient: string | null }, undo: Undo): Promise<void> {
  const object = await undo.getObject(ctx);
  if (!undo.actorId) return;
  if (object instanceof Follow) {
    const target = tenantOfUri(ctx, object.objectId);
    if (!target || (object.actorId && object.actorId.href !== undo.actorId.href)) return;
    await ctx.data.app
      .stores(target.tenantId)
      .sql.query(`DELETE FROM federation_followers WHERE tenant_id = $1 AND actor_id = $2`, [undo.actorId.href]);
  } else if (object instanceof Like && object.id) {
    for (const row of await objectsOf(ctx, object.id.href, "like", ctx.recipient)) {
      if (row.actorId !== undo.actorId.href) continue;
      await unlike(ctx, row, object.id.href, undo.actorId);
    }
  }
}

async function unlike(ctx: Context<FederationData>, row: ObjectRow, likeId: string, actorId: URL): Promise<void> {
  const t = await admitted(ctx, row.tenantId, actorId);
  if (!t) return;
  const reader = await remoteReader(ctx, actorId);
  // the reaction taken back and its Like's row deleted are one statement
  await quietly(ctx, "undo like", () =>
    toggleReaction(
      remoteContext(ctx.data.app, t.tenant, reader),
      row.commentId,
      { kind: "like" },
      { objectId: likeId, actorId: actorId.href },
    ),
  );
}

/** Where a Note answers: a discussion (its Article), or a comment (ours, or a remote Note we hold). */
async function replyTargets(
  ctx: Context<FederationData> & { recipient: string | null },
  inReplyTo: URL,
): Promise<{ tenantId: string; discussionId: string; parentId: string | null }[]> {
  const ours = tenantOfUri(ctx, inReplyTo);
  if (ours?.discussionId) {
    // an Article of ours: the discussion must exist, with its page (a reply never creates one)
    const d = await readDiscussion(ctx.data.app.stores(ours.tenantId).sql, ours.discussionId);
    return d?.url ? [{ tenantId: ours.tenantId, discussionId: ours.discussionId, parentId: null }] : [];
  }
  const ids = ours?.commentId
    ? [{ tenantId: ours.tenantId, commentId: ours.commentId }]
    : await objectsOf(ctx, inReplyTo.href, "note", ctx.recipient);
  const out = [];
  for (const { tenantId, commentId } of ids) {
    const [c] = await ctx.data.app
      .stores(tenantId)
      .sql.query<{ discussionId: string }>(`SELECT discussion_id AS "discussionId" FROM comments WHERE tenant_id = $1 AND id = $2`, [
        commentId,
      ]);
    if (c) out.push({ tenantId, discussionId: c.discussionId, parentId: commentId });
  }
  return out.filter((t) => ctx.recipient === null || t.tenantId === ctx.recipient);
}

async function onCreate(ctx: Context<FederationData> & { recipient: string | null }, create: Create): Promise<void> {
  const note = await create.getObject(ctx);
  if (!(note instanceof Note) || !note.id || !note.replyTargetId || !create.actorId) return;
  const actorId = create.actorId;
  // a Note is its author's: one attributed to someone else, or whose id is on another server, is not this actor's to post
  if (note.attributionId?.href !== actorId.href || !sameOrigin(note.id, actorId) || actorId.href.length > MAX_ACTOR_ID) return;
  for (const target of await replyTargets(ctx, note.replyTargetId)) {
    const t = await admitted(ctx, target.tenantId, actorId);
    if (!t) continue;
    if ((await objectsOf(ctx, note.id.href, "note", target.tenantId)).length) continue; // delivered before
    const reader = await remoteReader(ctx, actorId);
    const settings = resolveSettings(t.tenant.settings);
    const body = contentToBody(note.content?.toString() ?? "", settings.maxBodyLength);
    if (!body) continue;
    // the comment and its Note's row in federation_objects are one statement (a Note held already: refused, nothing written)
    await quietly(ctx, "create note", () =>
      postComment(
        remoteContext(ctx.data.app, t.tenant, reader),
        target.discussionId,
        { body, parentId: target.parentId },
        { moderation: t.settings.remoteModeration, remote: { objectId: note.id!.href, actorId: actorId.href } },
      ),
    );
  }
}

async function onUpdate(ctx: Context<FederationData> & { recipient: string | null }, update: Update): Promise<void> {
  const note = await update.getObject(ctx);
  if (!(note instanceof Note) || !note.id || !update.actorId) return;
  for (const row of await objectsOf(ctx, note.id.href, "note", ctx.recipient)) {
    if (row.actorId !== update.actorId.href) continue;
    const t = await admitted(ctx, row.tenantId, update.actorId);
    if (!t) continue;
    const body = contentToBody(note.content?.toString() ?? "", resolveSettings(t.tenant.settings).maxBodyLength);
    if (!body) continue;
    const reader = await remoteReader(ctx, update.actorId);
    await quietly(ctx, "update note", () => editComment(remoteContext(ctx.data.app, t.tenant, reader), row.commentId, { body }));
  }
}

async function onDelete(ctx: Context<FederationData> & { recipient: string | null }, del: Delete): Promise<void> {
  const objectId = del.objectId;
  if (!objectId || !del.actorId) return;
  for (const row of await objectsOf(ctx, objectId.href, "note", ctx.recipient)) {
    if (row.actorId !== del.actorId.href) continue;
    const t = await admitted(ctx, row.tenantId, del.actorId);
    if (!t) continue;
    const reader = { id: remoteReaderId(del.actorId), name: row.readerId ?? del.actorId.href, avatarUrl: null };
    await quietly(ctx, "delete note", () => deleteComment(remoteContext(ctx.data.app, t.tenant, reader), row.commentId));
  }
}

async function onLike(ctx: Context<FederationData> & { recipient: string | null }, like: Like): Promise<void> {
  if (!like.id || !like.objectId || !like.actorId || like.actorId.href.length > MAX_ACTOR_ID) return;
  const actorId = like.actorId;
  const ours = tenantOfUri(ctx, like.objectId);
  const targets = ours?.commentId
    ? [{ tenantId: ours.tenantId, commentId: ours.commentId }]
    : await objectsOf(ctx, like.objectId.href, "note", ctx.recipient);
  for (const { tenantId, commentId } of targets) {
    if (ctx.recipient !== null && ctx.recipient !== tenantId) continue;
    const t = await admitted(ctx, tenantId, actorId);
    if (!t) continue;
    const [already] = await ctx.data.app
      .stores(tenantId)
      .sql.query<{ objectId: string }>(
        `SELECT object_id AS "objectId" FROM federation_objects WHERE tenant_id = $1 AND comment_id = $2 AND actor_id = $3 AND kind = 'like'`,
        [commentId, actorId.href],
      );
    if (already) continue;
    const reader = await remoteReader(ctx, actorId);
    // the reaction and its Like's row in federation_objects are one statement
    await quietly(ctx, "like", () =>
      toggleReaction(
        remoteContext(ctx.data.app, t.tenant, reader),
        commentId,
        { kind: "like" },
        { objectId: like.id!.href, actorId: actorId.href },
      ),
    );
  }
}

export function listenInbox(setters: InboxListenerSetters<FederationData>): void {
  setters
    .on(Follow, onFollow)
    .on(Undo, onUndo)
    .on(Create, onCreate)
    .on(Update, onUpdate)
    .on(Delete, onDelete)
    .on(Like, onLike)
    .onError((ctx, error) => ctx.data.app.log.warn({ err: error }, "an inbound ActivityPub activity failed"));
}
