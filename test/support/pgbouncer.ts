// A transaction-mode PgBouncer of a test's (or the bench's) own, on a free loopback port, in front of
// the machine's PostgreSQL: Debian's /usr/sbin/pgbouncer with a stock configuration written to a
// temp dir — `pool_mode = transaction`, `ignore_startup_parameters = extra_float_digits`, trust
// authentication, every database (`*`) of the server behind it, the default limits (max_client_conn
// 100, default_pool_size 20). It refuses to run as root: as root it drops to the `postgres` user
// (its own `-u`). Only this process is ever paused or stopped. Runs in vitest's main process too
// (test/support/pooler-setup.ts): nothing here imports vitest.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { recordSpawned } from "./leftover-processes.js";
import { stopChild } from "./process.js";

export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";

export interface PgBouncer {
  port: number;
  pid: number;
  /** the same URL (user, database, query) through this pooler */
  urlFor(databaseUrl: string): string;
  /** a URL of the pooler's admin console (`SHOW POOLS`, `SHOW SERVERS`; simple queries only) */
  adminUrl: string;
  /** SIGSTOP: nothing it holds answers, new connections wait in the kernel's backlog */
  pause(): void;
  /** SIGCONT */
  resume(): void;
  stop(): Promise<void>;
  /** what it logged (its stderr) */
  log(): string;
}

export interface PgBouncerOptions {
  /** the PostgreSQL server behind it (host, port, user and password are used; the database is not) */
  serverUrl: string;
  /** more `[pgbouncer]` settings (e.g. `{ default_pool_size: "40" }`) */
  settings?: Record<string, string>;
}

export function pgbouncerInstalled(): boolean {
  return existsSync(PGBOUNCER_BIN);
}

/** e.g. "PgBouncer 1.18.0" */
export function pgbouncerVersion(): string {
  return execFileSync(PGBOUNCER_BIN, ["--version"], { encoding: "utf8" }).split("\n")[0]!.trim();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

export async function startPgBouncer(opts: PgBouncerOptions): Promise<PgBouncer> {
  if (!pgbouncerInstalled()) throw new Error(`${PGBOUNCER_BIN} is not installed (apt-get install pgbouncer)`);
  const server = new URL(opts.serverUrl);
  const user = decodeURIComponent(server.username) || "postgres";
  const password = decodeURIComponent(server.password);
  const dir = mkdtempSync(join(tmpdir(), "eng-pgbouncer-"));
  const port = await freePort();
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  writeFileSync(join(dir, "userlist.txt"), `${quote(user)} ${quote(password)}\n`);
  const settings: Record<string, string> = {
    listen_addr: "127.0.0.1",
    listen_port: String(port),
    unix_socket_dir: "",
    auth_type: "trust",
    auth_file: join(dir, "userlist.txt"),
    admin_users: user,
    pool_mode: "transaction",
    ignore_startup_parameters: "extra_float_digits",
    ...opts.settings,
  };
  const host = server.hostname === "localhost" ? "127.0.0.1" : server.hostname;
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${host} port=${server.port || "5432"}`,
      "[pgbouncer]",
      ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
      "",
    ].join("\n"),
  );
  const root = userInfo().uid === 0;
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    for (const f of ["", "userlist.txt", "pgbouncer.ini"]) chownSync(join(dir, f), uid, 0);
  }
  let log = "";
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(root ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  recordSpawned(child.pid); // its process title hides the run's mark (test/support/leftover-processes.ts)
  child.stderr?.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const until = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > until) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start on port ${port}: ${log}`);
    }
    await sleep(25);
  }
  const urlFor = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = "127.0.0.1";
    u.port = String(port);
    return u.toString();
  };
  const adminUrl = (() => {
    const u = new URL(urlFor(opts.serverUrl));
    u.pathname = "/pgbouncer";
    return u.toString();
  })();
  return {
    port,
    pid: child.pid!,
    urlFor,
    adminUrl,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGCONT");
        await stopChild(child, 5_000); // SIGTERM: PgBouncer's immediate shutdown
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
