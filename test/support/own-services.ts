// PostgreSQL and Redis processes of a test's own, on free loopback ports, for fault tests (stalls,
// crashes, restarts). Only these processes are ever stopped or paused — never the machine's own
// services. PostgreSQL runs as the `postgres` user (it refuses root), with its data in a temp dir.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, chownSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

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

const pgBin = () => {
  const versions = readdirSync("/usr/lib/postgresql").sort();
  return join("/usr/lib/postgresql", versions[versions.length - 1]!, "bin");
};

/** Runs as the postgres user when we are root (PostgreSQL refuses to run as root). */
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  userInfo().uid === 0 ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];

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
  /** SIGSTOP the postmaster and every backend: connections stall, nothing answers */
  pause(): void;
  resume(): void;
  /** like `pg_ctl stop -m immediate`: every backend dies at once (SIGQUIT) */
  crash(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "eng-pg-"));
  const port = await freePort();
  const bin = pgBin();
  if (userInfo().uid === 0) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), 0);
  const [initCmd, initArgs] = asPostgres(join(bin, "initdb"), ["-D", dir, "-A", "trust", "-U", "postgres", "--no-sync"]);
  execFileSync(initCmd, initArgs, { stdio: "ignore" });
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
  const pg = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      const [cmd, args] = asPostgres(join(bin, "postgres"), [
        "-D",
        dir,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
      ]);
      child = spawn(cmd, args, { stdio: "ignore" });
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
      for (const pid of pids()) process.kill(pid, "SIGSTOP");
    },
    resume() {
      for (const pid of pids()) process.kill(pid, "SIGCONT");
    },
    async crash() {
      const [cmd, args] = asPostgres(join(bin, "pg_ctl"), ["stop", "-D", dir, "-m", "immediate", "-w"]);
      execFileSync(cmd, args, { stdio: "ignore" });
      child = undefined;
    },
    async stop() {
      pg.resume();
      try {
        const [cmd, args] = asPostgres(join(bin, "pg_ctl"), ["stop", "-D", dir, "-m", "fast", "-w"]);
        execFileSync(cmd, args, { stdio: "ignore" });
      } catch {
        child?.kill("SIGKILL");
      }
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
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
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
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
    async stop() {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
