// One typed config object from the environment, validated once; every error is reported together.
import { isAbsolute, resolve } from "node:path";
import proxyAddr from "@fastify/proxy-addr";
import { z } from "zod";
import { parseDuration } from "./lib/duration.js";
import { parseOutboundUrl } from "./lib/outbound-url.js";

const flag = z
  .enum(["1", "0", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

/** "a, b,c" → ["a", "b", "c"]; unset → []. */
const commaList = z
  .string()
  .optional()
  .transform((v) =>
    v
      ? v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : [],
  );

/** An entry proxy-addr takes: an IPv4/IPv6 address or CIDR, or one of its names (loopback, linklocal, uniquelocal). */
function validProxyEntry(entry: string): boolean {
  try {
    proxyAddr.compile(entry);
    return true;
  } catch {
    return false;
  }
}

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** a stalled database answers 503 within this (statement, connect and pool-acquire timeouts) */
  DATABASE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(4_000),
  /** the planner's cost of a page read out of order, for the service's own statements: 1.1 (the hot
   *  tables are cached, and what is not is on SSDs), or `server` to keep the database server's setting */
  DATABASE_RANDOM_PAGE_COST: z.union([z.literal("server"), z.coerce.number().positive().max(1000)]).default(1.1),
  /** `transaction`: DATABASE_URL is a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor): no named
   *  prepared statements, no startup parameters, timeouts per transaction (docs/scaling.md) */
  DATABASE_POOLER: z.enum(["none", "transaction"]).default("none"),
  /** the database itself, for what needs a session (migrations, session advisory locks); with DATABASE_POOLER=transaction */
  DATABASE_DIRECT_URL: z.string().url().optional(),
  /** streaming replicas of DATABASE_URL (or poolers in front of them) that serve the read routes (docs/scaling.md "Read replicas") */
  DATABASE_REPLICA_URLS: commaList.pipe(z.array(z.string().url("each replica is a postgresql:// URL")).max(16)),
  /** a reader identity or key that wrote on this instance reads from the primary this long after */
  DATABASE_REPLICA_STICKY_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  /** a replica whose replay lags more than this serves no reads until it catches up */
  DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(1).max(3_600_000).default(1_000),
  DATA_DIR: z.string().min(1).default("./data"),
  REDIS_URL: z.string().url().optional(),
  /** a Redis Cluster instead of REDIS_URL: some of its nodes, `host:port,host:port` */
  REDIS_CLUSTER_NODES: commaList.pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, "each node is host:port"))),
  ADMIN_JWT_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  SECRET_ENCRYPTION_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  ALLOW_HTTP_WEBHOOKS: flag,
  WEBHOOK_ALLOWLIST: commaList,
  /** the webhook worker's attempts in flight: in all, for one endpoint, for one tenant (docs/webhooks.md "Fairness") */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  WEBHOOK_MAX_PER_ENDPOINT: z.coerce.number().int().min(1).max(1024).default(16),
  WEBHOOK_MAX_PER_TENANT: z.coerce.number().int().min(1).max(1024).default(32),
  /** webmention verifications one instance runs at once, in a pool of their own beside the webhook deliveries' (contract section 24) */
  WEBMENTION_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  NODE_ENV: z.string().default("development"),
  /** the service's SMTP server: smtp(s)://[user:password@]host[:port], nothing else (src/lib/outbound-url.ts); unset: email is off */
  SMTP_URL: z
    .string()
    .superRefine((v, ctx) => {
      const parsed = parseOutboundUrl(v, "smtp");
      if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem.message });
    })
    .optional(),
  /** the sender when a tenant names none (settings email.from) */
  EMAIL_FROM: z.string().min(3).max(400).default("Comments <no-reply@localhost>"),
  /** development: 1 keeps rendered emails in the database (the console's Outbox) instead of sending them */
  EMAIL_OUTBOX: flag,
  /** how often the email worker looks for replies due to be mailed and messages due to be sent */
  EMAIL_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(5_000),
  /** how often the follow worker looks for new comments to tell the discussions' followers of */
  FOLLOW_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  /** how often the search projector sweeps its next 10,000 discussions for events it has not applied (what no nudge brought it) */
  SEARCH_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  /** /embed/demo: on unless NODE_ENV=production, where only EMBED_DEMO=1 turns it on */
  EMBED_DEMO: flag,
  /** production: introspection and "did you mean" suggestions are off unless this is 1 */
  GRAPHQL_INTROSPECTION: flag,
  /** origins (comma-separated) whose browsers may call the browser-facing routes (CORS) */
  CORS_ORIGINS: commaList,
  /** GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` when set; open otherwise */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** how often the retention job runs (one instance at a time); 0 = never */
  RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
  /** how often each instance runs auto-close (one pass at a time across instances); 0 = never */
  AUTO_CLOSE_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  /** how often each instance looks for linked Bluesky posts whose thread is due a read (contract section 30; each discussion's own pace is src/modules/bluesky/engine/pace.ts); 0 = never */
  BLUESKY_POLL_INTERVAL_MS: z.coerce.number().int().min(0).default(5_000),
  /** requests to the hosted sign-in (/auth/v1) one client address may make per tenant in 10 minutes */
  SIGN_IN_REQUESTS_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(60),
  /** webmentions verified as linking that one source domain may bring one site in 10 minutes, across instances (contract section 24) */
  WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /** webmentions one client address may send in 10 minutes, across instances, before any is verified (contract sections 24, 31) */
  WEBMENTION_REQUESTS_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(120),
  /** admin JWTs living longer than this (exp − iat, or exp − now without iat) are refused */
  ADMIN_JWT_MAX_TTL: z
    .string()
    .default("24h")
    .transform((v, ctx) => {
      try {
        return parseDuration(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** GraphiQL at /graphql: on unless NODE_ENV=production, where only GRAPHIQL=1 turns it on; 0 turns it off */
  GRAPHIQL: z.enum(["1", "0", "true", "false"]).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024),
  /** the whole request (headers and body) must arrive within this; slow-drip clients are cut */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(72_000),
  TOKEN_SUNSET: z.string().default("Tue, 30 Jun 2027 00:00:00 GMT"),
  MAX_STREAMS_PER_INSTANCE: z.coerce.number().int().min(1).default(20_000),
  /** presence (contract section 19): count streams as readers and send `event: presence`; 0 turns it off (counts read 0) */
  STREAM_PRESENCE: z
    .enum(["1", "0", "true", "false"])
    .optional()
    .transform((v) => v === undefined || v === "1" || v === "true"),
  /** presence counts people: a client address's reader-less streams count one each up to this many (0: each counts); unset: the hub's default (3) */
  STREAM_PRESENCE_PER_ADDRESS: z.coerce.number().int().min(0).max(100).optional(),
  /** stream tickets are valid this long (contract: 60 s; tests shorten it) */
  STREAM_TICKET_TTL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** once redeemed, a ticket's own EventSource may reconnect with it (Last-Event-ID) this long after its last connect */
  /** the service's public address: every URL it writes (ids, links, the fragment's API base, sign-in and console links) is on it; unset: the address it listens on (http://HOST:PORT as bound), never a request's Host */
  PUBLIC_URL: z.string().url().optional(),
  /** the reverse proxies in front (addresses or CIDRs, comma-separated; default none): a request from one is from the right-most
   *  X-Forwarded-For address not itself trusted, with X-Forwarded-Proto (docs/operations.md "Behind a proxy") */
  TRUST_PROXY: commaList.refine((list) => list.every(validProxyEntry), {
    message: "each entry must be an IP address or a CIDR (10.0.0.0/8, fd00::/8), or loopback, linklocal, uniquelocal",
  }),
  /** a console session ends after this long without a request */
  CONSOLE_SESSION_IDLE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(2 * 3600),
  /** and after this long in any case */
  CONSOLE_SESSION_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(12 * 3600),
  STREAM_TICKET_RESUME_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(86_400),
  RUN_EMAIL_WORKER: z
    .enum(["1", "0", "true", "false"])
    .optional()
    .transform((v) => v === undefined || v === "1" || v === "true"),
  RUN_WEBHOOK_WORKER: z
    .enum(["1", "0", "true", "false"])
    .optional()
    .transform((v) => v === undefined || v === "1" || v === "true"),
  RUN_FOLLOW_WORKER: z
    .enum(["1", "0", "true", "false"])
    .optional()
    .transform((v) => v === undefined || v === "1" || v === "true"),
  /** the search projector (src/modules/comments/engine/search-projector.ts): comment search's documents from the event log */
  RUN_SEARCH_PROJECTOR: z
    .enum(["1", "0", "true", "false"])
    .optional()
    .transform((v) => v === undefined || v === "1" || v === "true"),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends Omit<Env, "DATA_DIR" | "GRAPHIQL"> {
  DATA_DIR: string;
  GRAPHIQL: boolean;
  embedded: boolean;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const e = parsed.data;
  const dataDir = isAbsolute(e.DATA_DIR) ? e.DATA_DIR : resolve(process.cwd(), e.DATA_DIR);
  if (e.DATABASE_URL && !e.ADMIN_JWT_SECRET) {
    throw new ConfigError(["ADMIN_JWT_SECRET: required when DATABASE_URL is set (instances must share it)"]);
  }
  const problems: string[] = [];
  if (e.DATABASE_POOLER === "transaction" && !e.DATABASE_URL) problems.push("DATABASE_POOLER: needs DATABASE_URL (the pooler)");
  if (e.DATABASE_POOLER === "transaction" && !e.DATABASE_DIRECT_URL)
    problems.push("DATABASE_DIRECT_URL: required with DATABASE_POOLER=transaction (migrations and session locks bypass the pooler)");
  if (e.DATABASE_REPLICA_URLS.length > 0 && !e.DATABASE_URL) problems.push("DATABASE_REPLICA_URLS: needs DATABASE_URL (the primary)");
  if (e.REDIS_URL && e.REDIS_CLUSTER_NODES.length > 0) problems.push("REDIS_CLUSTER_NODES: set either it or REDIS_URL, not both");
  if (problems.length > 0) throw new ConfigError(problems);
  const graphiql = e.GRAPHIQL === undefined ? e.NODE_ENV !== "production" : e.GRAPHIQL === "1" || e.GRAPHIQL === "true";
  return { ...e, DATA_DIR: dataDir, GRAPHIQL: graphiql, embedded: !e.DATABASE_URL };
}
