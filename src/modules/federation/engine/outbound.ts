// What the fediverse is sent (contract section 24), made from the outbound queue's `activitypub_fanout`
// jobs (src/outbound/): the writing transaction enqueues them, so nothing depends on the process
// that wrote surviving, and the queue's lease gives each to one worker of one instance.
//   - A discussion federated (eng_federate_discussion: a new one with a `url` while its tenant
//     federates, or one named by POST /discussions/{id}/federate) has one job to announce it:
//     Create(Article) to the followers.
//   - Each later event of its comments (eng_event_jobs) has one job: a local comment published
//     (created approved, or approved later) is Create(Note) to the followers and to the remote
//     author it answers; an edit of one sent is Update(Note); its deletion or rejection is
//     Delete(Tombstone) to the same recipients as its Create (a moderator's rejection or deletion
//     included). Comments of remote authors (readers `ap:…`) are not sent back.
// A job becomes its activity's deliveries, one `activitypub` job per distinct inbox (the composer's
// `split`, written with the job's end in one statement; delivery.ts proves, signs and sends each). A
// comment's jobs are made in the order of its events, after its discussion's announcement: one waits
// while an earlier one it must follow is still queued (earlierQueued). Followers on a blocked domain are sent nothing, nor an inbox on another
// origin than its actor's (a follower's row, the remote author's actor document): nothing is sent to
// a third server.
import { type Context } from "@fedify/fedify";
import { Create, Delete, Note, Tombstone, Update } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import type { FederationData } from "./context.js";
import { domainBlocked, federatingTenant } from "./tenants.js";
import { articleOf, isRemoteAuthor, noteOf, readDiscussion, readNote } from "./objects.js";
import { mentionOf } from "./mentions.js";
import { remoteActor } from "./remote-actors.js";
import { sameOrigin } from "./signer.js";

/** How long a discussion's job waits for an earlier one of the same discussion before it looks again. */
export const ORDER_WAIT_MS = 250;

/** An `activitypub_fanout` job's message (eng_event_jobs, eng_federate_discussion). */
export interface FanoutMessage {
  discussionId: string;
  /** the discussion's seq when it was enqueued: its jobs are made in this order */
  seq: number;
  /** an announcement of the discussion */
  announce?: boolean;
  /** a comment's event */
  event?: { type: string; commentId: string | null; status: string | null; authorId: string | null };
}

const isFanoutMessage = (v: unknown): v is FanoutMessage => {
  const m = v as Partial<FanoutMessage> | null;
  return typeof m?.discussionId === "string" && typeof m.seq === "number" && (m.announce === true || typeof m.event === "object");
};

/** An inbox on its actor's origin (scheme, host and port), else null: deliveries go to no third server. */
function ownInbox(actorId: string, inbox: string | null | undefined): string | null {
  const a = URL.parse(actorId);
  const i = inbox ? URL.parse(inbox) : null;
  return a && i && sameOrigin(a, i) ? i.href : null;
}

async function followerInboxes(ctx: Context<FederationData>, tenantId: string, blocked: readonly string[]): Promise<string[]> {
  const rows = await ctx.data.app
    .stores(tenantId)
    .sql.query<{ actorId: string; inbox: string }>(
      `SELECT actor_id AS "actorId", inbox FROM federation_followers WHERE tenant_id = $1`,
      [],
    );
  const inboxes = rows.map((r) => ownInbox(r.actorId, r.inbox)).filter((i): i is string => i !== null);
  return [...new Set(inboxes)].filter((i) => !domainBlocked(blocked, URL.parse(i)?.hostname ?? ""));
}

/**
 * Where an activity for one remote actor (the author a comment answers) goes, by the rule a
 * follower's inbox is kept by (inbox.ts): nowhere when its own inbox is on another origin than the
 * actor's; else its server's shared inbox when it has one on that origin too, so a server that both
 * follows the site and hosts the author gets the activity once; else its own inbox.
 */
async function inboxOf(ctx: Context<FederationData>, actorId: string, blocked: readonly string[]): Promise<string | null> {
  const url = URL.parse(actorId);
  if (!url || domainBlocked(blocked, url.hostname)) return null;
  const actor = await remoteActor(ctx, url);
  if (!actor) return null;
  const own = ownInbox(actorId, actor.inbox);
  return own === null ? null : (ownInbox(actorId, actor.sharedInbox) ?? own);
}

