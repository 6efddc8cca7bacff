/**
 * Cross-instance notification bus for domain events.
 *
 * The event log (database) is the source of truth; the bus only tells the instances that
 * hold stream connections for a discussion that something new committed there. Delivery is
 * at-most-once and best effort: a message can be lost while a Redis connection is down (the
 * bus then fires `onReconnect`, and listeners catch up from the log) and, around a reconnect,
 * a listener may see a message for an event it already read from the log. Listeners therefore
 * dedupe by `seq` (ignore `seq <= last seq sent`).
 */
import { createMemoryBus } from "./bus-memory.js";
import { createRedisBus } from "./bus-redis.js";
import type { EventBus } from "./bus-shared.js";

export type { BusListener, BusMessage, EventBus } from "./bus-shared.js";
export { BusClosedError } from "./bus-shared.js";
export { createMemoryBus } from "./bus-memory.js";
export { createRedisBus } from "./bus-redis.js";
export type { MemoryBusOptions } from "./bus-memory.js";
export { BusTimeoutError } from "./bus-redis.js";
export type { RedisBusOptions, RedisEventBus } from "./bus-redis.js";

export interface CreateBusOptions {
  /** Unset = in-process bus (single instance only), as with `REDIS_URL` unset. */
  redisUrl?: string;
  channelPrefix?: string;
  onError?: (err: Error) => void;
}

export function createBus(opts: CreateBusOptions = {}): EventBus {
  if (opts.redisUrl) {
    return createRedisBus({ url: opts.redisUrl, channelPrefix: opts.channelPrefix, onError: opts.onError });
  }
  return createMemoryBus({ onError: opts.onError });
}
