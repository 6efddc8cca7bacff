// What travels between instances for one committed event (streams turn it into a LiveEvent).
// The bus message carries the envelope and its audience, so a listener needs no database read;
// an envelope over MAX_INLINE_BYTES is left out and read from the log by seq instead.
import type { BusMessage } from "./bus.js";
import type { StoredEvent } from "./types.js";

export const MAX_INLINE_BYTES = 256 * 1024;

export function busMessageOf(e: StoredEvent): BusMessage {
  const msg: BusMessage = {
    tenantId: e.envelope.tenantId,
    discussionId: e.envelope.discussionId,
    seq: e.envelope.seq,
    eventId: e.envelope.id,
  };
  const json = JSON.stringify(e.envelope);
  if (json.length <= MAX_INLINE_BYTES) {
    msg.envelope = e.envelope;
    msg.audience = e.audience;
    msg.readerId = e.readerId;
  }
  return msg;
}
