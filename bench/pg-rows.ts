// npm run bench:pg-rows — what pg (node-postgres) spends on a result's row description and its row,
// for the 27 columns every comment read selects (src/modules/comments/comment-row.ts), as installed
// (patches/pg+8.23.1.patch: the template row built on a plain object) against pg 8.23's own way (the
// template built on a null-prototype object, in dictionary mode, then copied), timed here side by side
// in one process. Prints µs a query; the floor is the same work done the patched way.
// Then, against the machine's PostgreSQL (DATABASE_URL, else 127.0.0.1:5432 as postgres): one named
// statement of those 27 columns executed again and again on one connection, as installed (described
// once on the connection, then executed without a Describe) against a Describe every time (pg 8.23's
// own way, by forgetting the connection's kept description before each query), alternating rounds:
// the client's CPU a query (process.cpuUsage) and the round trip's wall time.
import { createRequire } from "node:module";
import pg from "pg";
import { COMMENT_COLUMNS } from "../src/modules/comments/comment-row.js";
import { fastPgTypes } from "../src/db/timestamps.js";
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

// --- a named statement's executions against PostgreSQL: with and without its Describe

// the comment read's 27 columns, from a one-row VALUES of the same types (no tables needed)
const COMMENT_ROW = `SELECT ${COMMENT_COLUMNS} FROM (VALUES (
  'cmt_abcdefghijklmnop'::text, 'ten_1'::text, 'dsc_1'::text, NULL::text, 0, 'rdr_1'::text,
  repeat('A reader''s comment. ', 8), '<p>' || repeat('A reader''s comment. ', 8) || '</p>',
  'approved'::text, 'comment'::text, false, NULL::timestamptz, NULL::timestamptz, now(),
  '{"like": 3, "love": 1}'::jsonb, 4, 2, now(), NULL::text, 1, 0, 1, 0.2063::float8, NULL::text)) AS c(
  id, tenant_id, discussion_id, parent_id, depth, author_id, body, body_html, status, kind, pinned, edited_at,
  deleted_at, created_at, reaction_counts, reaction_total, reply_count, published_at, moderation_reason,
  upvotes, downvotes, score, vote_best, author_name)
  CROSS JOIN (VALUES ('Ada'::text, NULL::text, NULL::text, $1::text)) AS r(name, avatar_url, badge, id)`;

const client = new pg.Client({
  connectionString: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  types: fastPgTypes,
});
await client.connect();
const connection = (client as unknown as { connection: { describedStatements?: Map<string, unknown> } }).connection;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 5_000);

async function roundTrips(describeEveryTime: boolean): Promise<{ cpu: number; wall: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < QUERIES; i++) {
    if (describeEveryTime) connection.describedStatements?.clear();
    const { rows } = await client.query({ name: "pg_rows_comment", text: COMMENT_ROW, values: ["rdr_1"] });
    if (rows.length !== 1) throw new Error("the comment row is missing");
  }
  const wall = Number(process.hrtime.bigint() - t0) / QUERIES / 1000;
  const { user, system } = process.cpuUsage(cpu0);
  return { cpu: (user + system) / QUERIES, wall };
}

await roundTrips(false); // a warm-up round, not shown
if (!connection.describedStatements) {
  throw new Error("this pg keeps no descriptions: is patches/pg+8.23.1.patch applied (npm install)?");
}
const trips: (string | number)[][] = [];
for (let round = 0; round < 4; round++) {
  for (const every of round % 2 ? [true, false] : [false, true]) {
    const r = await roundTrips(every);
    trips.push([
      every ? "pg 8.23's way: a Describe every execution" : "installed pg: described once a connection",
      round + 1,
      r.cpu.toFixed(1),
      r.wall.toFixed(1),
    ]);
  }
}
await client.end();
console.log(`\nOne named statement of the comment read's ${COLUMNS} columns, ${QUERIES} executions a round on one connection\n`);
console.log(fmtTable(["what", "round", "client CPU µs a query", "wall µs a query"], trips));
