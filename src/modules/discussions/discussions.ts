// Discussions: a comment thread per tenant-chosen id (e.g. an article slug).
import { z } from "zod";
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import { Prisma, type Discussion } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { newestFirstPage, type Page } from "../../lib/pagination.js";
import { writeTx, type ScopedTx } from "../../events/write-tx.js";
import type { EventType } from "../../events/types.js";

const UpsertInput = z
  .object({
    title: z.string().max(500).nullish(),
    url: z.string().url().max(2048).nullish(),
  })
  .strict();

export type UpsertDiscussionInput = z.input<typeof UpsertInput>;

/** The discussion as the REST API returns it (and as events carry it). */
export function discussionDto(d: Discussion) {
  return {
    id: d.id,
    title: d.title,
    url: d.url,
    state: d.state,
    commentCount: d.commentCount,
    counts: { comments: d.commentCount },
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

export async function upsertDiscussion(
  ctx: RequestContext,
  id: string,
  input: UpsertDiscussionInput,
): Promise<{ discussion: Discussion; created: boolean }> {
  checkDiscussionId(id, "id");
  const parsed = UpsertInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const data = {
    ...(parsed.data.title !== undefined ? { title: parsed.data.title } : {}),
    ...(parsed.data.url !== undefined ? { url: parsed.data.url } : {}),
  };
  const tenantId = tenantIdOf(ctx);
  return writeTx(ctx.app, tenantId, async (tx) => {
    const rows = await tx.$queryRaw<{ created: boolean }[]>`
      INSERT INTO discussions (tenant_id, id, title, url, updated_at)
      VALUES (${tenantId}, ${id}, ${parsed.data.title ?? null}, ${parsed.data.url ?? null}, now())
      ON CONFLICT (tenant_id, id) DO NOTHING
      RETURNING true AS created`;
    const created = rows.length > 0;
    const discussion = created
      ? await tx.discussion.findUniqueOrThrow({ where: { tenantId_id: { tenantId, id } } })
      : await tx.discussion.update({ where: { tenantId_id: { tenantId, id } }, data });
    return { discussion, created };
  });
}

export async function getDiscussion(ctx: RequestContext, id: string): Promise<Discussion> {
  checkDiscussionId(id, "id");
  const d = await db(ctx).discussion.findUnique({ where: { tenantId_id: { tenantId: tenantIdOf(ctx), id } } });
  if (!d) throw errors.notFound("Discussion");
  return d;
}

export async function listDiscussions(
  ctx: RequestContext,
  args: { limit?: number | null; cursor?: string | null },
): Promise<Page<Discussion>> {
  return newestFirstPage(args, (q) => db(ctx).discussion.findMany(q));
}

/**
 * Locks the discussion row for the rest of the transaction. Every write that touches a discussion
 * takes this lock first, so writers of one discussion serialise in one order (no deadlocks) and the
 * event seq follows commit order.
 */
const DISCUSSION_COLUMNS = Prisma.sql`tenant_id AS "tenantId", id, title, url, state::text AS state, seq,
  comment_count AS "commentCount", created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function lockDiscussionRow(tx: ScopedTx, tenantId: string, id: string): Promise<Discussion | null> {
  // One statement on every write path: lock and read the row together.
  const rows = await tx.$queryRaw<Discussion[]>`
    SELECT ${DISCUSSION_COLUMNS} FROM discussions WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
  return rows[0] ?? null;
}

/** lockDiscussionRow for writes that create the discussion on first use (posting a comment). */
export async function createAndLockDiscussionRow(tx: ScopedTx, tenantId: string, id: string): Promise<Discussion> {
  // ON CONFLICT DO UPDATE locks the existing row like FOR UPDATE does; the no-op SET changes nothing.
  const rows = await tx.$queryRaw<Discussion[]>`
    INSERT INTO discussions (tenant_id, id, updated_at) VALUES (${tenantId}, ${id}, now())
    ON CONFLICT (tenant_id, id) DO UPDATE SET seq = discussions.seq
    RETURNING ${DISCUSSION_COLUMNS}`;
  return rows[0]!;
}

/** Archived discussions are read-only for good: no new content, moderation, deletion or state change (409). */
export function assertNotArchived(d: Discussion): void {
  if (d.state === "archived") throw errors.conflict("discussion_archived", "The discussion is archived and read-only.");
}

/** Refuses new content in locked or archived discussions (409). */
export function assertWritable(d: Discussion): void {
  assertNotArchived(d);
  if (d.state === "locked") throw errors.conflict("discussion_locked", "The discussion is locked.");
}

const TRANSITIONS: Record<"lock" | "unlock" | "archive", { to: Discussion["state"]; event: EventType }> = {
  lock: { to: "locked", event: "discussion_locked" },
  unlock: { to: "open", event: "discussion_unlocked" },
  archive: { to: "archived", event: "discussion_archived" },
};

export async function changeDiscussionState(
  ctx: RequestContext,
  id: string,
  action: "lock" | "unlock" | "archive",
): Promise<Discussion> {
  checkDiscussionId(id, "id");
  const tenantId = tenantIdOf(ctx);
  const t = TRANSITIONS[action];
  return writeTx(ctx.app, tenantId, async (tx, events) => {
    const d = await lockDiscussionRow(tx, tenantId, id);
    if (!d) throw errors.notFound("Discussion");
    assertNotArchived(d);
    if (d.state === t.to) return d; // idempotent: no change, no event
    const updated = await tx.discussion.update({ where: { tenantId_id: { tenantId, id } }, data: { state: t.to } });
    await events.append({ discussionId: id, type: t.event, data: { discussion: discussionDto(updated) } });
    return updated;
  });
}
