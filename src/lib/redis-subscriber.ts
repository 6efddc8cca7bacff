// Subscriptions to Redis channels, on one Redis (SUBSCRIBE on one connection) or on a Redis
// Cluster (sharded pub/sub: SSUBSCRIBE on a connection to the master serving the channel's slot, so
// a channel's messages live on one shard and never cross the cluster bus).
//
// A connection that drops loses the messages published meanwhile: `onLost` names the channels it
// carried. ioredis reconnects it; the channels it should carry are subscribed again here, from this
// module's own record of them, and once Redis acknowledged them they are live again and
// `onRestored` names them, so users catch up on what they missed. A re-subscription that fails is
// reported and tried again: at the next reconnect when the connection was refused again (its
// password no longer accepted, its user switched off), after a backoff when it stays up (a
// restarted cluster node not serving its slots yet). ioredis's own re-subscription is off: it remembers only what
// was acknowledged on the connection before, so one refused reconnect made it forget every channel,
// and it leaves the command's rejection unhandled (which ends the process). On a cluster each
// shard's connection does this on its own: losing one shard loses (and restores) only its channels.
//
// The cluster's slot table is the command client's (`topology`; ioredis refreshes it every 5 s and
// after a MOVED). When a slot moves to another master (a failover, a resharding), its channels are
// subscribed on the new one and reported restored, and a connection to a node that serves nothing
// any more is closed.
import type { Cluster, Redis, RedisOptions } from "ioredis";
import { keySlot } from "./cluster-slot.js";
import {
  closeConnection,
  createSubscriberConnection,
  createTopologyConnection,
  isCluster,
  mastersOf,
  type RedisClient,
  type RedisTarget,
} from "./redis-connection.js";

export interface RedisSubscriber {
  /** Resolves once Redis acknowledged the subscription (a message published after it arrives). */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(): Promise<void>;
}

export interface SubscriberOptions {
  /** CLIENT SETNAME of the subscriber connections */
  name: string;
  /** extra ioredis options of the subscriber connections */
  redisOptions?: RedisOptions | undefined;
  /** on a cluster: a client of it whose slot table says where channels live (else one is made) */
  topology?: RedisClient | undefined;
  onMessage(channel: string, message: string): void;
  /** a connection dropped: messages on these channels may be lost until they are restored */
  onLost?(channels: string[]): void;
  /** these channels are subscribed again (after a reconnect, or a move to another shard) */
  onRestored?(channels: string[]): void;
  onError?(err: Error): void;
}

export class SubscriberClosedError extends Error {
  constructor() {
    super("subscriber is closed");
    this.name = "SubscriberClosedError";
  }
}

/** A sharded subscription was answered with MOVED: the slot table was stale; the caller may retry. */
export class ChannelMovedError extends Error {
  constructor(channel: string) {
    super(`channel ${channel} moved to another shard; retry`);
    this.name = "ChannelMovedError";
  }
}

export function createSubscriber(target: RedisTarget, opts: SubscriberOptions): RedisSubscriber {
  if ("url" in target) return singleSubscriber(target.url, opts);
  const own = opts.topology && isCluster(opts.topology) ? undefined : createTopologyConnection(target, { name: `${opts.name}:slots` });
  own?.on("error", (err: Error) => opts.onError?.(err));
  const topology = own ?? (opts.topology as Cluster);
  const sub = shardedSubscriber(topology, opts);
  return {
    subscribe: sub.subscribe,
    unsubscribe: sub.unsubscribe,
    async close() {
      await sub.close();
      if (own) await closeConnection(own);
    },
  };
}

/** A re-subscription refused on a connection that stays up (a cluster node still joining) is tried again after this, doubling */
const RESUBSCRIBE_RETRY_MS = 100;
const RESUBSCRIBE_RETRY_MAX_MS = 2_000;

/**
 * Tracks one connection's losses and restorations: a `ready` after the connection was lost (not
 * the first one) subscribes its channels again (`resubscribe`; a PING when it carries none), and
 * its answer means they are live. Refused while the connection stays up, it is tried again after a
 * backoff; a connection lost again starts over at its next `ready`.
 */
