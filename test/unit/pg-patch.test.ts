// pg as patches/pg+8.23.1.patch leaves it. Its rows: pg 8.23 built each result's template
// row on a null-prototype object, whose members live in dictionary mode, and copied it once a query
// and once a row: ~9 µs a query of the 27 columns every comment read selects. The patch builds it on a
// plain object unless a column is named __proto__. Checked here against the machine's PostgreSQL:
// the rows are what they were (a column named __proto__ included); and in a child process, that the
// template is built without a null-prototype object unless a column needs one (1 and 1 without the patch).
// Its query configs: every query's { name, text, values } was copied through its property descriptors
// (~2-3 µs a query); a plain object is now copied by spread, anything else as before.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";

const DATABASE_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const client = new pg.Client({ connectionString: DATABASE_URL });
const connected = client.connect();
afterAll(() => client.end());

const MANY = Array.from({ length: 27 }, (_, i) => `${i} AS c${i}`).join(", ");

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
