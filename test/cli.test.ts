// The operator CLI against the run's test database: as installed (the bin, `npm run cli`) and as a
// process failing on bad usage, as real child processes; what its commands do and print, run in
// this process (test/support/cli-in-process.ts: the same code, without a node start per command).
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { client } from "./support/client.js";
import { signIdentity } from "./support/fixtures.js";
import { runCli, runProcess } from "./support/process.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { CAPABILITIES } from "../src/auth/capabilities.js";

/** The environment of an operator's shell: the test database, the shared secret, default logging. */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
  for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
  return env;
}

/** `engagement` as installed: the bin, which runs the TypeScript CLI through tsx */
const bin = (...args: string[]) => runProcess(process.execPath, ["bin/engagement.js", ...args], cliEnv());
/** the same CLI as built (test/support/process.ts), as a process, without tsx's start-up */
const cliProcess = (...args: string[]) => runCli(args, cliEnv());
/** the CLI's code run here: the commands' behaviour and output */
const cli = (...args: string[]) => runCliInProcess(args, cliEnv());

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("engagement CLI", { timeout: 120_000 }, () => {
  let created: { tenantId: string; adminToken: string; apiKey: string; identitySecret: string };

  it("tenant create --json prints exactly one JSON object, and its credentials work", async () => {
    const r = await bin("tenant", "create", "--name", "CLI Co", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    created = JSON.parse(r.stdout);
    expect(Object.keys(created)).toEqual(["tenantId", "adminToken", "apiKey", "identitySecret"]);
    expect(created.apiKey).toMatch(/^ek_[0-9a-f]{64}$/);

    const api = client(server.url, { key: created.apiKey });
    expect((await api.put("/api/v1/discussions/cli-1", { title: "from the CLI tenant" })).status).toBe(201);
    expect((await api.get("/api/v1/settings")).status).toBe(200); // the first key holds every capability
    const admin = client(server.url, { admin: created.adminToken });
    const keys = await admin.get("/api/v1/keys");
    expect(keys.status).toBe(200);
    expect(keys.body.items).toHaveLength(1);
    expect([...keys.body.items[0].capabilities].sort()).toEqual([...CAPABILITIES].sort());
    const identity = await signIdentity(created.identitySecret, "cli-reader");
    expect((await api.post("/api/v1/discussions/cli-1/comments", { body: "hello" }, { identity })).status).toBe(201);
  });

  it("npm run cli -- tenant create --json, typed as the contract writes it: nothing but the JSON on stdout", async () => {
    const r = await runProcess("npm", ["run", "cli", "--", "tenant", "create", "--name", "Via npm", "--json"], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(["tenantId", "adminToken", "apiKey", "identitySecret"]);
    // npm's "> script" banner is still shown, on stderr (.npmrc: json=true)
    expect(r.stderr).toContain("> tsx src/cli/index.ts tenant create");
  });

  it("a failing npm command says what failed (the project's .npmrc does not silence npm)", async () => {
    const r = await runProcess("npm", ["run", "no-such-script"], cliEnv());
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Missing script: "no-such-script"/);
  });

  it("tenant create without --json prints the credentials for a human", async () => {
    const r = await cli("tenant", "create", "--name", "Human");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Tenant created: ten_/);
    expect(r.stdout).toMatch(/ek_[0-9a-f]{64}/);
  });

  it("admin-token --tenant <id> --ttl 1h mints a working token", async () => {
    const r = await cli("admin-token", "--tenant", created.tenantId, "--ttl", "1h");
    expect(r.code, r.stderr).toBe(0);
    const token = r.stdout.trim();
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const claims = decodeJwt(token);
    expect(claims.tid).toBe(created.tenantId);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect((await client(server.url, { admin: token }).get("/api/v1/keys")).status).toBe(200);
  });

  it("admin-token for an unknown tenant exits non-zero with a clear message", async () => {
    const r = await cli("admin-token", "--tenant", "ten_does_not_exist");
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("No tenant with id ten_does_not_exist");
    const badTtl = await cli("admin-token", "--tenant", created.tenantId, "--ttl", "forever");
    expect(badTtl.code).not.toBe(0);
    expect(badTtl.stderr).toMatch(/Invalid duration 'forever'/);
  });

  it("migrate exits 0 and says the database is up to date", async () => {
    const r = await cli("migrate");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Database is up to date.\n");
  });

  it("bad usage exits non-zero", async () => {
    const r = await cliProcess("tenant", "create");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--name/);
  });
});
