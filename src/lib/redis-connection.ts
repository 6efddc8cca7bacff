// Every Redis connection the service opens is made here, for one Redis (`REDIS_URL`) or a Redis
// Cluster (`REDIS_CLUSTER_NODES`): an ioredis `Redis` or `Cluster`, which answer the same commands.
// Three kinds:
//   command     rate limits, stream caps, control messages: fails fast (500 ms per command, no
//               offline queue, two retries), so a stalled or lost Redis — or shard — makes its
//               users fall back in process instead of stalling requests
//   publisher   the event bus's publishes (not auto-pipelined); the bus bounds each publish itself
//   subscriber  one Redis (the URL, or one cluster node): SUBSCRIBE / SSUBSCRIBE, re-subscribed by
//               ioredis after a reconnect (src/lib/redis-subscriber.ts manages them)
// On a cluster every key a script or MULTI touches together shares a hash tag (src/lib/cluster-slot.ts).
import { Cluster, Redis, type ChainableCommander, type ClusterOptions, type RedisOptions } from "ioredis";

/** Where Redis is: one server, or some nodes of a cluster (the rest are discovered). */
export type RedisTarget = { readonly url: string } | { readonly clusterNodes: readonly string[] };

/** A command connection: one Redis or a cluster. */
export type RedisClient = Redis | Cluster;

/** The target the configuration names, if any. */
export function redisTargetOf(config: {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: readonly string[] | undefined;
}): RedisTarget | undefined {
  if (config.REDIS_CLUSTER_NODES?.length) return { clusterNodes: config.REDIS_CLUSTER_NODES };
  if (config.REDIS_URL) return { url: config.REDIS_URL };
  return undefined;
}

export const isCluster = (client: RedisClient): client is Cluster => client instanceof Cluster;

/** `host:port` (ioredis's node key; the last colon splits, so an IPv6 host keeps its own). */
export function nodeAddress(key: string): { host: string; port: number } {
  const at = key.lastIndexOf(":");
  if (at <= 0) throw new Error(`not a host:port: ${key}`);
  return { host: key.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(key.slice(at + 1)) };
}

/** Connection names (CLIENT SETNAME) take printable ASCII without spaces. */
export function clientName(name: string): string {
  return name.replace(/[^!-~]/g, "_") || "eng";
}

/**
 * Cluster behaviour shared by our cluster clients: few redirections and short retry delays, so a
 * command to a lost shard fails within about a second (its users fall back) instead of being
 * retried for seconds; the slot table is refreshed every 5 s and after every MOVED.
 */
const CLUSTER_DEFAULTS: ClusterOptions = {
  maxRedirections: 4,
  retryDelayOnFailover: 100,
  retryDelayOnClusterDown: 100,
  retryDelayOnTryAgain: 100,
  slotsRefreshInterval: 5_000,
};

function cluster(nodes: readonly string[], options: ClusterOptions): Cluster {
  return new Cluster(
    nodes.map((n) => nodeAddress(n)),
    { ...CLUSTER_DEFAULTS, ...options },
  );
}

/**
 * The instance's command connection. A stalled Redis must not stall requests: commands fail fast
 * and their users fall back (rate limits in process, stream caps per instance; src/auth/rate-limit.ts,
 * src/stream-engine/limits.ts). No auto-pipelining: the per-request commands are group-committed
 * per key by their users (src/lib/batcher.ts), and a pipeline per command costs more CPU than it saves.
 */
export function createCommandConnection(target: RedisTarget, opts: { name: string }): RedisClient {
  const failFast = { maxRetriesPerRequest: 2, commandTimeout: 500, connectionName: clientName(opts.name) };
  if ("clusterNodes" in target) {
    return cluster(target.clusterNodes, { enableOfflineQueue: false, redisOptions: failFast });
  }
  return new Redis(target.url, { ...failFast, lazyConnect: false, enableOfflineQueue: false });
}

/**
 * The event bus's publisher. No auto-pipelining either: a write's publishes come after its commit,
 * one connection's answer at a time, so a tick's pipeline held one command and cost a pipeline's
 * objects and promises for each (ioredis's own code was 43 µs of a post's 764 µs of main thread,
 * `npm run bench` post-hot, where the floor's plain publish costs it 6).
 */