function watchConnection(
  conn: Redis,
  channels: () => string[],
  resubscribe: (channels: string[]) => Promise<unknown>,
  opts: SubscriberOptions,
  closed: () => boolean,
): void {
  let everReady = false;
  let lost = false;
  let generation = 0;
  let retry: NodeJS.Timeout | undefined;
  const markLost = () => {
    if (!everReady || lost || closed()) return;
    lost = true;
    opts.onLost?.(channels());
  };
  const stale = (current: number) => closed() || current !== generation || conn.status !== "ready" || !lost;
  const restore = (current: number, waitMs: number) => {
    const again = channels();
    (again.length > 0 ? resubscribe(again) : conn.ping()).then(
      () => {
        if (stale(current)) return;
        lost = false;
        opts.onRestored?.(again);
      },
      (err: unknown) => {
        if (closed()) return;
        opts.onError?.(err instanceof Error ? err : new Error(String(err)));
        // lost again meanwhile: the next `ready` starts over
        if (stale(current)) return;
        retry = setTimeout(() => restore(current, Math.min(waitMs * 2, RESUBSCRIBE_RETRY_MAX_MS)), waitMs);
        retry.unref();
      },
    );
  };
  conn.on("close", markLost);
  conn.on("end", markLost);
  conn.on("reconnecting", markLost);
  conn.on("error", (err: Error) => opts.onError?.(err));
  conn.on("ready", () => {
    if (!everReady) {
      everReady = true;
      return;
    }
    if (!lost || closed()) return;
    clearTimeout(retry);
    restore(++generation, RESUBSCRIBE_RETRY_MS);
  });
}

function singleSubscriber(url: string, opts: SubscriberOptions): RedisSubscriber {
  let closed = false;
  const channels = new Set<string>();
  const conn = createSubscriberConnection({ url }, opts);
  conn.on("message", (channel: string, message: string) => opts.onMessage(channel, message));
  watchConnection(
    conn,
    () => [...channels],
    (again) => conn.subscribe(...again),
    opts,
    () => closed,
  );
  return {
    async subscribe(channel) {
      if (closed) throw new SubscriberClosedError();
      channels.add(channel);
      await conn.subscribe(channel);
    },
    async unsubscribe(channel) {
      if (closed) return;
      channels.delete(channel);
      await conn.unsubscribe(channel);
    },
    async close() {
      closed = true;
      channels.clear();
      await closeConnection(conn);
    },
  };
}

interface Shard {
  /** `host:port` of the master */
  key: string;
  conn: Redis;
  /** channels subscribed (or being subscribed) on this connection */
  channels: Set<string>;
  /** rejections of the SSUBSCRIBEs in flight: ioredis leaves one answered with MOVED unsettled */
  pending: Set<(err: Error) => void>;
}

