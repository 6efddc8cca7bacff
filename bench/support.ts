// Shared bench plumbing: a throwaway PostgreSQL database and a running app with a tenant; the
// service and the floors built and started the way `npm start` runs the service.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename } from "node:path";
import { build } from "esbuild";
import { SignJWT } from "jose";
import pg from "pg";
import { buildApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { migratePostgres } from "../src/db/migrate.js";
import { createTenant } from "../src/modules/tenants/engine/tenants.js";

/**
 * The node arguments that start the service as `npm start` does: built by `npm run build` into
 * dist/ and run as plain JavaScript (no loader in the process).
 */
let built = false;
export function serviceEntry(): string[] {
  if (!built) execFileSync("npm", ["run", "-s", "build"], { stdio: "inherit" });
  built = true;
  return ["dist/main.js"];
}

/** A bench server (a floor) compiled the same way as the service, so both run as plain JavaScript. */
export async function compiledScript(script: string): Promise<string> {
  // its own files bundled in (bench/floor/statements.ts), its packages imported from node_modules
  await build({
    entryPoints: [script],
    outdir: "dist/bench",
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  return `dist/bench/${basename(script).replace(/\.ts$/, ".js")}`;
}

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface BenchEnv {
  app: App;
  url: string;
  apiKey: string;
  identitySecret: string;
  /** the run's own database */
  databaseUrl: string;
  close(): Promise<void>;
}

/** A database of the run's own on PG_ADMIN_URL's server (`prefix` and the time), and how to drop it. */
export async function benchDatabase(prefix = "eng_bench"): Promise<{ url: string; admin: pg.Client; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(PG_ADMIN_URL);
  dbUrl.pathname = `/${name}`;
  return {
    url: dbUrl.toString(),
    admin,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

export async function startBenchApp(env: Record<string, string> = {}): Promise<BenchEnv> {
  const { url: databaseUrl, drop } = await benchDatabase();
  const dbUrl = new URL(databaseUrl);
  await migratePostgres(dbUrl.toString());
  const app = await buildApp(
    loadConfig({
      PORT: "0",
      DATABASE_URL: dbUrl.toString(),
      DATABASE_POOL_SIZE: "20",
      REDIS_URL: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
      ADMIN_JWT_SECRET: "bench-admin-secret-0123456789abcdef0123456789",
      LOG_LEVEL: "error",
      ALLOW_HTTP_WEBHOOKS: "1",
      ...env,
    }),
    { migrate: false },
  );
  const url = await app.start();
  const t = await createTenant(app.runtime.services, "bench");
  // A budget no bench run reaches: we measure the service, not the limiter's refusals.
  await app.runtime.services.prisma.tenant.update({
    where: { id: t.tenantId },
    data: { settings: { rateLimits: { requestsPerMinute: 1_000_000 } } },
  });
  return {
    app,
    url,
    apiKey: t.apiKey,
    identitySecret: t.identitySecret,
    databaseUrl: dbUrl.toString(),
    async close() {
      await app.stop();
      await drop();
    },
  };
}

export function fmtTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(cells[0]!), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...cells.slice(1).map(line)].join("\n");
}

/** user + system CPU of one process, µs (clock ticks of 10 ms) */
export function cpuOf(pid: number | string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** the CPU of a PostgreSQL cluster's postmaster and every process it started (backends, writers, autovacuum, WAL senders and receivers) */
export async function clusterCpu(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity");
  const [{ pm }] = (await admin.query<{ pm: string }>("SELECT setting AS pm FROM pg_settings WHERE name = 'data_directory'")).rows as [
    { pm: string },
  ];
  let total = 0;
  try {
    const postmaster = readFileSync(`${pm}/postmaster.pid`, "utf8").split("\n")[0]!;
    const children = execFileSync("pgrep", ["-P", postmaster]).toString().trim().split("\n");
    for (const pid of [postmaster, ...children])
      try {
        total += cpuOf(pid);
      } catch {
        // ended in between
      }
    return total;
  } catch {
    // the data directory is not readable from here: the backends pg_stat_activity lists
    for (const { pid } of rows)
      try {
        total += cpuOf(pid);
      } catch {
        // ended in between
      }
    return total;
  }
}

/** a free TCP port on loopback */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** waits until `url` answers below 500 (a server started), for at most 30 s */
export async function waitUp(url: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      if (i > 300) throw new Error(`${url} did not start`);
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
}

export interface ServiceProcess {
  process: ChildProcess;
  url: string;
  /** the environment it runs with (the CLI's too) */
  env: Record<string, string>;
  tenant: { tenantId: string; apiKey: string; identitySecret: string };
  /** a tenant API call with its key: the answer's JSON (undefined for 204); throws on an error */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any>;
}

export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
export const BENCH_ADMIN_JWT_SECRET = "bench-admin-secret-0123456789abcdef0123456789";

/**
 * The service as `npm start` runs it (dist/, plain node) on a free port of loopback, with PUBLIC_URL
 * naming it, on `databaseUrl` and BENCH_REDIS_URL, its delivery worker on, `env` over that, loopback
 * receivers allowed, a V8 CPU profile written into BENCH_CPU_PROFILE when it exits; and one tenant
 * made by the CLI.
 */
export async function startServiceProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  /** more node arguments for the service; `cwd`: another checkout's service (its `npm run build` done) and CLI */
  opts: { nodeArgs?: string[]; cwd?: string } = {},
): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const all = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: BENCH_REDIS_URL,
    ADMIN_JWT_SECRET: BENCH_ADMIN_JWT_SECRET,
    LOG_LEVEL: "error",
    RUN_WEBHOOK_WORKER: "1",
    ...env,
    PORT: String(port),
    PUBLIC_URL: url,
  };
  const profile = process.env.BENCH_CPU_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, ...(opts.nodeArgs ?? []), ...(opts.cwd ? ["dist/main.js"] : serviceEntry())], {
    cwd: opts.cwd,
    env: { ...process.env, ...all, ALLOW_HTTP_WEBHOOKS: "1" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitUp(`${url}/healthz`);
  const out = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "bench", "--json"], {
    cwd: opts.cwd,
    env: { ...process.env, ...all },
    encoding: "utf8",
  });
  const tenant = JSON.parse(out.trim().split("\n").pop()!) as ServiceProcess["tenant"];
  return {
    process: child,
    url,
    env: all,
    tenant,
    async api(method, path, body, headers = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json", "x-api-key": tenant.apiKey, ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? undefined : res.json();
    },
  };
}

/** An identity assertion (X-Service-Identity) for reader `sub` with `claims`, valid for a bench's run (50 minutes). */
export function assertion(secret: string, sub: string, claims: Record<string, string>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 3000)
    .sign(new TextEncoder().encode(secret));
}
