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
import type { RedisTarget } from "../lib/redis-connection.js";

export type { BusListener, BusMessage, EventBus, ReaderPoke, ReaderPokeListener } from "./bus-shared.js";
export { BusClosedError } from "./bus-shared.js";
export { createMemoryBus } from "./bus-memory.js";
export { createRedisBus } from "./bus-redis.js";
export type { MemoryBusOptions } from "./bus-memory.js";
export { BusTimeoutError, BusUnavailableError } from "./bus-redis.js";
export type { RedisBusOptions, RedisBusSettings, RedisEventBus } from "./bus-redis.js";

export interface CreateBusOptions {
  /** Where Redis is (src/lib/redis-connection.ts); unset = in-process bus (single instance only). */
  redis?: RedisTarget | undefined;
  /** shorthand for `redis: { url }` */
  redisUrl?: string;
  channelPrefix?: string;
  onError?: (err: Error) => void;
}

export function createBus(opts: CreateBusOptions = {}): EventBus {
  const target = opts.redis ?? (opts.redisUrl ? { url: opts.redisUrl } : undefined);
  if (target) return createRedisBus({ ...target, channelPrefix: opts.channelPrefix, onError: opts.onError });
  return createMemoryBus({ onError: opts.onError });
}
