// The planner setting the service gives its own statements (DATABASE_RANDOM_PAGE_COST, src/db/client.ts):
// random_page_cost 1.1 by default on PostgreSQL and the embedded database alike, through the plain-SQL
// pool and Prisma, inside transactions too, beside the URL's own startup options; `server` keeps the
// server's own. (Through a transaction-mode
// pooler it is set per transaction: test/engines/pooler.test.ts.)
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { openDatabase, type Database } from "../src/db/client.js";
import { isolatedDatabase } from "./support/database.js";
import { pgliteDataDir } from "./support/pglite-template.js";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function settingsOf(db: Database): Promise<string[]> {
  const [plain] = await db.sql.query<{ rpc: string }>("SELECT current_setting('random_page_cost') AS rpc", []);
  const viaPrisma = await db.prisma.$queryRaw<{ rpc: string }[]>`SELECT current_setting('random_page_cost') AS rpc`;
  const inTransaction = await db.prisma.$transaction(
    async (tx) => tx.$queryRaw<{ rpc: string }[]>`SELECT current_setting('random_page_cost') AS rpc`,
  );
  return [plain!.rpc, viaPrisma[0]!.rpc, inTransaction[0]!.rpc];
}

describe("DATABASE_RANDOM_PAGE_COST", () => {
  it("is 1.1 unless told otherwise, and `server` or a number is taken; anything else is refused", () => {
    expect(loadConfig({}).DATABASE_RANDOM_PAGE_COST).toBe(1.1);
    expect(loadConfig({ DATABASE_RANDOM_PAGE_COST: "server" }).DATABASE_RANDOM_PAGE_COST).toBe("server");
    expect(loadConfig({ DATABASE_RANDOM_PAGE_COST: "2" }).DATABASE_RANDOM_PAGE_COST).toBe(2);
    expect(() => loadConfig({ DATABASE_RANDOM_PAGE_COST: "0" })).toThrow(/DATABASE_RANDOM_PAGE_COST/);
    expect(() => loadConfig({ DATABASE_RANDOM_PAGE_COST: "1; DROP TABLE x" })).toThrow(/DATABASE_RANDOM_PAGE_COST/);
  });

  it("plans the service's statements on PostgreSQL with it, and leaves the server's own when not set", async () => {
    const pgdb = await isolatedDatabase("planner");
    cleanups.push(() => pgdb.drop());
    const set = await openDatabase({ databaseUrl: pgdb.url, dataDir: "/nonexistent", randomPageCost: 1.1 });
    cleanups.push(() => set.close());
    expect(await settingsOf(set)).toEqual(["1.1", "1.1", "1.1"]);
    // the URL's own startup options stay beside it
    const url = new URL(pgdb.url);
    url.searchParams.set("options", "-c work_mem=5MB");
    const withOptions = await openDatabase({ databaseUrl: url.toString(), dataDir: "/nonexistent", randomPageCost: 1.1 });
    cleanups.push(() => withOptions.close());
    expect(await withOptions.sql.query("SELECT current_setting('random_page_cost') AS rpc, current_setting('work_mem') AS wm", [])).toEqual(
      [{ rpc: "1.1", wm: "5MB" }],
    );
    const server = await openDatabase({ databaseUrl: pgdb.url, dataDir: "/nonexistent" });
    cleanups.push(() => server.close());
    expect(await settingsOf(server)).not.toContain("1.1");
  });

  it("plans a named statement once per connection (a generic plan from its first run), whatever the server's plan_cache_mode", async () => {
    const pgdb = await isolatedDatabase("planner_generic");
    cleanups.push(() => pgdb.drop());
    const db = await openDatabase({ databaseUrl: pgdb.url, dataDir: "/nonexistent", poolSize: 1 });
    cleanups.push(() => db.close());
    await db.sql.query("CREATE TABLE t (k int, v text)", []);
    for (let i = 0; i < 8; i++) await db.sql.query("SELECT v FROM t WHERE k = $1", [i], "planner_named");
    // PostgreSQL's default (auto) would make a custom plan for each of the first five runs
    expect(
      await db.sql.query("SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name = 'planner_named'", []),
    ).toEqual([{ generic_plans: 8, custom_plans: 0 }]);
  });

  it("plans the embedded database's statements with it", async () => {
    // a copy of the run's migrated PGlite folder: no initdb here (test/embedded.test.ts makes one)
    const dir = await pgliteDataDir("planner-");
    const embedded = await openDatabase({ dataDir: dir, randomPageCost: 1.1 });
    cleanups.push(async () => {
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    });
    expect(await settingsOf(embedded)).toEqual(["1.1", "1.1", "1.1"]);
  });
});
