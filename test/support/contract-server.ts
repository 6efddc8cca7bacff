// The contract project's global setup: the run's database (test/support/global-setup.ts, which also
// builds dist/), then one server process for the whole suite (`node dist/main.js`, what `npm start`
// runs after its build) against it and the real Redis. Every file of test/contract/ talks to that
// one server over HTTP and makes its own tenants with the CLI, so the files run in parallel. Runs in
// vitest's main process: nothing here imports vitest's test API.
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import databaseSetup from "./global-setup.js";

/** The admin JWT secret the suite's server and CLI share (40+ characters). */
export const ADMIN_JWT_SECRET = "contract-suite-admin-secret-0123456789abc";

declare module "vitest" {
  export interface ProvidedContext {
    contractBase: string;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** SIGTERM to the child's process group; resolves when it has exited (a 10 s guard, never a wait). */
export async function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
  let guard: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((r) => (guard = setTimeout(r, 10_000)))]);
  clearTimeout(guard);
}

/** Starts `node dist/main.js` with `env` on a free port; resolves with it once /healthz and /readyz answer 200. */
export async function startServerProcess(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let log = "";
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: process.cwd(),
    detached: true, // own process group: the server and anything it starts are stopped together
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", ...env },
  });
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${log}`);
    try {
      const h = await fetch(`${base}/healthz`);
      const r = await fetch(`${base}/readyz`);
      if (h.status === 200 && r.status === 200) return { child, base };
      if (Date.now() > deadline) throw new Error(`not ready: ${h.status} ${r.status}\n${log}`);
    } catch (e) {
      if (Date.now() > deadline) {
        await terminate(child);
        throw e;
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export default async function setup(project: TestProject) {
  const dropDatabase = await databaseSetup(project);
  const { databaseUrl, redisUrl } = project.getProvidedContext();
  let server: ChildProcess;
  try {
    const started = await startServerProcess({
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ADMIN_JWT_SECRET,
      ALLOW_HTTP_WEBHOOKS: "1",
      RUN_WEBHOOK_WORKER: "1",
      LOG_LEVEL: "silent",
      // testing knobs (README, configuration): real time runs short here instead of sleeping
      STREAM_TICKET_TTL_SECONDS: "1",
    });
    server = started.child;
    project.provide("contractBase", started.base);
  } catch (e) {
    await dropDatabase();
    throw e;
  }
  return async () => {
    await terminate(server);
    await dropDatabase();
  };
}
