// A Redis Cluster of the test's own: three masters (no replicas) on free loopback ports, each a
// redis-server process with its cluster state in a temp dir. kill(i) stops one master (SIGKILL: its
// keys are gone, as a crashed shard's are), restart(i) starts it again with the same cluster state,
// so it takes its slots back. Only these processes are ever stopped — never the machine's Redis.
//
// `cluster-require-full-coverage no`: the other shards keep answering while one is down, so a
// test sees the service on a cluster with one shard missing (with the default `yes`, the whole
// cluster refuses once the node timeout passes: the same as all of Redis down). The node timeout is
// short so that a lost master is noticed within a second or two.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { recordSpawned } from "./leftover-processes.js";

export interface RedisCluster {
  /** `host:port` of every master, as REDIS_CLUSTER_NODES takes them */
  nodes: string[];
  ports: number[];
  /** SIGKILL master `i` */
  kill(i: number): Promise<void>;
  /** starts master `i` again (same port, same cluster state) and waits for the cluster to be whole */
  restart(i: number): Promise<void>;
  /** the `cluster_state` master `i` reports (`ok` or `fail`) */
  state(i: number): string;
  stop(): Promise<void>;
}

const NODE_TIMEOUT_MS = 1_000;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** A port below 55000 that is free, with port + 10000 (the cluster bus) free too, and not in `taken`. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // both the node's port and its bus port (+10,000) below Linux's ephemeral range (32768 and up), so
    // that no outgoing connection of the machine takes one between this check and the node's bind
    const port = 10_000 + Math.floor(Math.random() * 12_700);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) return port;
  }
  throw new Error("no free port pair for a Redis Cluster node");
}

function cli(port: number, ...args: string[]): string {
  return execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], {
    encoding: "utf8",
    timeout: 5_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if (check()) return;
    } catch {
      // not answering yet
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "eng-redis-cluster-"));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await clusterPort(taken);
    taken.add(port);
    ports.push(port);
  }
  const children: (ChildProcess | undefined)[] = [];

  const spawnNode = async (i: number) => {
    const port = ports[i]!;
    // the options a cluster node needs, then the test's: no persistence, a short node timeout
    // prettier-ignore
    const child = spawn("redis-server", [
      "--port", String(port), "--bind", "127.0.0.1", "--dir", dir,
      "--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`,
      "--cluster-node-timeout", String(NODE_TIMEOUT_MS), "--cluster-require-full-coverage", "no",
      "--save", "", "--appendonly", "no",
    ], { stdio: "ignore" });
    recordSpawned(child.pid); // its process title hides the run's mark (test/support/leftover-processes.ts)
    children[i] = child;
    await waitFor(() => cli(port, "ping").trim() === "PONG", 10_000, `Redis Cluster node on ${port}`);
  };

  const allOk = () => ports.every((p, i) => children[i] === undefined || /cluster_state:ok/.test(cli(p, "cluster", "info")));
  /** every running master sees the slots of every master served */
  const whole = () =>
    ports.every((p, i) => {
      if (!children[i]) return true;
      const info = cli(p, "cluster", "info");
      return /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info);
    });

  try {
    await Promise.all(ports.map((_, i) => spawnNode(i)));
    execFileSync("redis-cli", ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"], {
      stdio: "ignore",
      timeout: 30_000,
    });
    await waitFor(allOk, 20_000, "cluster_state:ok");
    await waitFor(whole, 20_000, "every slot served");
  } catch (err) {
    for (const c of children) c?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const kill = async (i: number) => {
    const child = children[i];
    if (!child) return;
    children[i] = undefined;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  };

  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`),
    ports,
    kill,
    async restart(i) {
      if (children[i]) return;
      await spawnNode(i);
      await waitFor(whole, 20_000, "the cluster whole again");
    },
    state: (i) => /cluster_state:(\w+)/.exec(cli(ports[i]!, "cluster", "info"))?.[1] ?? "unknown",
    async stop() {
      await Promise.all(ports.map((_, i) => kill(i)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
