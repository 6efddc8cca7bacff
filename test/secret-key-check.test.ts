// The secret key check (src/db/key-check.ts): a server or CLI whose key does not open the stored
// secrets (another ADMIN_JWT_SECRET, another SECRET_ENCRYPTION_KEY) refuses in one line naming the
// setting; a data set from before the check gets it at its next start; one tenant's secret sealed
// under another key (restored from elsewhere) answers 503 secret_key_mismatch and is logged once.
import { Writable } from "node:stream";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createRuntime } from "../src/runtime.js";
import { openDatabase } from "../src/db/client.js";
import { createSecretBox } from "../src/lib/secret-box.js";
import { createTenant } from "../src/modules/tenants/engine/tenants.js";
import { isolatedDatabase } from "./support/database.js";
import { NODE_FLAGS, runProcess } from "./support/process.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { testEnv, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";

const SECRET_A = "key-check-secret-a-0123456789abcdef0123456789";
const SECRET_B = "key-check-secret-b-0123456789abcdef0123456789";
const quiet = pino({ level: "silent" });

/** An operator's shell on `url` with these settings. */
function shellEnv(url: string, vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url, PORT: "0", LOG_LEVEL: "warn", ...vars };
  for (const k of ["REDIS_URL", "DATA_DIR", "SECRET_ENCRYPTION_KEY", "ADMIN_JWT_SECRET"]) if (!(k in vars)) delete env[k];
  return env;
}

async function keyCheckRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query("SELECT count(*)::int AS n FROM secret_key_check")).rows[0].n;
  } finally {
    await c.end();
  }
}

describe("secret key check", { timeout: 120_000 }, () => {
  const dbs: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it("a server or CLI with another key refuses in one line naming the setting; the right key starts", async () => {
    const db = await isolatedDatabase("keycheck");
    dbs.push(db);
    const created = await runCliInProcess(["tenant", "create", "--name", "A", "--json"], shellEnv(db.url, { ADMIN_JWT_SECRET: SECRET_A }));
    expect(created.code, created.stderr).toBe(0);
    const tenantId = JSON.parse(created.stdout).tenantId as string;
    expect(await keyCheckRows(db.url)).toBe(1);

    // the refusals below change nothing, so they run at once: the server process, as `npm start`
    // runs it (with the tests' NODE_FLAGS), with the README's "fresh" secret; every CLI command that
    // opens the database; and the same admin secret with an encryption key of its own (the commands
    // run the CLI's code in this process, test/support/cli-in-process.ts)
    const withB = shellEnv(db.url, { ADMIN_JWT_SECRET: SECRET_B });
    const commands = [["admin-token", "--tenant", tenantId], ["tenant", "create", "--name", "B"], ["migrate"]];
    const [server, ownKey, ...refused] = await Promise.all([
      runProcess(process.execPath, [...NODE_FLAGS, "dist/main.js"], withB),
      runCliInProcess(
        ["admin-token", "--tenant", tenantId],
        shellEnv(db.url, { ADMIN_JWT_SECRET: SECRET_A, SECRET_ENCRYPTION_KEY: SECRET_B }),
      ),
      ...commands.map((args) => runCliInProcess(args, withB)),
    ]);
    expect(server!.code).toBe(1);
    const lines = server!.stderr.trim().split("\n");
    expect(lines, server!.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/sealed with another key than this process's ADMIN_JWT_SECRET: set ADMIN_JWT_SECRET/);
    expect(server!.stdout).toBe("");

    refused.forEach((r, i) => {
      expect(r.code, commands[i]!.join(" ")).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(
        /^engagement: The secrets stored in this database were sealed with another key than this process's ADMIN_JWT_SECRET/,
      );
    });
    // the encryption key of its own: that setting is named
    expect(ownKey!.code).not.toBe(0);
    expect(ownKey!.stderr).toMatch(/another key than this process's SECRET_ENCRYPTION_KEY: set SECRET_ENCRYPTION_KEY/);

    // the right key: the check opens, nothing was changed by the refusals
    const rt = await createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url, ADMIN_JWT_SECRET: SECRET_A })), { log: quiet });
    await rt.close();
    expect(await keyCheckRows(db.url)).toBe(1);
  });

  it("a data set from before the check gets one at its next start, unless its secrets were sealed with another key", async () => {
    const db = await isolatedDatabase("keycheck_old");
    dbs.push(db);
    // tenants written as before the check existed: sealed with A's key, no check row
    const raw = await openDatabase({ databaseUrl: db.url, dataDir: "/nonexistent" });
    await createTenant({ prisma: raw.prisma, secretBox: createSecretBox(SECRET_A) }, "Old");
    await raw.close();
    expect(await keyCheckRows(db.url)).toBe(0);

    const withB = createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url, ADMIN_JWT_SECRET: SECRET_B })), { log: quiet });
    await expect(withB).rejects.toThrow(/sealed with another key than this process's ADMIN_JWT_SECRET/);
    expect(await keyCheckRows(db.url)).toBe(0); // B's check was not stored

    const withA = await createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url, ADMIN_JWT_SECRET: SECRET_A })), { log: quiet });
    await withA.close();
    expect(await keyCheckRows(db.url)).toBe(1);
    // from now on the stored check decides, whatever the rows say
    await expect(createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url, ADMIN_JWT_SECRET: SECRET_B })), { log: quiet })).rejects.toThrow(
      /ADMIN_JWT_SECRET/,
    );
  });

  it("an empty data set stores the check of its first key", async () => {
    const db = await isolatedDatabase("keycheck_empty");
    dbs.push(db);
    expect(await keyCheckRows(db.url)).toBe(0);
    const rt = await createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url, SECRET_ENCRYPTION_KEY: SECRET_B })), { log: quiet });
    await rt.close();
    expect(await keyCheckRows(db.url)).toBe(1);
    await expect(createRuntime(loadConfig(testEnv({ DATABASE_URL: db.url })), { log: quiet })).rejects.toThrow(/ADMIN_JWT_SECRET/);
  });
});

