// Embedded mode end to end: no DATABASE_URL, no REDIS_URL. The CLI bootstraps a tenant in a fresh
// DATA_DIR, the server (started as `npm start` does) serves it, and the data survives a restart.
// PGlite start-up takes seconds, hence the generous timeouts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "./support/client.js";

const dataDir = mkdtempSync(join(tmpdir(), "engagement-embedded-"));
const running = new Set<ChildProcess>();

function embeddedEnv(port?: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  for (const k of ["DATABASE_URL", "REDIS_URL", "ADMIN_JWT_SECRET", "SECRET_ENCRYPTION_KEY"]) delete env[k];
  if (port !== undefined) env.PORT = String(port);
  return env;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Spawns in its own process group, so the server (or the CLI) and anything it starts can be signalled by its id. */
function start(command: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(command, args, { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  running.add(child);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => out, exited };
}

const signalGroup = (p: Proc, signal: NodeJS.Signals) => {
  try {
    process.kill(-p.child.pid!, signal);
  } catch {
    /* already gone */
  }
};

async function cli(...args: string[]) {
  const p = start(process.execPath, ["bin/engagement.js", ...args], embeddedEnv());
  const code = await p.exited;
  return { code, output: p.output() };
}

async function startServer(): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = start(process.execPath, ["dist/main.js"], embeddedEnv(port));
  const url = `http://127.0.0.1:${port}`;
  let exitCode: number | null | undefined;
  void proc.exited.then((c) => (exitCode = c));
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`server exited (${exitCode}):\n${proc.output()}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (ready === 200) return { proc, url };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server not ready after 90 s:\n${proc.output()}`);
}

/** SIGTERM, then wait for a clean exit and for the data-dir lock to be released. */
async function stop(proc: Proc) {
  signalGroup(proc, "SIGTERM");
  await proc.exited;
  // the server's own shutdown deadline is 15 s; on a loaded machine (the whole suite on 2 cores)
  // three node processes may take longer than that to wind down
  const deadline = Date.now() + 45_000;
  while (existsSync(join(dataDir, "engagement.lock")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(join(dataDir, "engagement.lock")), `the lock outlived the server:\n${proc.output().slice(-2000)}`).toBe(false);
}

afterAll(async () => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe("embedded mode (PGlite, in-process pub/sub)", { timeout: 240_000 }, () => {
  let creds: { tenantId: string; adminToken: string; apiKey: string; identitySecret: string };

  beforeAll(async () => {
    const r = await cli("tenant", "create", "--name", "Embedded", "--json");
    expect(r.code, r.output).toBe(0);
    creds = JSON.parse(r.output);
    expect(existsSync(join(dataDir, "admin-jwt-secret"))).toBe(true);
  }, 180_000);

  it("serves, refuses a second process on the same DATA_DIR, and keeps the data across a restart", async () => {
    const first = await startServer();
    const api = client(first.url, { key: creds.apiKey });
    const admin = client(first.url, { admin: creds.adminToken });
    expect((await api.put("/api/v1/discussions/embedded-1", { title: "Survives restarts" })).status).toBe(201);
    const locked = await api.post("/api/v1/discussions/embedded-1/lock");
    expect(locked.status).toBe(200);
    expect(locked.body.state).toBe("locked");
    expect((await admin.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    // Idempotency-Key on the embedded database, for both kinds of write (a transaction, one statement)
    for (const [path, k] of [
      ["/api/v1/discussions/embedded-2", "emb-put"],
      ["/api/v1/discussions/embedded-2/lock", "emb-lock"],
    ] as const) {
      const call = () =>
        api.raw(k === "emb-put" ? "PUT" : "POST", path, k === "emb-put" ? { title: "Once" } : undefined, {
          headers: { "idempotency-key": k },
        });
      const first = await call();
      const again = await call();
      expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([
        k === "emb-put" ? 201 : 200,
        k === "emb-put" ? 201 : 200,
        "true",
      ]);
      expect(again.body).toEqual(first.body);
    }

    // the data dir is locked: the CLI and a second server refuse with a clear message
    const second = await cli("tenant", "create", "--name", "Intruder", "--json");
    expect(second.code).not.toBe(0);
    expect(second.output).toMatch(/in use by process \d+/);
    const secondServer = start(process.execPath, ["dist/main.js"], embeddedEnv(await freePort()));
    expect(await secondServer.exited).not.toBe(0);
    expect(secondServer.output()).toMatch(/in use by process \d+/);
    expect((await api.get("/api/v1/discussions/embedded-1")).status).toBe(200); // the first still serves

    // the console is served here too, and a console-link can be made while the server holds the data dir
    const page = await fetch(`${first.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const link = await cli("console-link", "--tenant", creds.tenantId);
    expect(link.code, link.output).toBe(0);
    const linkUrl = new URL(link.output.trim().split("\n").at(-1)!);
    const signedIn = await fetch(`${first.url}${linkUrl.pathname}${linkUrl.search}`, { redirect: "manual" });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    expect((await fetch(`${first.url}/console/auth/session`, { headers: { cookie } })).status).toBe(200);

    await stop(first.proc);

    const again = await startServer();
    const api2 = client(again.url, { key: creds.apiKey });
    const d = await api2.get("/api/v1/discussions/embedded-1");
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: "embedded-1", title: "Survives restarts", state: "locked" });
    // the admin JWT secret was generated once and kept: the CLI's token still verifies
    const settings = await client(again.url, { admin: creds.adminToken }).get("/api/v1/settings");
    expect(settings.status).toBe(200);
    expect(settings.body.moderation).toBe("pre");
    await stop(again.proc);
  });
});
