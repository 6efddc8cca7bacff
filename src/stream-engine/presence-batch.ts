// Presence writes of many discussions in few round trips (src/stream-engine/presence.ts). Presence
// coalesces a discussion's joins and leaves of one turn into one write; when streams of many
// discussions change in one turn (19,000 streams, each on a discussion of its own, dropped by a
// network blip or a proxy's restart, then their reconnect storm) that is still a write per
// discussion. Here the writes asked for in one turn go out together: in waves of at most WAVE_CALLS
// sync script calls, one wave at a time (the next waits for the answers of the one before, so the
// commands in flight, and the time Redis takes over them, stay bounded under ioredis' command
// timeout). On one Redis a wave is one pipeline; on a Redis Cluster it is one pipeline per
// discussion, sent at once (src/stream-engine/presence-store.ts `sync`).
//
// The order per discussion is Presence's: a discussion's next write is asked for only once its write
// before was answered (and a resync after a lost lease comes after the answer that told it), and the
// writes asked for go to Redis in the order asked, so Redis sees each discussion's writes in order.
import type { Person } from "./presence-people.js";
import { SYNC_BATCH, type PresenceStore, type SyncWrite } from "./presence-store.js";

/** How many persons one sync call of a coalesced write carries at most (the calls of a write go one after another). */
export const RECORD_CHUNK = 500;

/** How many sync script calls (of at most SYNC_BATCH persons each) one wave carries at most. */
export const WAVE_CALLS = 500;

/** The store's script calls for a write of `persons` persons. */
const callsOf = (persons: number) => Math.max(1, Math.ceil(persons / SYNC_BATCH));

interface Asked {
  write: SyncWrite;
  answer(lost: boolean): void;
  fail(err: unknown): void;
}

export class PresenceBatch {
  private readonly asked: Asked[] = [];
  private sending: NodeJS.Immediate | undefined;
  /** a wave is out: writes asked for meanwhile wait for its answers */
  private busy = false;

  constructor(private readonly store: PresenceStore) {}

  /**
   * This instance's count of each person to the discussion (`slots`), `drop`: and its lease given
   * back; written with the other writes asked for in this turn. Answers whether the lease it
   * thought it held was gone (src/stream-engine/presence-store.ts `sync`).
   */
  sync(slots: string, persons: readonly Pick<Person, "tag" | "cap" | "streams">[], leased: boolean, drop: boolean): Promise<boolean> {
    return new Promise<boolean>((answer, fail) => {
      this.asked.push({ write: { slots, persons, leased, drop }, answer, fail });
      if (!this.busy) this.sending ??= setImmediate(() => void this.send());
    });
  }

  /** The writes asked for, wave after wave, until none is left. Never rejects. */
  private async send(): Promise<void> {
    this.sending = undefined;
    this.busy = true;
    try {
      while (this.asked.length > 0) {
        let calls = 0;
        let n = 0;
        while (n < this.asked.length && (n === 0 || calls + callsOf(this.asked[n]!.write.persons.length) <= WAVE_CALLS))
          calls += callsOf(this.asked[n++]!.write.persons.length);
        const wave = this.asked.splice(0, n);
        try {
          const answers = await this.store.sync(wave.map((a) => a.write));
          wave.forEach((a, i) => {
            const answer = answers[i];
            if (typeof answer === "boolean") a.answer(answer);
            else a.fail(answer ?? new Error("presence: no answer"));
          });
        } catch (err) {
          for (const a of wave) a.fail(err);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
