// The federation of one instance, built once by the composition root (src/runtime.ts): Fedify's
// federation (federation.ts) over our KvStore (kv-store.ts) and guarded loader, the actors' keys
// (keys.ts, shared with the delivery composer), the outbound queue's side (delivery.ts) and the queue
// of inbound activities (inbound.ts). What is sent is made by the outbound worker from the queue's
// jobs (outbound.ts), in the federation's context(); the engine's own loop, started with the other
// workers (src/workers.ts), only sweeps Fedify's expired state.
import type { Context, DocumentLoader, Federation, KvStore } from "@fedify/fedify";
import type { AppServices } from "../../../context/request.js";
import { createKeyLimiter } from "../../../auth/sign-in-throttle.js";
import { signInKeyPrefix } from "../../../auth/sign-in-throttle.js";
import type { RedisClient } from "../../../lib/redis-connection.js";
import { pollLoop } from "../../../lib/poll-loop.js";
import type { FederationData } from "./context.js";
import { createKvStore } from "./kv-store.js";
import type { KeyStore } from "./keys.js";
import { createOutboundQueue } from "./delivery.js";
import { createInboundQueue, type InboundQueue } from "./inbound.js";
import { buildFederation, FEDERATION_USER_AGENT } from "./federation.js";
import { createDocumentLoader } from "./document-loader.js";
import { createKeyMemory, type KeyMemory } from "./signer.js";
import { federationServed, pathPrefixOf } from "../paths.js";

/** Inbound activities a remote domain may send per minute, across the server's inboxes (counted once their signature verified). */
export const INBOX_PER_DOMAIN_PER_MINUTE = 600;
/**
 * Inbound activities without a valid signature one client address may send per minute (unsigned, or
 * refused by Fedify): past it, that address's activities are refused before verification. Counted by
 * address, not by the domain they claim, so that a forger's flood spends nothing of the domain's own.
 */
export const INBOX_FORGED_PER_ADDRESS_PER_MINUTE = 60;
/** A remote document's fetch time limit. */
const FETCH_TIMEOUT_MS = 5_000;

export interface FederationEngineOptions {
  /** the pause between sweeps of Fedify's expired state (tests shorten it) */
  pollMs?: number;
  /** inbound activities per remote domain and minute (default INBOX_PER_DOMAIN_PER_MINUTE; tests lower it) */
  inboxPerDomainPerMinute?: number;
  /** forged inbound activities per client address and minute (default INBOX_FORGED_PER_ADDRESS_PER_MINUTE; tests lower it) */
  inboxForgedPerAddressPerMinute?: number;
}

export interface FederationEngine {
  readonly federation: Federation<FederationData>;
  readonly data: FederationData;
  /** the guarded loader of remote documents (actors, keys) Fedify uses, and the inbox's signature check */
  readonly loader: DocumentLoader;
  /** Fedify's state in our database (kv-store.ts): the keys the inbox's signature check fetched too */
  readonly kv: KvStore;
  /** the keys the inbox verified with lately, parsed (signer.ts) */
  readonly keyMemory: KeyMemory;
  /** where the inbox stores the activities it verified, for the worker to apply (inbound.ts) */
  readonly inbound: InboundQueue;
  /** PUBLIC_URL, else the server's own address once started (never in production: `available`) */
  origin(): URL | null;
  /**
   * Whether the federation is served at all: ids are built on PUBLIC_URL, so in production
   * (NODE_ENV=production) an instance without it serves no federation route and announces nothing
   * (contract section 28); elsewhere the server's own address stands in for it (development, tests).
   */
  readonly available: boolean;
  /** PUBLIC_URL's path ("" at the host's root), in front of every fediverse path but the well-known ones */
  readonly pathPrefix: string;
  /** The context activities are made in, once the origin is known (null before). */
  context(): Context<FederationData> | null;
  /** Starts the sweep of expired state; `serverUrl` stands for PUBLIC_URL when it is unset. */
  start(serverUrl?: string): void;
  stop(): Promise<void>;
}

export function createFederationEngine(
  app: AppServices,
  deps: { keys: KeyStore; redis: RedisClient | undefined },
  opts: FederationEngineOptions = {},
): FederationEngine {
  const kv = createKvStore({ sql: app.sql, clock: app.clock });
  const publicUrl = app.config.PUBLIC_URL;
  let origin: URL | null = publicUrl ? new URL(publicUrl) : null;
  // Fedify takes an origin: a PUBLIC_URL under a path (a service behind a proxy's prefix) gives it its
  // origin, and its path goes in front of every route's template (paths.ts; docs/fediverse.md)
  const pathPrefix = pathPrefixOf(publicUrl);
  const available = federationServed(app.config);
  const loader = createDocumentLoader({ http: app.webhooks.http, kv, timeoutMs: FETCH_TIMEOUT_MS, userAgent: FEDERATION_USER_AGENT });
  const federation = buildFederation({ origin: origin?.origin, pathPrefix, kv, loader });
  const data: FederationData = {
    app,
    keys: deps.keys,
    outbound: createOutboundQueue({ sql: app.sql, nudge: () => app.webhooks.worker.nudge(), now: () => app.clock.now() }),
    inboxLimiter: createKeyLimiter({
      redis: deps.redis,
      keyPrefix: `${signInKeyPrefix(app.config.DATABASE_URL)}:ap-inbox`,
      points: opts.inboxPerDomainPerMinute ?? INBOX_PER_DOMAIN_PER_MINUTE,
      windowSeconds: 60,
    }),
    forgedLimiter: createKeyLimiter({
      redis: deps.redis,
      keyPrefix: `${signInKeyPrefix(app.config.DATABASE_URL)}:ap-inbox-forged`,
      points: opts.inboxForgedPerAddressPerMinute ?? INBOX_FORGED_PER_ADDRESS_PER_MINUTE,
      windowSeconds: 60,
    }),
  };
  const loop = pollLoop(
    () => kv.sweepExpired(),
    opts.pollMs ?? 60_000,
    (err) => app.log.warn({ err }, "federation state sweep failed"),
  );
  return {
    federation,
    data,
    inbound: createInboundQueue({ sql: app.sql, nudge: () => app.webhooks.worker.nudge(), now: () => app.clock.now() }),
    loader,
    kv,
    keyMemory: createKeyMemory(() => app.clock.now().getTime()),
    origin: () => origin,
    available,
    pathPrefix,
    start(serverUrl) {
      if (!origin && serverUrl && available) origin = new URL(serverUrl);
      loop.start();
    },
    stop: () => loop.stop(),
    context: () => (origin ? federation.createContext(origin, data) : null),
  };
}
