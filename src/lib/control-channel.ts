// A small cross-instance control channel over Redis pub/sub (auth-cache invalidation, stream
// ticket takeover): a message published on one instance reaches every instance, this one
// included. Without Redis there is one instance, and a message is delivered here only. On a Redis
// Cluster the channel is a sharded one (SPUBLISH / SSUBSCRIBE): it lives on the shard serving its
// slot, and losing that shard is losing the channel (src/lib/redis-subscriber.ts).
// Best effort, like any pub/sub: users must stay correct when a message is lost while the
// subscriber is down (`onListening(false)` tells them; auth drops its cache then).
import type { Logger } from "pino";
import { isCluster, type RedisClient, type RedisTarget } from "./redis-connection.js";
import { createSubscriber } from "./redis-subscriber.js";

export interface ControlChannel {
  publish(message: string): void;
  close(): void;
}

export function createControlChannel(opts: {
  channel: string;
  /** absent = this is the only instance */
  redis?: RedisTarget | undefined;
  /** the command connection, which publishes (a subscribed connection cannot) */
  publisher?: RedisClient | undefined;
  log: Logger;
  onMessage: (message: string) => void;
  /** true once subscribed (again), false when the subscription drops */
  onListening?: (listening: boolean) => void;
}): ControlChannel {
  const { channel, log } = opts;
  if (!opts.redis || !opts.publisher) {
    opts.onListening?.(true);
    return { publish: (m) => queueMicrotask(() => opts.onMessage(m)), close: () => undefined };
  }
  const publisher = opts.publisher;
  const sharded = isCluster(publisher);
  const listening = (now: boolean) => (channels: string[]) => {
    if (channels.includes(channel)) opts.onListening?.(now);
  };
  const sub = createSubscriber(opts.redis, {
    name: channel,
    // a subscription waits for Redis however long it is away (the first one too)
    redisOptions: { maxRetriesPerRequest: null },
    topology: publisher,
    onMessage: (ch, message) => {
      if (ch === channel) opts.onMessage(message);
    },
    onLost: listening(false),
    onRestored: listening(true),
    onError: (err) => log.warn({ err: err.message, channel }, "control channel error"),
  });
  const subscribe = (): void => {
    sub.subscribe(channel).then(
      () => opts.onListening?.(true),
      (err: unknown) => {
        if (closed) return;
        log.warn({ err, channel }, "control channel: could not subscribe; retrying");
        retry = setTimeout(subscribe, 1_000);
        retry.unref();
      },
    );
  };
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  subscribe();
  return {
    publish(message) {
      const sent = sharded ? publisher.spublish(channel, message) : publisher.publish(channel, message);
      sent.catch((err: unknown) => log.warn({ err, channel }, "control message not published"));
    },
    close: () => {
      closed = true;
      clearTimeout(retry);
      void sub.close();
    },
  };
}
