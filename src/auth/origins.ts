// Which browser origins may call the browser-facing surface (contract section 7): the server-level
// CORS_ORIGINS for every tenant, plus each tenant's `allowedOrigins` setting.
//
// Two questions, asked at two moments:
//  - before we know the tenant (a preflight carries no X-API-Key; CORS headers are set as a request
//    arrives): does any tenant list this origin? Answered from an in-process set of every tenant's
//    origins, read again every `refreshMs` and at once after a settings change on this instance.
//  - once the caller is known: does *its* tenant list the origin? A publishable key (or a stream
//    ticket) used from an origin its tenant does not list is refused with 403 origin_not_allowed,
//    so a page on another tenant's origin gets nothing either.
// A refused origin is logged once per origin and tenant (a preflight's tenant is unknown: once per
// origin), with what to set, so that the operator of a page whose comments do not load finds why.
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Settings } from "../tenancy/settings/tree.js";
import { originOf } from "../lib/origin.js";

export interface OriginIndex {
  /** CORS_ORIGINS or some tenant lists the origin: CORS headers may go out; the tenant decides later. */
  anyAllows(origin: string | null | undefined): origin is string;
  /** CORS_ORIGINS or this tenant lists the origin. */
  tenantAllows(settings: Pick<Settings, "allowedOrigins">, origin: string): boolean;
  /** Logs a refusal of `origin` (for `tenantId`, or for no known tenant: a preflight), once per pair. */
  refused(origin: string, tenantId: string | null): void;
  /** Reads every tenant's origins again (after a settings change here). */
  refresh(): Promise<void>;
  close(): void;
}

/** Origins as the browser sends them (scheme://host[:port]); malformed entries are ignored. */
export function parseOrigins(list: readonly string[]): string[] {
  return list.flatMap((raw) => originOf(raw) ?? []);
}

/** How many refused origin/tenant pairs are remembered; past it they are forgotten and may be logged again. */
const REFUSALS_REMEMBERED = 10_000;

export function createOriginIndex(opts: {
  prisma: PrismaClient;
  /** CORS_ORIGINS */
  serverOrigins: readonly string[];
  log: Logger;
  refreshMs?: number;
}): OriginIndex {
  const server = new Set(parseOrigins(opts.serverOrigins));
  let tenants = new Set<string>();
  let running: Promise<void> | null = null;
  const logged = new Set<string>();

  const load = async (): Promise<void> => {
    const rows = await opts.prisma.$queryRaw<{ origin: string }[]>`
      SELECT DISTINCT jsonb_array_elements_text(settings -> 'allowedOrigins') AS origin
        FROM tenants WHERE jsonb_typeof(settings -> 'allowedOrigins') = 'array'`;
    tenants = new Set(rows.map((r) => r.origin));
  };
  const refresh = (): Promise<void> => {
    running ??= load()
      .catch((err: unknown) => opts.log.warn({ err }, "allowed origins: could not read the tenants' origins"))
      .finally(() => (running = null));
    return running;
  };
  void refresh();
  const timer = setInterval(() => void refresh(), opts.refreshMs ?? 5_000).unref();

  return {
    anyAllows: (origin): origin is string => typeof origin === "string" && (server.has(origin) || tenants.has(origin)),
    tenantAllows: (settings, origin) => server.has(origin) || settings.allowedOrigins.includes(origin),
    refused(origin, tenantId) {
      const key = `${tenantId ?? ""} ${origin}`;
      if (logged.has(key)) return;
      if (logged.size >= REFUSALS_REMEMBERED) logged.clear();
      logged.add(key);
      opts.log.warn(
        { origin, tenantId },
        tenantId
          ? `refused the browser origin ${origin}: add it to this tenant's allowedOrigins (or to CORS_ORIGINS)`
          : `refused a preflight from ${origin}: no tenant lists it; add it to the tenant's allowedOrigins (or to CORS_ORIGINS)`,
      );
    },
    refresh,
    close: () => clearInterval(timer),
  };
}
