/**
 * Redis pub/sub bus: one channel per tenant AND discussion, `${prefix}:ev:${tenant}:${discussion}`
 * (ids URI-encoded, so `:` in an id cannot make two channels collide, nor `{` make a hash tag), and
 * one per tenant AND reader for reader pokes (their own stream), `${prefix}:rd:${tenant}:${reader}`,
 * sharded the same way on a cluster.
 *
 * Two connections: one publishes, one subscribes. On a Redis Cluster the channels are sharded
 * (SPUBLISH / SSUBSCRIBE): a discussion's channel lives on the shard serving its slot (no hash tag:
 * one tenant's discussions spread over the shards), the publisher is a cluster client and the
 * subscriber a connection per shard that carries channels (src/lib/redis-subscriber.ts).
 *
 * Local listeners are reference-counted per channel: the first one SUBSCRIBEs, the last one
 * leaving UNSUBSCRIBEs. Redis commands for one channel are serialized by a reconcile loop that
 * drives the Redis state ("subscribed or not") toward the local state ("has listeners or not") one
 * acknowledged command at a time, so any interleaving of subscribe/unsubscribe calls ends with
 * exactly one Redis subscription when there are listeners and none when there are not.
 *
 * On a lost subscriber connection (on a cluster: one shard's) ioredis reconnects and re-subscribes
 * by itself (`autoResubscribe`); once the re-subscriptions are acknowledged the bus fires
 * `onReconnect`.
 */
import { randomBytes } from "node:crypto";
import type { RedisOptions } from "ioredis";
import { clientName, closeConnection, createPublisherConnection, isCluster, type RedisTarget } from "../lib/redis-connection.js";
import { ChannelMovedError, createSubscriber } from "../lib/redis-subscriber.js";
import {
  BusClosedError,
  dispatchSafely,
  parseBusMessage,
  parseReaderPoke,
  serializeBusMessage,
  serializeReaderPoke,
  toError,
  type EventBus,
} from "./bus-shared.js";

export type RedisBusOptions = ({ url: string } | { clusterNodes: readonly string[] }) & RedisBusSettings;

export interface RedisBusSettings {
  /** Namespace of the channels. Default "eng". */
  channelPrefix?: string;
  /**
   * Base of the Redis client names (CLIENT SETNAME): the connections are `${name}:pub` and
   * `${name}:sub`. Default `${channelPrefix}-bus-${pid}-${random}`.
   */
  connectionName?: string;
  /**
   * Upper bound in ms for `publish()` and for `subscribe()` to become live, so a Redis outage
   * surfaces as an error (503) instead of a hang. Default 5000; 0 = no bound.
   */
  operationTimeoutMs?: number;
  /** Connection errors, listener errors, malformed messages. Default: console.error. */
  onError?: (err: Error) => void;
  /** Extra ioredis options for both connections (e.g. `retryStrategy`; on a cluster, for its nodes). */
  redisOptions?: RedisOptions;
}

export interface RedisEventBus extends EventBus {
  /** The CLIENT SETNAME names of the two connections. */
  readonly connectionNames: { readonly publisher: string; readonly subscriber: string };
  /** Channel name used for a discussion (exposed for diagnostics and tests). */
  channelFor(tenantId: string, discussionId: string): string;
  /** Channel name used for a reader's pokes. */
  readerChannelFor(tenantId: string, readerId: string): string;
}

/** Redis refused or dropped a subscription (e.g. a shard's connection gave up): the bus is down for it. */
export class BusUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`event bus: the subscription failed (${toError(cause).message})`, { cause });
    this.name = "BusUnavailableError";
  }
}

/** A channel's slot moved while its SSUBSCRIBE was in flight: retried this often (the slot table is refreshed meanwhile). */
const MOVED_RETRIES = 20;
const MOVED_RETRY_MS = 100;

export class BusTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`event bus: ${what} did not complete within ${ms} ms`);
    this.name = "BusTimeoutError";
  }
}

interface Registration {
  listener: (msg: never) => void;
}

/** A message off the wire, checked against its channel: null (reported) when malformed or misrouted. */
type Decode = (raw: string, channel: string) => unknown;

interface ChannelState {
  regs: Set<Registration>;
  decode: Decode;
  /** Redis acknowledged SUBSCRIBE and no UNSUBSCRIBE since. */
  subscribed: boolean;
  /** The running reconcile loop, if any. */
  sync: Promise<void> | null;
}

const DEFAULT_TIMEOUT_MS = 5000;

