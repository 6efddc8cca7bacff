// DATABASE_URL naming a database that does not exist (src/db/ensure-database.ts): created at start-up
// (server and CLI) when the role may, else one line saying how; against the machine's PostgreSQL,
// with random database names and a role of the test's own, all dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { pino } from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createRuntime } from "../src/runtime.js";
import { ensureDatabase } from "../src/db/ensure-database.js";
import { StartupError } from "../src/lib/startup-error.js";
import { NODE_FLAGS, runProcess } from "./support/process.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { testEnv } from "./support/server.js";

const adminUrl = () => inject("adminDatabaseUrl");
const created: string[] = [];
const roles: string[] = [];

async function asAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const exists = (name: string) =>
  asAdmin(async (c) => (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1);

/** The admin URL pointed at `name` (as `user`, when given). */
function urlFor(name: string, user?: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${encodeURIComponent(name)}`;
  if (user) u.username = user;
  return u.toString();
}

afterAll(async () => {
  await asAdmin(async (c) => {
    for (const name of created) await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
    for (const role of roles) await c.query(`DROP ROLE IF EXISTS ${c.escapeIdentifier(role)}`);
  });
});

describe("a missing PostgreSQL database", { timeout: 120_000 }, () => {
  it("is created by the CLI's first command, which then migrates it", async () => {
    const name = `eng_new_${randomBytes(6).toString("hex")}`;
    created.push(name);
    expect(await exists(name)).toBe(false);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: urlFor(name),
      ADMIN_JWT_SECRET: "ensure-db-secret-0123456789abcdef0123456789",
    };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const r = await runCliInProcess(["migrate"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Applied: \d+_init/);
    expect(await exists(name)).toBe(true);
    const again = await runCliInProcess(["migrate"], env);
    expect(again.stdout).toBe("Database is up to date.\n");
  });

  it("is created at start-up, whatever characters its name holds (a quoted identifier)", async () => {
    const name = `eng new "q" ${randomBytes(4).toString("hex")}`;
    created.push(name);
    const logs: string[] = [];
    const log = pino({ level: "info" }, { write: (l: string) => void logs.push(l) });
    const rt = await createRuntime(loadConfig(testEnv({ DATABASE_URL: urlFor(name) })), { log });
    await rt.close();
    expect(await exists(name)).toBe(true);
    expect(logs.join("")).toContain("created the database named by DATABASE_URL");
    // a second start finds it
    expect(await ensureDatabase(urlFor(name), 4000)).toBe("exists");
  });

  it("a role that may not create databases gets one line saying how", async () => {
    const role = `eng_nocreate_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await asAdmin((c) => c.query(`CREATE ROLE ${role} LOGIN NOCREATEDB`));
    const name = `eng_never_${randomBytes(6).toString("hex")}`;
    created.push(name);
    const err = await ensureDatabase(urlFor(name, role), 4000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    const message = (err as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain(`The database "${name}" of DATABASE_URL does not exist`);
    expect(message).toContain(`role "${role}" could not create it (permission denied to create database)`);
    expect(message).toContain(`createdb -h 127.0.0.1 -p 5432 -U postgres ${name}`);
    expect(message).toContain(`ALTER ROLE "${role}" CREATEDB`);
    expect(await exists(name)).toBe(false);

    // the server, as `npm start` runs it (with the tests' NODE_FLAGS): that one line on stderr, exit 1,
    // no stack trace
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: urlFor(name, role),
      ADMIN_JWT_SECRET: "ensure-db-secret-0123456789abcdef0123456789",
      PORT: "0",
    };
    for (const k of ["REDIS_URL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const server = await runProcess(process.execPath, [...NODE_FLAGS, "dist/main.js"], env);
    expect(server.code).toBe(1);
    expect(server.stderr.trim()).toBe(message);
  });

  it("a server that cannot be reached is one line too", async () => {
    const u = new URL(adminUrl());
    u.port = "1"; // nothing listens there
    const err = await ensureDatabase(u.toString(), 2000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toMatch(
      /^Cannot connect to the database of DATABASE_URL \(postgresql:\/\/postgres@127\.0\.0\.1:1\/postgres\): .*ECONNREFUSED/,
    );
  });
});
