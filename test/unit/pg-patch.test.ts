// pg as patches/pg+8.23.1.patch leaves it. Its rows: pg 8.23 built each result's template
// row on a null-prototype object, whose members live in dictionary mode, and copied it once a query
// and once a row: ~9 µs a query of the 27 columns every comment read selects. The patch builds it on a
// plain object unless a column is named __proto__. Checked here against the machine's PostgreSQL:
// the rows are what they were (a column named __proto__ included); and in a child process, that the
// template is built without a null-prototype object unless a column needs one (1 and 1 without the patch).
// Its query configs: every query's { name, text, values } was copied through its property descriptors
// (~2-3 µs a query); a plain object is now copied by spread, anything else as before.
// Its named statements: pg 8.23 sent a Describe with every execution, and parsed the same
// RowDescription and looked up its parsers again each time; a named statement is now described once
// a connection and executed without a Describe after that (rows, fields and errors as before).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";

const DATABASE_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const client = new pg.Client({ connectionString: DATABASE_URL });
const connected = client.connect();
afterAll(() => client.end());

const MANY = Array.from({ length: 27 }, (_, i) => `${i} AS c${i}`).join(", ");

/** A client of its own that counts the RowDescription messages its connection receives. */
async function countingClient(config: pg.ClientConfig = {}) {
  const c = new pg.Client({ connectionString: DATABASE_URL, ...config });
  await c.connect();
  const counted = { descriptions: 0 };
  (c as unknown as { connection: { on(e: string, f: () => void): void } }).connection.on("rowDescription", () => counted.descriptions++);
  return { c, counted };
}

describe("pg's named statements (patched)", () => {
  it("are described once a connection: every later execution answers the same rows and fields without a Describe", async () => {
    const { c, counted } = await countingClient();
    try {
      const text =
        "SELECT $1::int AS n, $2::text AS t, '2026-11-26T10:00:00Z'::timestamptz AS at, '{\"a\": 1}'::jsonb AS j, NULL::text AS none";
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await c.query({ name: "described_once", text, values: [i, `v${i}`] }));
      expect(counted.descriptions).toBe(1);
      results.forEach((r, i) => {
        expect(r.rows).toEqual([{ n: i, t: `v${i}`, at: new Date("2026-11-26T10:00:00Z"), j: { a: 1 }, none: null }]);
        expect(r.fields.map((f) => f.name)).toEqual(["n", "t", "at", "j", "none"]);
        expect(r.rowCount).toBe(1);
        expect(r.command).toBe("SELECT");
      });
      // by its name alone, as arrays, and with no row: the kept description still names the fields
      const byName = await c.query({ name: "described_once", values: [9, "x"], rowMode: "array" } as unknown as pg.QueryArrayConfig);
      expect(byName.rows).toEqual([[9, "x", new Date("2026-11-26T10:00:00Z"), { a: 1 }, null]]);
      const none = "SELECT $1::int AS n WHERE $1 > 10";
      await c.query({ name: "no_rows", text: none, values: [1] });
      const empty = await c.query({ name: "no_rows", text: none, values: [2] });
      expect(empty.rows).toEqual([]);
      expect(empty.fields.map((f) => f.name)).toEqual(["n"]);
      expect(empty.rowCount).toBe(0);
      expect(counted.descriptions).toBe(2);
      // a statement of no rows at all (NoData) keeps working, described each time as before
      await c.query("CREATE TEMP TABLE described_temp (n int)");
      for (let i = 0; i < 3; i++) {
        const r = await c.query({ name: "insert_temp", text: "INSERT INTO described_temp VALUES ($1)", values: [i] });
        expect(r.rowCount).toBe(1);
      }
      expect((await c.query({ name: "sum_temp", text: "SELECT sum(n)::int AS s FROM described_temp" })).rows).toEqual([{ s: 3 }]);
    } finally {
      await c.end();
    }
  });

  it("fail as PostgreSQL refuses them when their result type changed, and never read rows with the old fields", async () => {
    const { c, counted } = await countingClient();
    try {
      await c.query("CREATE TEMP TABLE changing (a int, b text)");
      await c.query("INSERT INTO changing VALUES (1, 'one')");
      const q = { name: "changing_all", text: "SELECT * FROM changing" };
      await c.query(q);
      expect((await c.query(q)).rows).toEqual([{ a: 1, b: "one" }]);
      await c.query("ALTER TABLE changing ADD COLUMN c int DEFAULT 7");
      await expect(c.query(q)).rejects.toThrow(/cached plan must not change result type/);
      // the connection goes on: other statements, and the same one under a name of its own
      expect((await c.query({ name: "changing_all_2", text: "SELECT * FROM changing" })).rows).toEqual([{ a: 1, b: "one", c: 7 }]);
      expect(counted.descriptions).toBeGreaterThanOrEqual(2);
    } finally {
      await c.end();
    }
  });

  it("are described again for other type parsers, and for each connection", async () => {
    const { c, counted } = await countingClient();
    const { c: other, counted: otherCounted } = await countingClient();
    try {
      const text = "SELECT 42::int8 AS big";
      await c.query({ name: "typed", text });
      expect((await c.query({ name: "typed", text })).rows).toEqual([{ big: "42" }]);
      const asNumber = {
        getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as "text")),
      };
      const typed = await c.query({ name: "typed", text, types: asNumber } as pg.QueryConfig);
      expect(typed.rows).toEqual([{ big: 42 }]);
      expect(counted.descriptions).toBe(2);
      await other.query({ name: "typed", text });
      await other.query({ name: "typed", text });
      expect(otherCounted.descriptions).toBe(1);
    } finally {
      await Promise.all([c.end(), other.end()]);
    }
  });
});

