// The outbound worker (contract section 24): what the fediverse is sent, read from the database so
// that nothing depends on the process that wrote it surviving.
//   - A discussion with a `url` created while its tenant federates (after its actor was made), or
//     named by POST /discussions/{id}/federate, gets a federation_discussions row; while its
//     `announced_at` is null it is announced: Create(Article) to the followers.
//   - Each federated discussion's events after its `delivered_seq` (the per-discussion sequence of
//     the event log, in commit order) become activities by the tenant's actor: a local comment
//     published (created approved, or approved later) is Create(Note) to the followers and to the
//     remote author it answers; an edit of one sent is Update(Note); its deletion or rejection is
//     Delete(Tombstone) to the same recipients as its Create (a moderator's rejection or deletion
//     included). Comments of remote authors (readers `ap:…`) are not sent back.
// The cursor moves after the activities are queued (delivery.ts): a crash in between queues them
// again, which receivers take as the same activity (same ids). Followers on a blocked domain are
// sent nothing, nor an inbox on another origin than its actor's (a follower's row, the remote
// author's actor document): nothing is sent to a third server.
import { type Context, type Federation } from "@fedify/fedify";
import { Create, Delete, Note, Tombstone, Update } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { FederationData } from "./context.js";
import { domainBlocked, federatingTenant } from "./tenants.js";
import { articleOf, isRemoteAuthor, noteOf, readDiscussion, readNote } from "./objects.js";
import { mentionOf } from "./mentions.js";
import { sameOrigin } from "./signer.js";

/** Events a discussion's pass reads at most. */
const EVENTS_PER_PASS = 200;
/** Discussions a pass takes at most. */
const DISCUSSIONS_PER_PASS = 100;

interface PendingRow {
  tenantId: string;
  discussionId: string;
}

interface EventRow {
  seq: number;
  type: string;
  commentId: string | null;
  status: string | null;
  authorId: string | null;
}

/** An inbox on its actor's origin (scheme, host and port), else null: deliveries go to no third server. */
function ownInbox(actorId: string, inbox: string | null | undefined): string | null {
  const a = URL.parse(actorId);
  const i = inbox ? URL.parse(inbox) : null;
  return a && i && sameOrigin(a, i) ? i.href : null;
}

async function followerInboxes(ctx: Context<FederationData>, tenantId: string, blocked: readonly string[]): Promise<string[]> {
  const rows = await ctx.data.app.sql.query<{ actorId: string; inbox: string }>(
    `SELECT actor_id AS "actorId", inbox FROM federation_followers WHERE tenant_id = $1`,
    [tenantId],
  );
  const inboxes = rows.map((r) => ownInbox(r.actorId, r.inbox)).filter((i): i is string => i !== null);
  return [...new Set(inboxes)].filter((i) => !domainBlocked(blocked, URL.parse(i)?.hostname ?? ""));
}

/** New discussions with a url of federating tenants become rows to announce. */
async function noteNewDiscussions(ctx: Context<FederationData>): Promise<void> {
  await ctx.data.app.sql.query(
    `INSERT INTO federation_discussions (tenant_id, discussion_id, delivered_seq, announced_at, created_at)
     SELECT d.tenant_id, d.id, d.seq, NULL, $1::timestamptz
       FROM federation_actors a
       JOIN tenants t ON t.id = a.tenant_id AND t.settings->'federation'->>'enabled' = 'true'
       JOIN discussions d ON d.tenant_id = a.tenant_id AND d.created_at >= a.created_at AND d.url IS NOT NULL
      WHERE NOT EXISTS (SELECT 1 FROM federation_discussions f WHERE f.tenant_id = d.tenant_id AND f.discussion_id = d.id)
      LIMIT ${DISCUSSIONS_PER_PASS}
     ON CONFLICT DO NOTHING`,
    [ctx.data.app.clock.now()],
  );
}

