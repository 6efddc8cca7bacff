// Presence notices between instances (src/stream-engine/presence.ts): "the presence of these
// discussions changed, count them again", on the control channel `eng:presence`. The notices asked
// for in one turn of the event loop (the discussions whose writes one wave answered, the last
// streams of many discussions closing together) go out as one message: their keys joined by a
// newline, at most NOTICE_KEYS a message. A key (presenceKey: tenant and discussion URI-encoded)
// never holds a newline, and a message of one key is that key alone: exactly the notice the
// version before sent, one PUBLISH per discussion, which a receiver here reads as a list of one.
// (An instance of that version reads a message of several keys as one unknown key and ignores it;
// its refresh, which compares each count with the one it sent, tells its streams within
// `presenceRefreshMs`: only during a deploy that mixes the two.)
import type { Logger } from "pino";
import { createControlChannel, type ControlChannel } from "../lib/control-channel.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";

/** Where instances tell each other that a discussion's presence changed. */
export const PRESENCE_CHANNEL = "eng:presence";

/** How many discussions' keys one notice carries at most (a burst over many discussions is a few messages). */
export const NOTICE_KEYS = 500;

/** The discussions' keys a notice names (a message of the version before names one). */
export const noticedKeys = (message: string): string[] => message.split("\n").filter(Boolean);

export class PresenceNotices {
  private readonly channel: ControlChannel;
  /** keys to announce, published together at `sending` */
  private readonly due = new Set<string>();
  private sending: NodeJS.Immediate | undefined;

  constructor(
    o: { redis: RedisClient | undefined; redisTarget: RedisTarget | undefined; log: Logger },
    /** a notice for a discussion's key arrived (from any instance, this one included) */
    onNotice: (key: string) => void,
  ) {
    this.channel = createControlChannel({
      channel: PRESENCE_CHANNEL,
      redis: o.redis ? o.redisTarget : undefined,
      publisher: o.redis,
      log: o.log,
      onMessage: (message) => {
        for (const key of noticedKeys(message)) onNotice(key);
      },
    });
  }

  /** Tells every instance that the discussion's presence changed: with the other notices of this turn. */
  notify(key: string): void {
    this.due.add(key);
    this.sending ??= setImmediate(() => this.send());
  }

  private send(): void {
    this.sending = undefined;
    const keys = [...this.due];
    this.due.clear();
    for (let k = 0; k < keys.length; k += NOTICE_KEYS) this.channel.publish(keys.slice(k, k + NOTICE_KEYS).join("\n"));
  }

  /** Sends what is due, and stops listening. */
  close(): void {
    clearImmediate(this.sending);
    this.send();
    this.channel.close();
  }
}
