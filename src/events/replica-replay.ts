// Stream replay (a reconnect's Last-Event-ID, contract section 26) from a read replica when it has
// every requested event, else from the primary: never a gap. A discussion's events are numbered under
// its row's lock and commit in that order, so a replica shows them as a prefix: it has the whole range
// (after, head] exactly when it has `head` itself (the head comes from the primary or the bus). The
// replica's answer is checked for that; a replica behind it, or failing, leaves the read to the primary.
import type { ReplicaSet } from "../db/replicas/replica-set.js";
import { isRead, replayRead, type EventLogReader } from "./replay.js";

export function replicaFirstReplays(
  reader: EventLogReader,
  replicas: Pick<ReplicaSet, "size" | "pick">,
  served?: (by: "replica" | "primary") => void,
): EventLogReader {
  if (replicas.size === 0) return reader;
  return {
    ...reader,
    async replay(key, after, head, window, now) {
      const read = replayRead(key, after, head, window, now);
      if (!isRead(read)) return read;
      const replica = replicas.pick(null);
      if (replica) {
        const rows = await replica.sql.query<Record<string, unknown>>(read.text, read.values, read.name).catch(() => null);
        if (rows && rows.length > 0 && rows[rows.length - 1]!.seq === head) {
          served?.("replica");
          return read.result(rows);
        }
      }
      served?.("primary");
      return reader.replay(key, after, head, window, now);
    },
  };
}