export function createPublisherConnection(
  target: RedisTarget,
  opts: { name: string; redisOptions?: RedisOptions | undefined },
): RedisClient {
  const connectionName = clientName(opts.name);
  if ("clusterNodes" in target) {
    const { retryStrategy: _r, enableOfflineQueue: _q, ...nodeOptions } = opts.redisOptions ?? {};
    return cluster(target.clusterNodes, { redisOptions: { ...nodeOptions, connectionName } });
  }
  return new Redis(target.url, { ...opts.redisOptions, connectionName });
}

/**
 * A subscriber connection to one Redis: the URL's, or one cluster node (`host:port`). ioredis
 * reconnects it; src/lib/redis-subscriber.ts subscribes its channels again. No ready check and no CLIENT SETINFO:
 * ioredis writes a (S)SUBSCRIBE made while the connection is still being set up at once (those
 * commands are allowed while Redis loads), and the INFO or SETINFO it would send after it is refused
 * in subscriber mode, which fails the set-up and drops the connection (a shard's connection is
 * opened by the first subscription that needs it, so this is its common case).
 */
export function createSubscriberConnection(
  where: { readonly url: string } | { readonly node: string },
  opts: { name: string; redisOptions?: RedisOptions | undefined },
): Redis {
  const options: RedisOptions = {
    ...opts.redisOptions,
    connectionName: clientName(opts.name),
    // its channels are subscribed again by src/lib/redis-subscriber.ts, from its own record of them
    autoResubscribe: false,
    autoResendUnfulfilledCommands: true,
    enableReadyCheck: false,
    disableClientInfo: true,
  };
  return "url" in where ? new Redis(where.url, options) : new Redis({ ...options, ...nodeAddress(where.node) });
}

/** A cluster client for the slot table alone (which node serves which slot), when there is no other. */
export function createTopologyConnection(target: { readonly clusterNodes: readonly string[] }, opts: { name: string }): Cluster {
  return cluster(target.clusterNodes, { redisOptions: { connectionName: clientName(opts.name) } });
}

/** The masters that serve slots, by node key (`host:port`), from the client's slot table. */
export function mastersOf(client: Cluster): string[] {
  const keys = new Set<string>();
  for (const owners of client.slots) if (owners?.[0]) keys.add(owners[0]);
  return [...keys];
}

/**
 * Answers when every part of Redis answers a PING: the server, or every master that serves slots
 * (a cluster with a shard lost is down, as Redis is for the section-9 fallbacks).
 */
export async function pingAll(client: RedisClient): Promise<void> {
  if (!isCluster(client)) {
    await client.ping();
    return;
  }
  const masters = mastersOf(client);
  if (masters.length === 0) throw new Error("no slot table yet");
  const byKey = new Map(client.nodes("master").map((n) => [`${n.options.host}:${n.options.port}`, n]));
  await Promise.all(
    masters.map((key) => {
      const node = byKey.get(key);
      if (!node) return Promise.reject(new Error(`no connection to ${key}`));
      return node.ping();
    }),
  );
}

/** Disconnects gracefully (QUIT) when connected, else at once; never throws. */
export async function closeConnection(client: RedisClient, ms = 1_000): Promise<void> {
  if (client.status === "end") return;
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    const quit = client.quit().then(
      () => true,
      () => false,
    );
    const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const clean = await Promise.race([quit, gaveUp]);
    clearTimeout(timer);
    if (clean) return;
  }
  client.disconnect();
}

/**
 * Pipelines grouped by hash tag: one pipeline on one Redis; on a cluster one per tag, since a
 * cluster pipeline's keys must live on one node (keys that share a tag share a slot).
 */
export function pipelinesByTag(client: RedisClient): {
  for(tag: string): ChainableCommander;
  /** the pipelines, in the order their tags were first given */
  all(): ChainableCommander[];
  exec(): Promise<unknown>;
} {
  const one = isCluster(client) ? undefined : client.pipeline();
  const byTag = new Map<string, ChainableCommander>();
  return {
    for(tag) {
      if (one) return one;
      let p = byTag.get(tag);
      if (!p) byTag.set(tag, (p = client.pipeline()));
      return p;
    },
    all: () => (one ? [one] : [...byTag.values()]),
    exec: () => Promise.all(one ? [one.exec()] : [...byTag.values()].map((p) => p.exec())),
  };
}
