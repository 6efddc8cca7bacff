// What travels between instances for one committed event (streams turn it into a LiveEvent).
// The bus message carries the envelope and its audience, so a listener needs no database read;
// a message over MAX_INLINE_BYTES on the wire goes without them, and is read from the log by seq
// instead (serializeBusMessage, ./bus-shared.ts, decides as it serializes: one JSON.stringify).
import type { BusMessage } from "./bus.js";
import type { StoredEvent } from "./types.js";

export function busMessageOf(e: StoredEvent): BusMessage {
  return {
    tenantId: e.envelope.tenantId,
    discussionId: e.envelope.discussionId,
    seq: e.envelope.seq,
    eventId: e.envelope.id,
    envelope: e.envelope,
    audience: e.audience,
    readerId: e.readerId,
  };
}
