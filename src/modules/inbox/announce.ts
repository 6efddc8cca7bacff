// THE call for any writer of inbox items (contract section 19): after the transaction that wrote items
// for some readers has committed, announce them, and each reader's own streams (GET
// /api/v1/stream/me, the myInbox subscription) on every instance read their new items from the
// database by seq (src/stream-engine/reader-stream.ts). Best effort and cheap (one bus message per
// reader, no data): a lost announcement is caught up by the streams' periodic check of the readers'
// inbox sequences. Replies need no call: their notification_reply event announces them
// (src/events/pipeline.ts). Calling it for a reader without new items costs their streams one read.
import type { AppServices } from "../../context/services.js";

export function announceInboxItems(app: Pick<AppServices, "events">, tenantId: string, readerIds: Iterable<string>): void {
  app.events.inboxItems(tenantId, readerIds);
}