function shardedSubscriber(topology: Cluster, opts: SubscriberOptions): RedisSubscriber {
  let closed = false;
  const shards = new Map<string, Shard>();
  /** each channel's shard and slot */
  const home = new Map<string, { shard: Shard; slot: number }>();

  function shardOf(key: string): Shard {
    let s = shards.get(key);
    if (s) return s;
    const conn = createSubscriberConnection({ node: key }, opts);
    // A slot that moved away: the node drops its channels with an SUNSUBSCRIBE nobody asked for,
    // which ioredis reports as an error. Refresh the slot table: rehome() subscribes them anew.
    const shardOpts: SubscriberOptions = {
      ...opts,
      onError: (err) => {
        if (/Last reply: sunsubscribe/.test(err.message)) topology.refreshSlotsCache();
        else opts.onError?.(err);
      },
    };
    const shard: Shard = { key, conn, channels: new Set(), pending: new Set() };
    conn.on("smessage", (channel: string, message: string) => opts.onMessage(channel, message));
    conn.on("moved", () => {
      for (const reject of [...shard.pending]) reject(new ChannelMovedError(key));
      topology.refreshSlotsCache();
    });
    watchConnection(
      conn,
      () => [...shard.channels],
      (again) => ssubscribeAll(shard, again),
      shardOpts,
      () => closed,
    );
    shards.set(key, (s = shard));
    return s;
  }

  /** Settles with the command, or rejects when the connection reports a MOVED meanwhile. */
  function unlessMoved<T>(shard: Shard, command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onMoved = (err: Error) => {
        shard.pending.delete(onMoved);
        reject(err);
      };
      shard.pending.add(onMoved);
      command.then(
        (v) => {
          shard.pending.delete(onMoved);
          resolve(v);
        },
        (err: unknown) => {
          shard.pending.delete(onMoved);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /** SSUBSCRIBEs on one shard's connection: one command a slot (Redis refuses channels of several slots in one, CROSSSLOT). */
  function ssubscribeAll(shard: Shard, channels: string[]): Promise<unknown> {
    const bySlot = new Map<number, string[]>();
    for (const c of channels) {
      const slot = keySlot(c);
      const same = bySlot.get(slot);
      if (same) same.push(c);
      else bySlot.set(slot, [c]);
    }
    return Promise.all([...bySlot.values()].map((same) => unlessMoved(shard, shard.conn.ssubscribe(...same))));
  }

  /** The master serving the slot; waits for the slot table while the cluster client has none. */
  async function ownerOf(slot: number): Promise<string> {
    for (;;) {
      if (closed) throw new SubscriberClosedError();
      const key = topology.slots[slot]?.[0];
      if (key) return key;
      await slotTableChange();
    }
  }

  /** The next slot-table refresh (or 250 ms), one wait shared by every subscription waiting for it. */
  let slotsWait: Promise<void> | undefined;
  function slotTableChange(): Promise<void> {
    slotsWait ??= new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        topology.off("refresh", done);
        slotsWait = undefined;
        resolve();
      };
      const timer = setTimeout(done, 250);
      topology.once("refresh", done);
    });
    return slotsWait;
  }

  /** After a slot-table refresh: channels whose slot another master serves now move there. */
  function rehome(): void {
    if (closed) return;
    const moved = new Map<Shard, string[]>();
    for (const [channel, at] of home) {
      const key = topology.slots[at.slot]?.[0];
      if (!key || key === at.shard.key) continue;
      at.shard.channels.delete(channel);
      if (at.shard.conn.status === "ready") at.shard.conn.sunsubscribe(channel).catch(() => undefined);
      const to = shardOf(key);
      to.channels.add(channel);
      home.set(channel, { shard: to, slot: at.slot });
      const going = moved.get(to);
      if (going) going.push(channel);
      else moved.set(to, [channel]);
    }
    for (const [to, channels] of moved) {
      ssubscribeAll(to, channels).then(
        () => {
          if (!closed) opts.onRestored?.(channels.filter((c) => home.get(c)?.shard === to));
        },
        (err: unknown) => opts.onError?.(err instanceof Error ? err : new Error(String(err))),
      );
    }
    // a connection to a node that serves no slot any more and carries nothing goes
    const masters = new Set(mastersOf(topology));
    for (const [key, s] of shards) {
      if (s.channels.size > 0 || masters.has(key)) continue;
      shards.delete(key);
      s.conn.disconnect();
    }
  }
  topology.on("refresh", rehome);

  return {
    async subscribe(channel) {
      if (closed) throw new SubscriberClosedError();
      const slot = keySlot(channel);
      const shard = shardOf(await ownerOf(slot));
      const before = home.get(channel);
      if (before && before.shard !== shard) {
        before.shard.channels.delete(channel);
        if (before.shard.conn.status === "ready") before.shard.conn.sunsubscribe(channel).catch(() => undefined);
      }
      home.set(channel, { shard, slot });
      shard.channels.add(channel);
      await unlessMoved(shard, shard.conn.ssubscribe(channel));
    },
    async unsubscribe(channel) {
      if (closed) return;
      const at = home.get(channel);
      if (!at) return;
      home.delete(channel);
      at.shard.channels.delete(channel);
      await unlessMoved(at.shard, at.shard.conn.sunsubscribe(channel));
    },
    async close() {
      if (closed) return;
      closed = true;
      topology.off("refresh", rehome);
      home.clear();
      const all = [...shards.values()];
      shards.clear();
      await Promise.all(all.map((s) => closeConnection(s.conn)));
    },
  };
}
