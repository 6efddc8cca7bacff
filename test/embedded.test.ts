// Embedded mode end to end: no DATABASE_URL, no REDIS_URL. The CLI bootstraps a tenant in a fresh
// DATA_DIR, the server (node dist/main.js, as `npm start` runs it) serves it, and the data survives a
// restart. While the server holds DATA_DIR the CLI's commands run on its control socket
// (src/cli/control.ts), printing what they print without it: those commands run the CLI's code in
// this process (test/support/cli-in-process.ts) against the server process; the first command on
// the empty DATA_DIR and the one run while the server starts are CLI processes. PGlite start-up takes
// seconds, hence the generous timeouts. Every process runs with the tests' NODE_FLAGS
// (test/support/process.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { client } from "./support/client.js";
import { signIdentity } from "./support/fixtures.js";
import { CLI, NODE_FLAGS } from "./support/process.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { disqusXml } from "./support/import-files.js";

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
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Spawns in its own process group, so the server (or the CLI) and anything it starts can be signalled by its id. */
function start(command: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(command, args, { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  running.add(child);
  let out = "";
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    stdout += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => out, stdout: () => stdout, exited };
}

const signalGroup = (p: Proc, signal: NodeJS.Signals) => {
  try {
    process.kill(-p.child.pid!, signal);
  } catch {
    /* already gone */
  }
};

async function cli(...args: string[]) {
  const p = start(process.execPath, [...NODE_FLAGS, CLI, ...args], embeddedEnv());
  const code = await p.exited;
  return { code, output: p.output(), stdout: p.stdout() };
}

/** The same command run by the CLI's code in this process: output is its stderr after its stdout. */
async function cliHere(...args: string[]) {
  const r = await runCliInProcess(args, embeddedEnv());
  return { code: r.code, output: r.stdout + r.stderr, stdout: r.stdout };
}

async function startServer(): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  return waitReady(start(process.execPath, [...NODE_FLAGS, "dist/main.js"], embeddedEnv(port)), port);
}

async function waitReady(proc: Proc, port: number): Promise<{ proc: Proc; url: string }> {
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
  expect(existsSync(join(dataDir, "engagement.control"))).toBe(false);
  expect(existsSync(join(dataDir, "engagement.sock"))).toBe(false);
}