async function wasSent(ctx: Context<FederationData>, tenantId: string, noteId: string): Promise<boolean> {
  const rows = await ctx.data.app
    .stores(tenantId)
    .sql.query(`SELECT 1 FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = 'sent'`, [noteId]);
  return rows.length > 0;
}

/** An activity and where it goes; null: nothing to send. */
interface Outgoing {
  activity: Create | Update | Delete;
  inboxes: string[];
  /** what the federation keeps of it once its deliveries are queued */
  record?: () => Promise<unknown>;
}

async function announcement(
  ctx: Context<FederationData>,
  tenantId: string,
  m: FanoutMessage,
  blocked: readonly string[],
): Promise<Outgoing | null> {
  const store = ctx.data.app.stores(tenantId);
  const d = await readDiscussion(store.sql, m.discussionId);
  const announced = (activityId: string | null) =>
    store.sql.query(
      `UPDATE federation_discussions SET announced_at = $3::timestamptz, activity_id = COALESCE($4, activity_id) WHERE tenant_id = $1 AND discussion_id = $2`,
      [m.discussionId, ctx.data.app.clock.now(), activityId],
    );
  if (!d?.url) {
    await announced(null);
    return null; // its url removed since: nothing to announce
  }
  const article = articleOf(ctx, tenantId, { ...d, url: d.url });
  const create = new Create({
    // each announcement its own id (federate may announce again; receivers drop an id they have seen)
    id: new URL(`${article.id!.href}#create/${m.seq}-${ctx.data.app.clock.now().getTime()}`),
    actor: ctx.getActorUri(tenantId),
    object: article,
    to: article.toId,
    cc: ctx.getFollowersUri(tenantId),
    published: article.published,
  });
  // the id the outbox lists it under (outbox.ts): the one its deliveries carry
  await announced(create.id!.href);
  return { activity: create, inboxes: await followerInboxes(ctx, tenantId, blocked) };
}

/** A comment's event: the activity it makes, if any. */
async function commentActivity(
  ctx: Context<FederationData>,
  tenantId: string,
  m: FanoutMessage,
  ev: NonNullable<FanoutMessage["event"]>,
  blocked: readonly string[],
): Promise<Outgoing | null> {
  const commentId = ev.commentId;
  if (!commentId || (ev.authorId && isRemoteAuthor(ev.authorId))) return null;
  const store = ctx.data.app.stores(tenantId);
  const noteId = ctx.getObjectUri(Note, { tenant: tenantId, comment: commentId });
  const actor = ctx.getActorUri(tenantId);
  const published = ev.type === "comment_approved" || (ev.type === "comment_created" && ev.status === "approved");
  if (published || (ev.type === "comment_edited" && ev.status === "approved")) {
    const c = await readNote(store.sql, commentId);
    if (!c || c.status !== "approved") return null;
    const sent = await wasSent(ctx, tenantId, noteId.href);
    if (!published && !sent) return null; // an edit of a comment never sent: nothing to update
    const mention = await mentionOf(ctx, c);
    const note = noteOf(ctx, tenantId, c, mention);
    const mentioned = mention ? await inboxOf(ctx, mention.actorId, blocked) : null;
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
            id: new URL(`${noteId.href}#update/${m.seq}`),
            actor,
            object: note,
            tos: note.toIds,
            ccs: note.ccIds,
            updated: Temporal.Now.instant(),
          });
    return {
      activity,
      inboxes: [...(await followerInboxes(ctx, tenantId, blocked)), ...(mentioned ? [mentioned] : [])],
      record: () =>
        store.sql.query(
          `INSERT INTO federation_objects (tenant_id, object_id, kind, comment_id, created_at) VALUES ($1, $2, 'sent', $3, $4::timestamptz) ON CONFLICT DO NOTHING`,
          [noteId.href, commentId, ctx.data.app.clock.now()],
        ),
    };
  }
  if ((ev.type === "comment_deleted" || ev.type === "comment_rejected") && (await wasSent(ctx, tenantId, noteId.href))) {
    // the Delete goes where the Create went: the followers and the remote author the comment answered
    // (a comment an erasure removed outright has no row left: the followers alone)
    const c = await readNote(store.sql, commentId);
    const mention = c ? await mentionOf(ctx, c) : null;
    const mentioned = mention ? await inboxOf(ctx, mention.actorId, blocked) : null;
    const activity = new Delete({
      id: new URL(`${noteId.href}#delete/${m.seq}`),
      actor,
      object: new Tombstone({ id: noteId }),
      to: new URL("https://www.w3.org/ns/activitystreams#Public"),
      ...(mention ? { cc: new URL(mention.actorId) } : {}),
    });
    return {
      activity,
      inboxes: [...(await followerInboxes(ctx, tenantId, blocked)), ...(mentioned ? [mentioned] : [])],
      record: () =>
        store.sql.query(`DELETE FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = 'sent'`, [noteId.href]),
    };
  }
  return null;
}