describe("a tenant's secret sealed under another key", () => {
  let server: TestServer;
  const logged: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) logged.push(JSON.parse(line));
        done();
      },
    });
    const app = await buildApp(loadConfig(testEnv({ ADMIN_JWT_SECRET: TEST_ADMIN_SECRET })), {
      log: pino({ level: "info" }, sink),
      migrate: false,
    });
    const url = await app.start();
    server = { url, app, stop: () => app.stop() };
  });
  afterAll(() => server?.stop());

  it("answers 503 secret_key_mismatch (REST and GraphQL), never 500, and logs one line", async () => {
    const t = await createTestTenant(server);
    // restored from another deployment: its identity secret sealed under that deployment's key
    const c = new pg.Client({ connectionString: inject("databaseUrl") });
    await c.connect();
    await c.query("UPDATE tenants SET identity_secret_enc = $1 WHERE id = $2", [
      createSecretBox(SECRET_B).seal(t.identitySecret),
      t.tenantId,
    ]);
    await c.end();

    expect((await t.api.put("/api/v1/discussions/restored", { title: "Restored" })).status).toBe(201); // no secret needed
    const reader = await t.reader("r1");
    for (let i = 0; i < 2; i++) {
      const r = await reader.post("/api/v1/discussions/restored/comments", { body: "hello" });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ code: "secret_key_mismatch", status: 503 });
      expect(r.body.detail).toMatch(/another encryption key/);
    }
    const g = await reader.raw("POST", "/graphql", {
      query: 'mutation { postComment(discussionId: "restored", input: { body: "hi" }) { id } }',
    });
    expect(JSON.stringify(g.body)).toContain("secret_key_mismatch");
    expect(JSON.stringify(g.body)).not.toContain("internal_error");

    const lines = logged.filter((l) => String(l.msg).includes("sealed under another key"));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe(50);
    expect(JSON.stringify(lines[0])).not.toContain(t.identitySecret);
    expect(logged.filter((l) => l.level === 50 && l !== lines[0])).toEqual([]); // nothing logged as an internal error
  });
});
