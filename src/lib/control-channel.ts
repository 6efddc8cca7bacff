// A small cross-instance control channel over Redis pub/sub (auth-cache invalidation, stream
// ticket takeover): a message published on one instance reaches every instance, this one
// included. Without Redis there is one instance, and a message is delivered here only.
// Best effort, like any pub/sub: users must stay correct when a message is lost while the
// subscriber is down (`onListening(false)` tells them; auth drops its cache then).
import { Redis } from "ioredis";
import type { Logger } from "pino";

export interface ControlChannel {
  publish(message: string): void;
  close(): void;
}

export function createControlChannel(opts: {
  channel: string;
  /** absent = this is the only instance */
  redisUrl?: string | undefined;
  /** the command connection, which publishes (a subscribed connection cannot) */
  publisher?: Redis | undefined;
  log: Logger;
  onMessage: (message: string) => void;
  /** true once subscribed (again), false when the subscription drops */
  onListening?: (listening: boolean) => void;
}): ControlChannel {
  const { channel, log } = opts;
  if (!opts.redisUrl || !opts.publisher) {
    opts.onListening?.(true);
    return { publish: (m) => queueMicrotask(() => opts.onMessage(m)), close: () => undefined };
  }
  const publisher = opts.publisher;
  const sub = new Redis(opts.redisUrl, { connectionName: channel, maxRetriesPerRequest: null });
  sub.on("error", (err: Error) => log.warn({ err: err.message, channel }, "control channel error"));
  sub.on("ready", () => {
    sub.subscribe(channel).then(
      () => opts.onListening?.(true),
      (err: unknown) => log.warn({ err, channel }, "control channel: could not subscribe"),
    );
  });
  sub.on("close", () => opts.onListening?.(false));
  sub.on("message", (_channel: string, message: string) => opts.onMessage(message));
  return {
    publish(message) {
      publisher.publish(channel, message).catch((err: unknown) => log.warn({ err, channel }, "control message not published"));
    },
    close: () => sub.disconnect(),
  };
}
