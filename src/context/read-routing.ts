// Where a request's tenant reads go (contract section 26): the read routes (src/http/database-routes.ts,
// the one table) read through a replica's store when one may serve them, everything else through the
// primary's. A read route goes to the primary instead when
// - it carries X-Service-Consistency (src/db/replicas/consistency-token.ts) and no serving replica is
//   known to have replayed past it (or the value is not a token: the primary has every write);
// - its caller wrote on this instance within DATABASE_REPLICA_STICKY_MS (`RecentWriters`): the same
//   secret key, admin JWT, console session or reader identity (X-Service-Identity); a publishable
//   key alone is not a writer (every browser of a site shares it: its readers carry the token);
// - no replica is serving (all down or lagging: src/db/replicas/replica-set.ts).
// `store(ctx)` and `db(ctx)` (src/context/request.ts) read `ctx.readsFrom`, which only `routeReads` sets.
import { createHash } from "node:crypto";
import { CONSISTENCY_HEADER } from "../db/replicas/consistency-token.js";
import type { Clock } from "../lib/clock.js";
import { header, type HeaderBag } from "./headers.js";
import type { AppServices, RecentWriters } from "./services.js";
import type { Replica } from "../db/replicas/replica-set.js";
import { sessionCookieOf } from "../auth/console-session.js";

/** What a request's headers say of its reads: the position it must see, and whether its caller wrote lately. */
export interface ReadConsistency {
  /** the X-Service-Consistency position; `invalid` for a value that is not a token (then: the primary) */
  after: bigint | "invalid" | null;
  sticky: boolean;
  /** routed already (a /graphql query answered with errors runs again through yoga's pipeline) */
  routed?: boolean;
}

/** Kept at most: past it the oldest entries go (a caller then reads from a replica, with its token). */
const WRITERS_KEPT = 50_000;

/**
 * The reader an identity assertion names, read without verifying it (its issuer and subject; a
 * session token as it is): the same reader with a newly signed assertion is the same writer. Reading
 * it unverified is safe here: a forged one can only send its own reads to the primary.
 */
function readerOf(assertion: string): string {
  const parts = assertion.length <= 8192 ? assertion.split(".") : [];
  if (parts.length !== 3) return assertion;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { iss?: unknown; sub?: unknown };
    return typeof claims.sub === "string" ? `${String(claims.iss ?? "")} ${claims.sub}` : assertion;
  } catch {
    return assertion;
  }
}

/** The credentials that name a writer: a secret key, the admin JWT, a console session, a reader identity. */
function writerKeys(headers: HeaderBag): string[] {
  const keys: string[] = [];
  const apiKey = header(headers, "x-api-key");
  if (apiKey && !apiKey.startsWith("pk_")) keys.push(`k ${apiKey}`);
  const authz = header(headers, "authorization");
  if (authz) keys.push(`a ${authz}`);
  const session = sessionCookieOf(header(headers, "cookie"));
  if (session) keys.push(`s ${session}`);
  const identity = header(headers, "x-service-identity");
  if (identity) keys.push(`i ${readerOf(identity)}`);
  // hashed: credentials are not kept in memory as they are, and every entry is the same size
  return keys.map((k) => createHash("sha256").update(k).digest("base64url"));
}

export function createRecentWriters(stickyMs: number, clock: Clock): RecentWriters {
  const until = new Map<string, number>();
  return {
    wrote(headers) {
      if (stickyMs <= 0) return;
      const end = clock.now().getTime() + stickyMs;
      for (const k of writerKeys(headers)) {
        until.delete(k); // re-inserted last: the map stays in order of writes
        if (until.size >= WRITERS_KEPT) until.delete(until.keys().next().value as string);
        until.set(k, end);
      }
    },
    wroteLately(headers) {
      if (until.size === 0) return false;
      const now = clock.now().getTime();
      return writerKeys(headers).some((k) => (until.get(k) ?? 0) > now);
    },
  };
}

/** What the request's headers say of its reads (only worked out when replicas are configured). */
export function readConsistencyOf(app: AppServices, headers: HeaderBag, tenantId: string | null): ReadConsistency | undefined {
  if (app.db.replicas.size === 0) return undefined;
  return {
    // a token is sealed for its tenant: another tenant's (or one sent without a tenant) is not a token
    after: app.consistencyTokens.decode(header(headers, CONSISTENCY_HEADER.toLowerCase()), tenantId),
    sticky: app.recentWriters.wroteLately(headers),
  };
}

/**
 * The request's reads go to a replica when `route` (its entry in the table) says so and one may
 * serve it; else they stay on the primary. Counted in db_read_routes_total by where they went.
 */
export function routeReads(
  ctx: { readonly app: AppServices; readConsistency?: ReadConsistency | undefined; readsFrom?: Replica },
  route: "replica" | "primary",
): void {
  const c = ctx.readConsistency;
  if (!c || c.routed || route !== "replica") return;
  c.routed = true;
  const count = (target: "primary" | "replica", reason: string) => ctx.app.metrics.databaseReads.inc({ target, reason });
  if (c.sticky) return count("primary", "sticky");
  if (c.after === "invalid") return count("primary", "consistency");
  const replica = ctx.app.db.replicas.pick(c.after);
  if (!replica) return count("primary", c.after !== null && ctx.app.db.replicas.pick(null) ? "consistency" : "no_replica");
  ctx.readsFrom = replica;
  count("replica", "route");
}