export function createRedisBus(opts: RedisBusOptions): RedisEventBus {
  const prefix = opts.channelPrefix ?? "eng";
  const timeoutMs = opts.operationTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const onError = opts.onError ?? ((err: Error) => console.error("[event-bus]", err));
  const report = (err: unknown) => {
    try {
      onError(toError(err));
    } catch {
      // a throwing reporter must not break the bus
    }
  };
  const baseName = clientName(opts.connectionName ?? `${prefix}-bus-${process.pid}-${randomBytes(4).toString("hex")}`);
  const connectionNames = { publisher: `${baseName}:pub`, subscriber: `${baseName}:sub` } as const;

  const target: RedisTarget = "url" in opts ? { url: opts.url } : { clusterNodes: opts.clusterNodes };
  const pub = createPublisherConnection(target, { name: connectionNames.publisher, redisOptions: opts.redisOptions });
  pub.on("error", report);
  const sharded = isCluster(pub);

  const channels = new Map<string, ChannelState>();
  const reconnectListeners = new Set<() => void>();
  let closed = false;

  const channelFor = (tenantId: string, discussionId: string) =>
    `${prefix}:ev:${encodeURIComponent(tenantId)}:${encodeURIComponent(discussionId)}`;

  const readerChannelFor = (tenantId: string, readerId: string) =>
    `${prefix}:rd:${encodeURIComponent(tenantId)}:${encodeURIComponent(readerId)}`;

  const decodeEvent: Decode = (raw, channel) => {
    const msg = parseBusMessage(raw);
    if (!msg) return (report(new Error(`event bus: malformed message on ${channel}`)), null);
    if (channelFor(msg.tenantId, msg.discussionId) !== channel) {
      return (report(new Error(`event bus: message for another discussion on ${channel}`)), null);
    }
    return msg;
  };
  const decodePoke: Decode = (raw, channel) => {
    const poke = parseReaderPoke(raw);
    if (!poke || readerChannelFor(poke.tenantId, poke.readerId) !== channel) {
      return (report(new Error(`event bus: malformed or misrouted reader poke on ${channel}`)), null);
    }
    return poke;
  };

  const onMessage = (channel: string, raw: string) => {
    const st = channels.get(channel);
    if (!st || st.regs.size === 0) return;
    const msg = st.decode(raw, channel);
    if (msg === null) return;
    dispatchSafely(
      [...st.regs].map((r) => r.listener as (m: unknown) => void),
      msg,
      report,
    );
  };

  // Subscriptions live again after a lost connection (or moved to another shard): every channel
  // is reconciled, and the listeners catch up from the log.
  const onRestored = () => {
    if (closed) return;
    for (const [channel, st] of channels) reconcile(channel, st).catch(report);
    for (const listener of [...reconnectListeners]) {
      try {
        listener();
      } catch (err) {
        report(err);
      }
    }
  };

  const sub = createSubscriber(target, {
    name: connectionNames.subscriber,
    redisOptions: opts.redisOptions,
    topology: pub,
    onMessage,
    onRestored,
    onError: report,
  });

  function forget(channel: string, st: ChannelState) {
    if (st.regs.size === 0 && !st.subscribed && !st.sync && channels.get(channel) === st) channels.delete(channel);
  }

  /** SSUBSCRIBE answered with MOVED (a slot changed hands): again, on the master the refreshed table names. */
  async function subscribeFollowingMoves(channel: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await sub.subscribe(channel);
        return;
      } catch (err) {
        if (!(err instanceof ChannelMovedError) || attempt >= MOVED_RETRIES || closed) throw err;
        await new Promise((resolve) => setTimeout(resolve, MOVED_RETRY_MS));
      }
    }
  }

  /** Drives Redis toward "subscribed iff there are local listeners"; one loop per channel. */
  function reconcile(channel: string, st: ChannelState): Promise<void> {
    if (st.sync) return st.sync; // the running loop re-reads the wanted state after each command
    if (closed || st.regs.size > 0 === st.subscribed) {
      forget(channel, st);
      return Promise.resolve();
    }
    const loop = (async () => {
      try {
        while (!closed) {
          const want = st.regs.size > 0;
          if (want === st.subscribed) return;
          if (want) {
            await subscribeFollowingMoves(channel);
            st.subscribed = true;
          } else {
            await sub.unsubscribe(channel);
            st.subscribed = false;
          }
        }
      } finally {
        st.sync = null;
        forget(channel, st);
      }
    })();
    st.sync = loop;
    return loop;
  }

  async function send(channel: string, payload: string): Promise<void> {
    await withTimeout(sharded ? pub.spublish(channel, payload) : pub.publish(channel, payload), timeoutMs, "publish");
  }

  async function listen(channel: string, decode: Decode, listener: (msg: never) => void): Promise<() => Promise<void>> {
    if (typeof listener !== "function") throw new TypeError("listener must be a function");
    let st = channels.get(channel);
    if (!st) {
      st = { regs: new Set(), decode, subscribed: false, sync: null };
      channels.set(channel, st);
    }
    const state = st;
    const reg: Registration = { listener };
    state.regs.add(reg);
    try {
      await withTimeout(reconcile(channel, state), timeoutMs, "subscribe");
      if (closed) throw new BusClosedError();
    } catch (err) {
      // Leave no trace: the loop (still running, or a new one) UNSUBSCRIBEs if we were the last.
      state.regs.delete(reg);
      reconcile(channel, state).catch(report);
      throw err instanceof BusTimeoutError || err instanceof BusClosedError ? err : new BusUnavailableError(err);
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      state.regs.delete(reg);
      if (closed) return;
      try {
        await reconcile(channel, state);
      } catch (err) {
        // Still subscribed in Redis (harmless: no listener gets it); fixed after the reconnect.
        if (!closed) report(err);
      }
    };
  }

  return {
    connectionNames,
    channelFor,

    readerChannelFor,

    async publish(msg) {
      if (closed) throw new BusClosedError();
      await send(channelFor(msg.tenantId, msg.discussionId), serializeBusMessage(msg));
    },

    async subscribe(tenantId, discussionId, listener) {
      if (closed) throw new BusClosedError();
      return listen(channelFor(tenantId, discussionId), decodeEvent, listener);
    },

    async pokeReader(poke) {
      if (closed) throw new BusClosedError();
      await send(readerChannelFor(poke.tenantId, poke.readerId), serializeReaderPoke(poke));
    },

    async subscribeReader(tenantId, readerId, listener) {
      if (closed) throw new BusClosedError();
      return listen(readerChannelFor(tenantId, readerId), decodePoke, listener);
    },

    onReconnect(listener) {
      reconnectListeners.add(listener);
      return () => {
        reconnectListeners.delete(listener);
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      reconnectListeners.clear();
      channels.clear();
      await Promise.allSettled([closeConnection(pub), sub.close()]);
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BusTimeoutError(what, ms)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(toError(err));
      },
    );
  });
}