describe("pg result rows (patched)", () => {
  it("come back as plain objects with every column, in order", async () => {
    await connected;
    const { rows } = await client.query(`SELECT ${MANY} FROM generate_series(1, 2)`);
    expect(rows).toHaveLength(2);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.keys(rows[0] as object)).toEqual(Array.from({ length: 27 }, (_, i) => `c${i}`));
    expect((rows[1] as Record<string, number>).c26).toBe(26);
  });

  it("keep a column named __proto__ as a member, never as the row's prototype", async () => {
    await connected;
    const { rows } = await client.query(`SELECT 1 AS a, '{"polluted": true}'::json AS "__proto__"`);
    const row = rows[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(row, "__proto__")).toBe(true);
    expect((row as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("are copied from a template built without a null-prototype object (unless a column is named __proto__)", () => {
    const result = createRequire(import.meta.url).resolve("pg/lib/result.js");
    // counts Object.create(null) while pg's Result takes a row description of 27 columns, then one with __proto__
    const script = `
      const Result = require(${JSON.stringify(result)});
      const create = Object.create;
      let nullObjects = 0;
      Object.create = (proto, ...rest) => { if (proto === null) nullObjects++; return create(proto, ...rest); };
      const fields = Array.from({ length: 27 }, (_, i) => ({ name: "c" + i, dataTypeID: 25, format: "text" }));
      new Result().addFields(fields);
      const plain = nullObjects;
      new Result().addFields([...fields, { name: "__proto__", dataTypeID: 25, format: "text" }]);
      process.stdout.write(plain + " " + (nullObjects - plain));
    `;
    const out = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(out).toBe("0 1");
  });

  it("copies a plain query config as an object of its own, without reading its property descriptors", () => {
    const utils = createRequire(import.meta.url).resolve("pg/lib/utils.js");
    // counts Object.getOwnPropertyDescriptors while pg normalizes a plain config, then one with a prototype of its own
    const script = `
      const { normalizeQueryConfig } = require(${JSON.stringify(utils)});
      const read = Object.getOwnPropertyDescriptors;
      let reads = 0;
      Object.getOwnPropertyDescriptors = (o) => { reads++; return read(o); };
      const plain = { name: "q", text: "SELECT $1", values: [1] };
      const copy = normalizeQueryConfig(plain, undefined, () => {});
      const plainReads = reads;
      class Submittable { constructor() { this.text = "SELECT 1"; } }
      const own = normalizeQueryConfig(new Submittable());
      process.stdout.write(JSON.stringify({
        plainReads, ownReads: reads - plainReads, copied: copy !== plain && copy.name === "q" && copy.values === plain.values,
        untouched: !("callback" in plain), ownKept: own instanceof Submittable && own.text === "SELECT 1",
      }));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as Record<string, unknown>;
    expect(out).toEqual({ plainReads: 0, ownReads: 1, copied: true, untouched: true, ownKept: true });
  });
});
