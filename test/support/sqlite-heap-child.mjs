// A child process for the reader's heap test (test/unit/import-sqlite-reader.test.ts): reads one
// small database READS times (env, default 4), each read asking for more than a 48 MiB JavaScript
// heap, with the reader the server runs (dist/, as the run's global setup built it). Prints each
// read's failure, one line each; the test runs it with NODE_OPTIONS=--max-semi-space-size=128, under
// which a reader on a worker thread took this whole process down at its heap bound in every run.
import process from "node:process";
import initSqlJs from "sql.js";
import { openImportedSqlite } from "../../dist/modules/portability/sqlite-reader.js";

const SQL = await initSqlJs();
const made = new SQL.Database();
made.run("CREATE TABLE t (id INTEGER PRIMARY KEY)");
const file = made.export();
made.close();
for (let i = 0; i < Number(process.env.READS ?? 4); i++) {
  const db = await openImportedSqlite(file, { limits: { heapMb: 48, batchRows: 1_000_000 } });
  const failure = await db
    .rows("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000000) SELECT x, 'row ' || x AS t FROM n")
    .next()
    .then(
      () => "read whole",
      (err) => String(err.message),
    );
  process.stdout.write(`${failure}\n`);
  await db.close();
}
