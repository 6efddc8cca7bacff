// PostgreSQL and Redis processes of a test's own, on free loopback ports, for fault tests (stalls,
// crashes, restarts). Only these processes are ever stopped or paused — never the machine's own
// services. PostgreSQL runs as the `postgres` user (it refuses root), with its data in a temp dir:
// spawned with that user's uid and gid directly, not under runuser, whose wrapper process stops
// itself when its child is stopped and, never continued, outlives the test. Each one still running
// when the worker exits (a test that failed before its afterAll stopped it) is continued and killed
// then; the run's global setup lists any process left (test/support/leftover-processes.ts).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, chownSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { recordSpawned } from "./leftover-processes.js";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export const pgBin = () => {
  const versions = readdirSync("/usr/lib/postgresql").sort();
  return join("/usr/lib/postgresql", versions[versions.length - 1]!, "bin");
};

/** The postgres user's uid and gid when we are root (PostgreSQL refuses to run as root), for spawn's options. */
export const asPostgres = (): { uid?: number; gid?: number } => {
  if (userInfo().uid !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }));
  return { uid: id("-u"), gid: id("-g") };
};

/** What is still running at the worker's exit is continued and killed there (synchronously: exit allows nothing else). */
const running = new Set<() => void>();
process.once("exit", () => {
  for (const end of running) end();
});

function kill(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function childrenOf(pid: number): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Resolves when the process has exited (at once when there is none, or it already has). */
function exitOf(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

async function waitFor(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface OwnPostgres {
  url: string;
  port: number;
  /** its data directory (owned by the postgres user when we are root) */
  dir: string;
  /** SIGSTOP the postmaster and every backend: connections stall, nothing answers */
  pause(): void;
  resume(): void;
  /** like `pg_ctl stop -m immediate`: every backend dies at once (SIGQUIT) */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** stops it (`pg_ctl stop -m fast`) and keeps its data directory: `start()` again, or read `dir` (bench/pg-cost.ts) */
  halt(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A PostgreSQL of the test's own. With `standbyOf`, a streaming standby of that one: its data copied
 * with `pg_basebackup -R` (which writes the primary's address and standby.signal), replaying the
 * primary's WAL as a hot standby (initdb's pg_hba.conf lets loopback replication connections in).
 */
export async function startOwnPostgres(opts: { standbyOf?: OwnPostgres } = {}): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "eng-pg-"));
  const port = await freePort();
  const bin = pgBin();
  const user = asPostgres();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  if (opts.standbyOf) {
    const from = ["-h", "127.0.0.1", "-p", String(opts.standbyOf.port), "-U", "postgres"];
    execFileSync(join(bin, "pg_basebackup"), [...from, "-D", dir, "-R", "-X", "stream", "-c", "fast", "--no-sync"], {
      stdio: "ignore",
      ...user,
    });
  } else {
    execFileSync(join(bin, "initdb"), ["-D", dir, "-A", "trust", "-U", "postgres", "--no-sync"], { stdio: "ignore", ...user });
  }
  const pgCtl = (args: string[]) => execFileSync(join(bin, "pg_ctl"), ["-D", dir, ...args], { stdio: "ignore", ...user });
  let child: ChildProcess | undefined;
  const postmasterPid = () => Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
  const pids = () => {
    let pm: number;
    try {
      pm = postmasterPid();
    } catch {
      return []; // not running
    }
    return [pm, ...childrenOf(pm)];
  };
  /** Continued and killed, every process of it: the postmaster, its backends and the process spawned. */
  const killAll = () => {
    const all = [...new Set([...pids(), ...(child?.pid ? [child.pid] : [])])];
    kill(all, "SIGCONT");
    kill(all, "SIGKILL");
  };
  const end = () => {
    killAll();
    rmSync(dir, { recursive: true, force: true });
  };
  running.add(end);
  const pg = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async start() {
      const args = ["-D", dir, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"];
      child = spawn(join(bin, "postgres"), args, { stdio: "ignore", ...user });
      recordSpawned(child.pid);
      await waitFor(
        () => {
          try {
            execFileSync(join(bin, "pg_isready"), ["-q", "-h", "127.0.0.1", "-p", String(port)]);
            return true;
          } catch {
            return false;
          }
        },
        15_000,
        "own PostgreSQL",
      );
    },
    pause() {
      kill(pids(), "SIGSTOP");
    },
    resume() {
      kill(pids(), "SIGCONT");
    },
    async crash() {
      const exited = exitOf(child);
      pgCtl(["stop", "-m", "immediate", "-w"]);
      await exited;
      child = undefined;
    },
    async halt() {
      pg.resume();
      const exited = exitOf(child);
      pgCtl(["stop", "-m", "fast", "-w"]);
      await exited;
      child = undefined;
    },
    async stop() {
      pg.resume();
      const exited = exitOf(child);
      try {
        pgCtl(["stop", "-m", "fast", "-w"]);
      } catch {
        killAll();
      }
      await exited;
      running.delete(end);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}

export interface OwnRedis {
  url: string;
  pause(): void;
  resume(): void;
  /** killed (SIGKILL): connections drop, and it holds nothing when started again (no persistence) */
  crash(): Promise<void>;
  /** started again on the same port, empty */
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * A Redis user of its own (all keys, channels and commands) whose connections can be lost while
   * Redis keeps running, and its state: `cut` switches the user off and kills its clients (they
   * cannot log in again), `restore` lets them back in. Other users' connections are untouched.
   */
  user(name: string): OwnRedisUser;
}

export interface OwnRedisUser {
  /** the Redis URL with the user's name and password */
  url: string;
  cut(): void;
  restore(): void;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const end = () => {
    child?.kill("SIGCONT");
    child?.kill("SIGKILL");
  };
  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    recordSpawned(child.pid);
    running.add(end);
    await waitFor(
      () => {
        try {
          return execFileSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).trim() === "PONG";
        } catch {
          return false;
        }
      },
      10_000,
      "own Redis",
    );
  };
  const stop = async () => {
    const exited = exitOf(child);
    end();
    await exited;
    running.delete(end);
  };
  await start();
  const cli = (...args: string[]) => execFileSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8" });
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
    crash: stop,
    start,
    stop,
    user(name) {
      const password = randomBytes(12).toString("hex");
      cli("ACL", "SETUSER", name, "on", `>${password}`, "~*", "&*", "+@all");
      return {
        url: `redis://${name}:${password}@127.0.0.1:${port}`,
        cut() {
          cli("ACL", "SETUSER", name, "off");
          cli("CLIENT", "KILL", "USER", name);
        },
        restore: () => void cli("ACL", "SETUSER", name, "on"),
      };
    },
  };
}
