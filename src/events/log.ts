// The event log: appended in the same transaction as the change it describes. The discussion row's
// `seq` counter is incremented under its row lock, so seq order is commit order per discussion.
import type { ScopedTx } from "../db/tenant-scope.js";
import { uuid } from "../lib/ids.js";
import type { Audience, EventEnvelope, EventType, StoredEvent } from "./types.js";

export type Tx = ScopedTx;

export interface NewEvent {
  tenantId: string;
  discussionId: string;
  type: EventType;
  data: Record<string, unknown>;
  audience?: Audience;
  readerId?: string | null;
  occurredAt: Date;
}

export async function appendEvent(tx: Tx, e: NewEvent): Promise<StoredEvent> {
  const rows = await tx.$queryRaw<{ seq: number }[]>`
    UPDATE discussions SET seq = seq + 1 WHERE tenant_id = ${e.tenantId} AND id = ${e.discussionId} RETURNING seq`;
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new Error(`appendEvent: discussion ${e.tenantId}/${e.discussionId} does not exist`);
  const envelope: EventEnvelope = {
    id: uuid(),
    seq,
    type: e.type,
    tenantId: e.tenantId,
    discussionId: e.discussionId,
    occurredAt: e.occurredAt.toISOString(),
    data: e.data,
  };
  const audience = e.audience ?? "all";
  const readerId = e.readerId ?? null;
  await tx.$executeRaw`
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
    VALUES (${envelope.id}::uuid, ${e.tenantId}, ${e.discussionId}, ${seq}, ${e.type}, ${audience}, ${readerId},
            ${JSON.stringify(envelope)}::jsonb, ${e.occurredAt})`;
  return { envelope, audience, readerId };
}

export function storedEventFromRow(row: { payload: unknown; audience: string; readerId: string | null }): StoredEvent {
  return { envelope: row.payload as EventEnvelope, audience: row.audience as Audience, readerId: row.readerId };
}