/** POST /command on the control socket with the given Authorization header. */
function controlCall(socketPath: string, authorization: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path: "/command", method: "POST", headers: { authorization, "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
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
    // a post claims its key in its own statement: the repeat's statement finds the key taken and answers the first outcome
    const poster = await signIdentity(creds.identitySecret, "embedded-reader");
    const post = () =>
      api.post(
        "/api/v1/discussions/embedded-3/comments",
        { body: "Once" },
        { identity: poster, headers: { "idempotency-key": "emb-post" } },
      );
    const posted = await post();
    const repeated = await post();
    expect([posted.status, repeated.status, repeated.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
    expect(repeated.body).toEqual(posted.body);

    // an import on the embedded database (its staging, buckets and recount are the same SQL): a
    // reply before its parent is linked, depths and counts are right, and a second run changes nothing
    const file = disqusXml(
      [{ id: "t1", identifier: "imported-1", link: "https://news.example/i/1", title: "Imported" }],
      [
        { id: "p2", thread: "t1", parent: "p1", message: "a reply first", author: { name: "Bob", username: "bob" } },
        { id: "p1", thread: "t1", message: "the parent", author: { name: "Jane", username: "jane" } },
        { id: "p3", thread: "t1", parent: "p2", message: "deeper", author: { name: "Jane", username: "jane" } },
        { id: "p4", thread: "t1", parent: "nowhere", message: "an orphan", author: { name: "Bob", username: "bob" } },
      ],
    );
    const runImport = async () => {
      const accepted = await api.raw("POST", "/api/v1/imports?format=disqus", file, { headers: { "content-type": "application/xml" } });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      for (;;) {
        const job = await api.get(`/api/v1/imports/${accepted.body.id}`);
        if (job.body.state !== "running") return job.body;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const imported = await runImport();
    expect(imported).toMatchObject({ state: "succeeded", threads: 1, comments: 4, readers: 2, unchanged: 0 });
    expect(imported.errors).toEqual([
      { position: expect.stringMatching(/^line \d+/), message: expect.stringContaining("not in this thread") },
    ]);
    const listed = await api.post("/graphql", {
      query: `{ comments(discussionId: "imported-1", sort: oldest, first: 10) { edges { node { id body parentId depth replyCount } } } }`,
    });
    const byBody = new Map<string, any>(listed.body.data.comments.edges.map((e: any) => [e.node.body, e.node]));
    const parent = byBody.get("the parent");
    expect(parent).toMatchObject({ parentId: null, depth: 0, replyCount: 1 });
    expect(byBody.get("a reply first")).toMatchObject({ parentId: parent.id, depth: 1, replyCount: 1 });
    expect(byBody.get("deeper")).toMatchObject({ parentId: byBody.get("a reply first").id, depth: 2, replyCount: 0 });
    expect(byBody.get("an orphan")).toMatchObject({ parentId: null, depth: 0 });
    expect((await api.get("/api/v1/discussions/imported-1")).body.commentCount).toBe(4);
    expect(await runImport()).toMatchObject({ state: "succeeded", threads: 0, comments: 0, readers: 0, unchanged: 4 });

    // the server holds the data dir and offers the CLI its control socket: owner-only files
    const controlPath = join(dataDir, "engagement.control");
    expect(statSync(controlPath).mode & 0o777).toBe(0o600);
    const control = JSON.parse(readFileSync(controlPath, "utf8"));
    expect(control.pid).toBe(first.proc.child.pid);
    expect(control.socket).toBe(join(dataDir, "engagement.sock"));
    expect(statSync(control.socket).isSocket()).toBe(true);
    expect(statSync(control.socket).mode & 0o777).toBe(0o600);
    // without the token (or with another) nothing runs
    for (const auth of ["", "Bearer ", `Bearer ${"0".repeat(64)}`, control.token]) {
      const r = await controlCall(control.socket, auth, { command: "tenant create", name: "Intruder", ttl: "1h" });
      expect(r.status).toBe(401);
      expect(r.body.result).toBeUndefined();
    }
    const garbage = await controlCall(control.socket, `Bearer ${control.token}`, { command: "drop everything" });
    expect(garbage.status).toBe(400);

    // the CLI's commands, run by the server: the same output as when the CLI opens the data dir itself
    const live = await cliHere("tenant", "create", "--name", "While serving", "--json");
    expect(live.code, live.output).toBe(0);
    expect(live.stdout.trim().split("\n")).toHaveLength(1);
    const liveCreds = JSON.parse(live.stdout);
    expect(Object.keys(liveCreds)).toEqual(["tenantId", "adminToken", "apiKey", "identitySecret"]);
    const liveApi = client(first.url, { key: liveCreds.apiKey });
    expect((await liveApi.put("/api/v1/discussions/live-1", { title: "Made while serving" })).status).toBe(201);
    expect((await client(first.url, { admin: liveCreds.adminToken }).get("/api/v1/keys")).status).toBe(200);
    const identity = await signIdentity(liveCreds.identitySecret, "live-reader");
    const hello = await liveApi.post("/api/v1/discussions/live-1/comments", { body: "hello" }, { identity });
    expect(hello.status).toBe(201);
    // comment search: the embedded server projects its writes into the search documents too
    const seesHello = { headers: { "x-service-consistency": hello.headers.get("x-service-consistency")! } };
    expect((await liveApi.get("/api/v1/comments/search?q=hello", seesHello)).body.items.map((c: { id: string }) => c.id)).toEqual([
      hello.body.id,
    ]);
    const human = await cliHere("tenant", "create", "--name", "Human while serving");
    expect(human.code, human.output).toBe(0);
    expect(human.stdout).toMatch(/^Tenant created: ten_[\s\S]*API key \(all capabilities; shown once\):\n {2}ek_[0-9a-f]{64}\n/);

    const op = await cliHere(
      "operator",
      "create",
      "--tenant",
      liveCreds.tenantId,
      "--email",
      "Mod@Example.com",
      "--role",
      "moderator",
      "--json",
    );
    expect(op.code, op.output).toBe(0);
    const opOut = JSON.parse(op.stdout);
    expect(Object.keys(opOut)).toEqual(["operatorId", "tenantId", "email", "role", "password"]);
    expect(opOut).toMatchObject({ tenantId: liveCreds.tenantId, email: "mod@example.com", role: "moderator" });
    const signIn = await fetch(`${first.url}/console/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenantId: liveCreds.tenantId, email: "mod@example.com", password: opOut.password }),
    });
    expect(signIn.status).toBe(200);
    const dup = await cliHere("operator", "create", "--tenant", liveCreds.tenantId, "--email", "mod@example.com", "--json");
    expect(dup.code).not.toBe(0);
    expect(dup.stdout).toBe("");
    expect(dup.output).toMatch(/^engagement: The tenant already has an operator mod@example.com\.\n$/);

    const token = await cliHere("admin-token", "--tenant", liveCreds.tenantId, "--ttl", "1h");
    expect(token.code, token.output).toBe(0);
    expect(token.stdout.trim().split("\n")).toHaveLength(1);
    expect((await client(first.url, { admin: token.stdout.trim() }).get("/api/v1/settings")).status).toBe(200);
    const unknown = await cliHere("admin-token", "--tenant", "ten_does_not_exist");
    expect(unknown.code).not.toBe(0);
    expect(unknown.output).toBe("engagement: No tenant with id ten_does_not_exist\n");

    // import and export too, through the server: the same output as on the database itself
    const importPath = join(dataDir, "..", `live-import-${process.pid}.xml`);
    writeFileSync(importPath, file);
    const imp = await cliHere("import", "--tenant", liveCreds.tenantId, "--format", "disqus", "--json", importPath);
    rmSync(importPath, { force: true });
    expect(imp.code, imp.output).toBe(0);
    expect(imp.stdout.trim().split("\n")).toHaveLength(1);
    const summary = JSON.parse(imp.stdout);
    expect(summary).toMatchObject({ state: "succeeded", threads: 1, comments: 4, readers: 2 });
    expect((await liveApi.get(`/api/v1/imports/${summary.importId}`)).body).toMatchObject({ state: "succeeded", comments: 4 });
    const exported = await cliHere("export", "--tenant", liveCreds.tenantId);
    expect(exported.code, exported.output).toBe(0);
    const records = exported.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ type: "export", tenantId: liveCreds.tenantId });
    expect(records.at(-1)).toMatchObject({ type: "end", counts: { discussions: 2, comments: 5 } });
    // comment search's rebuild, through the server: the imported comments and the posted one found again
    const rebuilt = await cliHere("search", "rebuild", "--tenant", liveCreds.tenantId, "--json");
    expect(rebuilt.code, rebuilt.output).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ tenants: 1, discussions: 2, orphans: 0 });
    expect((await liveApi.get("/api/v1/comments/search?q=hello", seesHello)).body.items).toHaveLength(1);
    const nobody = await cliHere("export", "--tenant", "ten_does_not_exist");
    expect(nobody.code).not.toBe(0);
    expect(nobody.output).toBe("engagement: No tenant with id ten_does_not_exist\n");

    const migrate = await cliHere("migrate");
    expect(migrate.code, migrate.output).toBe(0);
    expect(migrate.stdout).toBe(
      `Database is up to date: the running server (process ${first.proc.child.pid}) applied the migrations at start-up.\n`,
    );

    // a second server still refuses with a clear message
    const secondServer = start(process.execPath, [...NODE_FLAGS, "dist/main.js"], embeddedEnv(await freePort()));
    expect(await secondServer.exited).not.toBe(0);
    expect(secondServer.output()).toMatch(/in use by process \d+/);
    expect((await api.get("/api/v1/discussions/embedded-1")).status).toBe(200); // the first still serves

    // the console is served here too, and a console-link can be made while the server holds the data dir
    const page = await fetch(`${first.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const link = await cliHere("console-link", "--tenant", creds.tenantId);
    expect(link.code, link.output).toBe(0);
    const linkUrl = new URL(link.output.trim().split("\n").at(-1)!);
    const signedIn = await fetch(`${first.url}${linkUrl.pathname}${linkUrl.search}`, { redirect: "manual" });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    expect((await fetch(`${first.url}/console/auth/session`, { headers: { cookie } })).status).toBe(200);

    await stop(first.proc);

    // the README's order with no pause: `npm start`, then at once the CLI, while the server is still
    // starting (it holds the data dir before it listens): the CLI waits for it, then runs there
    const port = await freePort();
    const starting = start(process.execPath, [...NODE_FLAGS, "dist/main.js"], embeddedEnv(port));
    const lockDeadline = Date.now() + 60_000;
    while (!existsSync(join(dataDir, "engagement.lock")) && Date.now() < lockDeadline) await new Promise((r) => setTimeout(r, 20));
    const early = await cli("admin-token", "--tenant", creds.tenantId);
    expect(early.code, early.output).toBe(0);
    expect(decodeJwt(early.stdout.trim()).tid).toBe(creds.tenantId);
    const again = await waitReady(starting, port);
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