async function announce(ctx: Context<FederationData>): Promise<number> {
  const rows = await ctx.data.app.sql.query<PendingRow>(
    `SELECT tenant_id AS "tenantId", discussion_id AS "discussionId" FROM federation_discussions WHERE announced_at IS NULL LIMIT ${DISCUSSIONS_PER_PASS}`,
    [],
  );
  for (const r of rows) {
    const t = await federatingTenant(ctx.data.app, r.tenantId);
    const d = t && (await readDiscussion(ctx.data.app.sql, r.tenantId, r.discussionId));
    if (t && d?.url) {
      const article = articleOf(ctx, r.tenantId, { ...d, url: d.url });
      const create = new Create({
        // each announcement its own id (federate may announce again; receivers drop an id they have seen)
        id: new URL(`${article.id!.href}#create/${ctx.data.app.clock.now().getTime()}`),
        actor: ctx.getActorUri(r.tenantId),
        object: article,
        to: article.toId,
        cc: ctx.getFollowersUri(r.tenantId),
        published: article.published,
      });
      await ctx.data.outbound.send(ctx, r.tenantId, create, await followerInboxes(ctx, r.tenantId, t.settings.blockedDomains));
    }
    // a tenant no longer federating, or a discussion without a url, is marked too: nothing to announce
    await ctx.data.app.sql.query(
      `UPDATE federation_discussions SET announced_at = $3::timestamptz WHERE tenant_id = $1 AND discussion_id = $2`,
      [r.tenantId, r.discussionId, ctx.data.app.clock.now()],
    );
  }
  return rows.length;
}

async function wasSent(ctx: Context<FederationData>, tenantId: string, noteId: string): Promise<boolean> {
  const rows = await ctx.data.app.sql.query(`SELECT 1 FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = 'sent'`, [
    tenantId,
    noteId,
  ]);
  return rows.length > 0;
}

/** One event of a federated discussion: the activity it makes, if any, queued. */
async function deliverEvent(ctx: Context<FederationData>, tenantId: string, blocked: readonly string[], ev: EventRow): Promise<void> {
  if (!ev.commentId || (ev.authorId && isRemoteAuthor(ev.authorId))) return;
  const noteId = ctx.getObjectUri(Note, { tenant: tenantId, comment: ev.commentId });
  const actor = ctx.getActorUri(tenantId);
  const followers = await followerInboxes(ctx, tenantId, blocked);
  const published = ev.type === "comment_approved" || (ev.type === "comment_created" && ev.status === "approved");
  if (published || (ev.type === "comment_edited" && ev.status === "approved")) {
    const c = await readNote(ctx.data.app.sql, tenantId, ev.commentId);
    if (!c || c.status !== "approved") return;
    const mention = await mentionOf(ctx, c);
    const note = noteOf(ctx, tenantId, c, mention);
    const mentioned = mention ? await inboxOf(ctx, mention.actorId, blocked) : null;
    const to = [...followers, ...(mentioned ? [mentioned] : [])];
    const sent = await wasSent(ctx, tenantId, noteId.href);
    if (!published && !sent) return; // an edit of a comment never sent: nothing to update
    const activity =
      published && !sent
        ? new Create({
            id: new URL(`${noteId.href}#create`),
            actor,
            object: note,
            tos: note.toIds,
            ccs: note.ccIds,
            published: note.published,
          })
        : new Update({
            id: new URL(`${noteId.href}#update/${ev.seq}`),
            actor,
            object: note,
            tos: note.toIds,
            ccs: note.ccIds,
            updated: Temporal.Now.instant(),
          });
    await ctx.data.outbound.send(ctx, tenantId, activity, to);
    await ctx.data.app.sql.query(
      `INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, created_at) VALUES ($1, $2, 'sent', $3, $4::timestamptz) ON CONFLICT DO NOTHING`,
      [tenantId, noteId.href, ev.commentId, ctx.data.app.clock.now()],
    );
  } else if ((ev.type === "comment_deleted" || ev.type === "comment_rejected") && (await wasSent(ctx, tenantId, noteId.href))) {
    // the Delete goes where the Create went: the followers and the remote author the comment answered
    // (a comment an erasure removed outright has no row left: the followers alone)
    const c = await readNote(ctx.data.app.sql, tenantId, ev.commentId);
    const mention = c ? await mentionOf(ctx, c) : null;
    const mentioned = mention ? await inboxOf(ctx, mention.actorId, blocked) : null;
    const del = new Delete({
      id: new URL(`${noteId.href}#delete/${ev.seq}`),
      actor,
      object: new Tombstone({ id: noteId }),
      to: new URL("https://www.w3.org/ns/activitystreams#Public"),
      ...(mention ? { cc: new URL(mention.actorId) } : {}),
    });
    await ctx.data.outbound.send(ctx, tenantId, del, [...followers, ...(mentioned ? [mentioned] : [])]);
    await ctx.data.app.sql.query(`DELETE FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = 'sent'`, [
      tenantId,
      noteId.href,
    ]);
  }
}

