// A small cross-instance control channel over Redis pub/sub (auth-cache invalidation, stream
// ticket takeover): a message published on one instance reaches every instance, this one
// included. Without Redis there is one instance, and a message is delivered here only. On a Redis
// Cluster the channel is a sharded one (SPUBLISH / SSUBSCRIBE): it lives on the shard serving its
// slot, and losing that shard is losing the channel (src/lib/redis-subscriber.ts).
// Best effort, like any pub/sub: users must stay correct when a message is lost while the
// subscriber is down (`onListening(false)` tells them; auth drops its cache then). The command
// connection keeps no offline queue (it fails fast when Redis is away), so a message published while
// it is still connecting — an instance just started, whose first requests supersede a stream held
// elsewhere — waits for it to be ready (at most PUBLISH_WAIT_MS) instead of being refused.
import type { Logger } from "pino";
import { isCluster, type RedisClient, type RedisTarget } from "./redis-connection.js";
import { createSubscriber } from "./redis-subscriber.js";

/** How long a message published before the command connection is ready waits for it. */
export const PUBLISH_WAIT_MS = 5_000;

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
  /** the connection's readiness while messages wait for it */
  let waiting: Promise<void> | undefined;
  subscribe();
  return {
    publish(message) {
      const send = () => (sharded ? publisher.spublish(channel, message) : publisher.publish(channel, message));
      // one wait for every message of a burst (a new instance's reconnect storm), not a listener each
      if (publisher.status !== "ready") waiting ??= readyWithin(publisher, PUBLISH_WAIT_MS).finally(() => (waiting = undefined));
      const sent = waiting ? waiting.then(send) : send();
      sent.catch((err: unknown) => log.warn({ err, channel }, "control message not published"));
    },
    close: () => {
      closed = true;
      clearTimeout(retry);
      void sub.close();
    },
  };
}

/** Resolves when the connection is ready, or rejects after `ms` (or when it ends). */
function readyWithin(client: RedisClient, ms: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off("ready", onReady);
      client.off("end", onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error("the connection ended"));
    const timer = setTimeout(() => done(new Error(`not ready within ${ms} ms`)), ms);
    timer.unref();
    client.on("ready", onReady);
    client.on("end", onEnd);
  });
}