/**
 * Whether an earlier job this one must follow is still queued (it waits for it): a comment's
 * activities go in the order of its events (its Create before its Update, its Delete last), after
 * its discussion's announcement; activities of different comments need no order among them (a
 * server that meets a reply before its parent fetches the parent), so a burst of comments on one
 * discussion goes out at once rather than one job at a time. An announcement follows every earlier
 * job of its discussion.
 */
async function earlierQueued(ctx: Context<FederationData>, tenantId: string, jobId: string, m: FanoutMessage): Promise<boolean> {
  const rows = await ctx.data.app.stores(tenantId).sql.query(
    `SELECT 1 FROM webhook_deliveries
      WHERE tenant_id = $1 AND kind = 'activitypub_fanout' AND status = 'pending' AND id <> $2::uuid
        AND message->>'discussionId' = $3 AND (message->>'seq')::int < $4
        AND ($5::text IS NULL OR message ? 'announce' OR message #>> '{event,commentId}' = $5)
      LIMIT 1`,
    [jobId, m.discussionId, m.seq, m.announce ? null : (m.event?.commentId ?? null)],
  );
  return rows.length > 0;
}

/**
 * An `activitypub_fanout` job made into its activity's deliveries (`split`), or nothing to send
 * (`done`), or a wait (`defer`: an earlier job of its discussion first, or the server's own address
 * not known yet).
 */
export async function composeFanout(
  ctx: Context<FederationData> | null,
  job: { id: string; tenantId: string; message: unknown },
  now: Date,
): Promise<Composed> {
  if (!isFanoutMessage(job.message)) return { drop: "not a federated discussion's job" };
  if (!ctx) return { defer: new Date(now.getTime() + ORDER_WAIT_MS) };
  const m = job.message;
  if (await earlierQueued(ctx, job.tenantId, job.id, m)) return { defer: new Date(now.getTime() + ORDER_WAIT_MS) };
  const t = await federatingTenant(ctx.data.app, job.tenantId);
  if (!t) return { done: "the tenant does not federate" };
  const blocked = t.settings.blockedDomains;
  const out = m.announce
    ? await announcement(ctx, job.tenantId, m, blocked)
    : await commentActivity(ctx, job.tenantId, m, m.event!, blocked);
  if (!out) return { done: "nothing to send" };
  await out.record?.();
  const messages = await ctx.data.outbound.messages(ctx, job.tenantId, out.activity, out.inboxes);
  if (messages.length === 0) return { done: "no inbox to send to" };
  return { split: { kind: "activitypub", messages } };
}

/**
 * The composer of `activitypub_fanout` jobs: the federation's context, once the server's address is
 * known (null before: the job waits); an instance that serves no federation (production without
 * PUBLIC_URL: engine.ts, `available`) announces nothing, and its jobs are dropped with the reason.
 */
export function createFanoutComposer(
  engine: () => { context(): Context<FederationData> | null; readonly available: boolean },
): MessageComposer {
  return {
    compose: (job, now) =>
      engine().available
        ? composeFanout(engine().context(), job, now)
        : Promise.resolve({ drop: "no federation without PUBLIC_URL in production" }),
  };
}
