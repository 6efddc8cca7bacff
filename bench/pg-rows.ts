// npm run bench:pg-rows — what pg (node-postgres) spends on a result's row description and its row,
// for the 27 columns every comment read selects (src/modules/comments/comment-row.ts), as installed
// (patches/pg+8.23.1.patch: the template row built on a plain object) against pg 8.23's own way (the
// template built on a null-prototype object, in dictionary mode, then copied), timed here side by side
// in one process. Prints µs a query; the floor is the same work done the patched way.
import { createRequire } from "node:module";
import pg from "pg";
import { fmtTable } from "./support.js";

const require = createRequire(import.meta.url);
// pg's Result: addFields(fields) takes a row description, parseRow(values) makes a row
const Result = require("pg/lib/result.js") as new () => {
  addFields(fields: unknown[]): void;
  parseRow(values: unknown[]): unknown;
  _prebuiltEmptyResultObject: Record<string, unknown>;
};

const COLUMNS = 27;
const fields = Array.from({ length: COLUMNS }, (_, i) => ({ name: `column_${i}`, dataTypeID: 25, format: "text" }));
const values = Array.from({ length: COLUMNS }, (_, i) => `value ${i}`);

/** pg 8.23's addFields as it was before the patch (node_modules/pg/lib/result.js), on pg's own Result. */
function unpatchedAddFields(r: InstanceType<typeof Result> & { fields?: unknown; _parsers?: unknown[] }): void {
  r.fields = fields;
  r._parsers = new Array(fields.length);
  const row = Object.create(null) as Record<string, unknown>;
  for (let i = 0; i < fields.length; i++) {
    const desc = fields[i]!;
    row[desc.name] = null;
    r._parsers[i] = pg.types.getTypeParser(desc.dataTypeID, "text");
  }
  r._prebuiltEmptyResultObject = { ...row };
}

function time(label: string, run: () => void, n = 200_000): [string, number] {
  for (let i = 0; i < n / 10; i++) run(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) run();
  return [label, Number(process.hrtime.bigint() - start) / n / 1000];
}

const rows: [string, number][] = [];
for (let round = 0; round < 3; round++) {
  rows.push(
    time("installed pg: row description + one row", () => {
      const r = new Result();
      r.addFields(fields);
      r.parseRow(values);
    }),
    time("pg 8.23 unpatched: row description + one row", () => {
      const r = new Result();
      unpatchedAddFields(r);
      r.parseRow(values);
    }),
  );
}
console.log(`\npg's result for ${COLUMNS} text columns, µs a query (three rounds)\n`);
console.log(
  fmtTable(
    ["what", "µs a query"],
    rows.map(([l, us]) => [l, us.toFixed(2)]),
  ),
);
