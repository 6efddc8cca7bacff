// A service instance that federates, for the fediverse tests (test/federation*.test.ts): its port is
// chosen first so that PUBLIC_URL (on which every ActivityPub id is built) names it; the webhook
// worker runs (it sends the activities) and the federation's outbound worker polls often. Each has a
// database of its own (dropped when it stops): on the run's shared one, another file's instance
// (another PUBLIC_URL) would announce this one's discussions and claim its deliveries, and the inbox
// rates (keyed by the database's name in Redis) would count every file's peers together.
import { createServer } from "node:net";
import { startServer, type TestServer } from "./server.js";
import { createTestTenant, type TestTenant } from "./fixtures.js";
import { isolatedDatabase } from "./database.js";

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * `database` and `publicUrl`: another instance's (one started after that one stopped, on its database
 * and PUBLIC_URL: the same deployment again, as behind one proxy; it listens on a port of its own, as
 * the port the first one left may be another test's by then); its database is then not dropped when
 * this one stops.
 */
export async function startFederatingServer(
  opts: {
    inboxPerDomainPerMinute?: number;
    inboxForgedPerAddressPerMinute?: number;
    env?: Record<string, string>;
    database?: { url: string; env: Record<string, string> };
    publicUrl?: string;
  } = {},
): Promise<
  TestServer & {
    publicUrl: string;
    databaseUrl: string;
    database: { url: string; env: Record<string, string> };
    port: number;
    drop(): Promise<void>;
  }
> {
  const port = await freePort();
  const publicUrl = opts.publicUrl ?? `http://127.0.0.1:${port}`;
  const own = opts.database ? { ...opts.database, drop: async () => undefined } : await isolatedDatabase("fedi");
  const server = await startServer(
    { ...own.env, PORT: String(port), PUBLIC_URL: publicUrl, RUN_WEBHOOK_WORKER: "1", ...opts.env },
    {
      federation: {
        pollMs: 100,
        ...(opts.inboxPerDomainPerMinute ? { inboxPerDomainPerMinute: opts.inboxPerDomainPerMinute } : {}),
        ...(opts.inboxForgedPerAddressPerMinute ? { inboxForgedPerAddressPerMinute: opts.inboxForgedPerAddressPerMinute } : {}),
      },
      webhooks: { worker: { pollIntervalMs: 50 } },
    },
  );
  return {
    ...server,
    publicUrl,
    /** its own database, directly (not through a pooler): a test's own connection to it */
    databaseUrl: own.url,
    database: { url: own.url, env: own.env },
    port,
    async stop() {
      await server.stop();
      await own.drop();
    },
    /** drops its database (after its server stopped) */
    drop: () => own.drop(),
  };
}

/** A tenant with federation on under `handle` (remote comments per `remoteModeration`). */
export async function federatingTenant(
  server: TestServer,
  handle: string,
  remoteModeration: "pre" | "post" = "post",
): Promise<TestTenant & { actor: string }> {
  const t = await createTestTenant(server);
  const res = await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle, remoteModeration } });
  if (res.status !== 200) throw new Error(`federation settings refused: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...t, actor: `${(server as { publicUrl?: string }).publicUrl ?? server.url}/ap/actors/${t.tenantId}` };
}

export const AP_JSON = "application/activity+json";

/** Waits until the worker has applied every inbound activity stored (none of kind activitypub_inbound pending). */
export async function inboundApplied(server: TestServer, timeout = 30_000): Promise<void> {
  const end = Date.now() + timeout;
  for (;;) {
    const [row] = await server.app.runtime.services.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE kind = 'activitypub_inbound' AND status = 'pending'`,
      [],
    );
    if (row?.n === 0) return;
    if (Date.now() > end) throw new Error(`${row?.n} inbound activities still pending after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function getAp(url: string, accept = AP_JSON): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url, { headers: { accept }, redirect: "manual" });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