async function inboxOf(ctx: Context<FederationData>, actorId: string, blocked: readonly string[]): Promise<string | null> {
  const url = URL.parse(actorId);
  if (!url || domainBlocked(blocked, url.hostname)) return null;
  const actor = await ctx.lookupObject(url).catch(() => null);
  const inbox = actor && "inboxId" in actor ? (actor.inboxId as URL | null) : null;
  return ownInbox(actorId, inbox?.href);
}

async function deliverComments(ctx: Context<FederationData>): Promise<number> {
  const rows = await ctx.data.app.sql.query<PendingRow & { deliveredSeq: number; seq: number }>(
    `SELECT f.tenant_id AS "tenantId", f.discussion_id AS "discussionId", f.delivered_seq AS "deliveredSeq", d.seq
       FROM federation_discussions f
       JOIN discussions d ON d.tenant_id = f.tenant_id AND d.id = f.discussion_id
      WHERE f.announced_at IS NOT NULL AND d.seq > f.delivered_seq
      LIMIT ${DISCUSSIONS_PER_PASS}`,
    [],
  );
  let done = 0;
  for (const r of rows) {
    const t = await federatingTenant(ctx.data.app, r.tenantId);
    const events = await ctx.data.app.sql.query<EventRow>(
      `SELECT e.seq, e.type, e.payload->'data'->'comment'->>'id' AS "commentId", e.payload->'data'->'comment'->>'status' AS status,
              e.payload->'data'->'comment'->'author'->>'id' AS "authorId"
         FROM events e
        WHERE e.tenant_id = $1 AND e.discussion_id = $2 AND e.seq > $3
        ORDER BY e.seq LIMIT ${EVENTS_PER_PASS}`,
      [r.tenantId, r.discussionId, r.deliveredSeq],
    );
    let last = r.deliveredSeq;
    for (const ev of events) {
      if (t) await deliverEvent(ctx, r.tenantId, t.settings.blockedDomains, ev);
      last = ev.seq;
      done++;
    }
    // events retention may have removed some: the cursor still reaches the discussion's seq
    if (events.length < EVENTS_PER_PASS) last = Math.max(last, r.seq);
    await ctx.data.app.sql.query(
      `UPDATE federation_discussions SET delivered_seq = GREATEST(delivered_seq, $3) WHERE tenant_id = $1 AND discussion_id = $2`,
      [r.tenantId, r.discussionId, last],
    );
  }
  return done;
}

/** One pass: new discussions noted, announcements, then comments' activities. */
export async function outboundPass(federation: Federation<FederationData>, origin: URL, data: FederationData): Promise<number> {
  const ctx = federation.createContext(origin, data);
  await noteNewDiscussions(ctx);
  return (await announce(ctx)) + (await deliverComments(ctx));
}
