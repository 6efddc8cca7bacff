// npm run bench:pg-cost — the PostgreSQL work of one POST, counted in instructions, not seconds: the
// service's statement (`SELECT eng_post_comment(…)`, with the arguments the service sends) against the
// floor's (bench/floor/statements.ts), each run by a single-user PostgreSQL backend under valgrind's
// callgrind, which counts the instructions it executes. A count does not depend on what else the
// machine is doing (two runs of the same build agree within about 1 %: the comment ids are random),
// so a difference of 2 % is read in one run where `npm run bench`'s throughput needs many runs to
// show 10 %. It leaves out what the machine's load adds (cache misses, waits on locks, the disk) and
// counts PostgreSQL only: read it beside `npm run bench`, never instead of it.
//
// How: a PostgreSQL of the bench's own (test/support/own-services.ts) gets the service's schema
// (migrated) and the floor's tables, each seeded with BENCH_SEED comments spread over 1,000
// discussions by 100 readers (so every index has a realistic depth), then is stopped. Each row copies
// that data directory, applies the row's change (a variant drops what a feature keeps), and runs the
// same prepared statement BENCH_POSTS + 50 times, then 50 times, on two fresh copies: the difference,
// divided by BENCH_POSTS, is a post's instructions, without the backend's start-up or the first posts'
// catalog loading. Rows: the short body `npm run bench`'s post rows send and the typical formatted
// comment, spread over 1,000 discussions and on one hot discussion; and the service's spread row
// without the partial indexes of the three orders by a count (top, score, best), the feature's cost
// per post. (Comment search adds nothing here: its documents are written after the commit, by the
// search projector, src/modules/comments/engine/search-projector.ts.) The `floor-tables-*` rows
// run the floor's one statement written onto the service's own tables (FLOOR_POST_ON_SERVICE_TABLES, on
// the service's seeded copy): the same storage without the service's rules and functions, so the
// service's row against it is what its code costs the database, and it against the floor's what the
// storage costs.
// Env: BENCH_SEED (20000), BENCH_POSTS (200), BENCH_ROWS (comma list of row keys; default all),
// BENCH_KEEP_CALLGRIND (a folder: each counted run's callgrind file is kept there, for callgrind_annotate),
// BENCH_VARIANT (a file of statements run on the service's copies first: below).
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { migratePostgres } from "../src/db/migrate.js";
import { positionalArgs } from "../src/events/statement.js";
import { DB_FUNCTION_ARGS, type DbArgs } from "../src/generated/db-functions.js";
import { renderBody } from "../src/lib/markdown.js";
import { newCommentText } from "../src/modules/comments/dto.js";
import { envelopeMembers } from "../src/events/stored-envelope.js";
import { asPostgres, pgBin, startOwnPostgres } from "../test/support/own-services.js";
import { TYPICAL_BODY } from "./bodies.js";
import { FLOOR_POST, FLOOR_POST_ON_SERVICE_TABLES, FLOOR_SCHEMA, floorBodyHtml } from "./floor/statements.js";
import { fmtTable } from "./support.js";

const SEED = Number(process.env.BENCH_SEED ?? 20_000);
const POSTS = Number(process.env.BENCH_POSTS ?? 200);
/** posts run before the counted ones in both runs of a row: their catalog and plan caches are warm */
const WARM = 50;
const SHORT_BODY = "hello from the bench";
const ADMIN_JWT_SECRET = "bench-admin-secret-0123456789abcdef0123456789";

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("bench:pg-cost needs valgrind (Debian's package valgrind)");
  process.exit(1);
}

interface Post {
  discussion: string;
  reader: number;
  body: string;
  at: Date;
}

/** What a row posts: its discussions (spread over 1,000 or one hot one) and its body. */
/** the seeded comments are written 100 ms apart up to an hour ago, the counted ones after them */
const START = Date.now() - 3_600_000;

function posts(n: number, opts: { spread: boolean; body: string; seed: number; from: number }): Post[] {
  let x = opts.seed;
  const next = () => (x = (x * 1_103_515_245 + 12_345) % 2_147_483_648); // the same sequence every run
  return Array.from({ length: n }, (_, i) => ({
    discussion: opts.spread ? `d${next() % 1000}` : "hot",
    reader: next() % 100,
    body: opts.body,
    at: new Date(opts.from + i * 100),
  }));
}

const commentId = () => `cmt_${randomBytes(12).toString("base64url")}`;

/** The service's arguments for a post, in its function's order: what src/modules/comments/write.ts sends for an approved comment. */
function serviceArgs(tenant: string, p: Post): unknown[] {
  const html = renderBody(p.body, { markdown: true, images: false }).html;
  const id = commentId();
  const author = { id: `r${p.reader}`, name: `Reader ${p.reader}`, avatarUrl: null, badge: null };
  const args: DbArgs<"eng_post_comment"> = {
    tenant,
    discussion: p.discussion,
    id,
    reader: author.id,
    name: author.name,
    avatar: null,
    badge: null,
    body: p.body,
    bodyHtml: html,
    parent: null,
    status: "approved",
    reason: null,
    trustedStatus: "approved",
    trustedReason: null,
    hold: 0,
    at: p.at,
    kind: null,
    createdAt: null,
    comment: newCommentText({
      id,
      discussionId: p.discussion,
      parentId: null,
      author,
      body: p.body,
      bodyHtml: html,
      status: "approved",
      createdAt: p.at,
      kind: "comment",
    }),
    eventMembers: envelopeMembers("comment_created", tenant, p.discussion, p.at),
    atText: JSON.stringify(p.at.toISOString()),
  };
  return positionalArgs("eng_post_comment", args);
}

/** The floor server's arguments for a post (bench/floor/server.ts). */
function floorArgs(p: Post): unknown[] {
  const id = commentId();
  const eventId = randomUUID();
  const author = { id: `r${p.reader}`, name: `Reader ${p.reader}`, avatarUrl: null };
  const comment = { id, discussionId: p.discussion, parentId: null, author, body: p.body, status: "approved", pinned: false };
  const envelope = { id: eventId, type: "comment_created", tenantId: "ten_floor", discussionId: p.discussion, data: { comment } };
  return ["ten_floor", p.discussion, id, author.id, author.name, null, p.body, eventId, JSON.stringify(envelope)];
}

/** The floor's arguments on the service's tables: the service's tenant, and the body's HTML as the floor makes it. */
function floorTablesArgs(tenant: string, p: Post): unknown[] {
  return [tenant, ...floorArgs(p).slice(1), floorBodyHtml(p.body)];
}

const SERVICE_POST = `SELECT eng_post_comment(${DB_FUNCTION_ARGS.eng_post_comment.map((_, i) => `$${i + 1}`).join(", ")}) AS r`;
const oneLine = (sql: string) => sql.replace(/\s+/g, " ").trim();

/** A value as an SQL literal on one line (a single-user backend reads a statement a line): E'…' with \\n for a line break. */
const literal = (v: unknown): string => {
  if (v === null || v === undefined) return "NULL";
  const text = v instanceof Date ? v.toISOString() : String(v);
  return `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''").replaceAll("\n", "\\n").replaceAll("\r", "\\r")}'`;
};

// ---------------------------------------------------------------- the data directory

const own = await startOwnPostgres();
const urlOf = (db: string) => Object.assign(new URL(own.url), { pathname: `/${db}` }).toString();
const admin = new pg.Client({ connectionString: own.url });
await admin.connect();
await admin.query("CREATE DATABASE svc");
await admin.query("CREATE DATABASE floor");
await admin.end();
await migratePostgres(urlOf("svc"));
const created = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "bench", "--json"], {
  env: { ...process.env, DATABASE_URL: urlOf("svc"), ADMIN_JWT_SECRET, LOG_LEVEL: "error" },
  encoding: "utf8",
});
const tenant = (JSON.parse(created.trim().split("\n").pop()!) as { tenantId: string }).tenantId;

const seedWith = async (db: string, text: string, args: (p: Post) => unknown[], setup?: string) => {
  const c = new pg.Client({ connectionString: urlOf(db) });
  await c.connect();
  if (setup) await c.query(setup);
  const seedPosts = posts(SEED, { spread: true, body: SHORT_BODY, seed: 1, from: START - SEED * 100 });
  for (let i = 0; i < seedPosts.length; i += 500) {
    await c.query("BEGIN");
    for (const p of seedPosts.slice(i, i + 500)) await c.query({ name: "post", text, values: args(p) });
    await c.query("COMMIT");
  }
  await c.query("VACUUM ANALYZE");
  await c.end();
};
console.log(`seeding ${SEED} comments on each side…`);
await seedWith("svc", SERVICE_POST, (p) => serviceArgs(tenant, p));
await seedWith("floor", FLOOR_POST, floorArgs, `${FLOOR_SCHEMA}; INSERT INTO f_tenants VALUES ('ten_floor', 'x') ON CONFLICT DO NOTHING`);
await own.halt();

// ---------------------------------------------------------------- the rows

const work = mkdtempSync(join(tmpdir(), "eng-pg-cost-"));
const user = asPostgres();
if (user.uid !== undefined) chownSync(work, user.uid, user.gid!);
chmodSync(work, 0o777);
const postgres = join(pgBin(), "postgres");

/** Runs `lines` (one statement a line) in a single-user backend on `db` of `dir`; under callgrind, its instruction count. */
function single(dir: string, db: string, lines: string[], counted: boolean): number {
  const script = join(work, `script-${randomUUID()}.sql`);
  writeFileSync(script, `${lines.join("\n")}\n`);
  const out = join(work, `callgrind-${randomUUID()}.out`);
  const command = counted
    ? ["valgrind", "--tool=callgrind", `--callgrind-out-file=${out}`, postgres, "--single", "-D", dir, "-F", db]
    : [postgres, "--single", "-D", dir, "-F", db];
  const run = spawnSync(command[0]!, command.slice(1), { input: readFileSync(script), encoding: "utf8", maxBuffer: 256 << 20, ...user });
  const printed = `${run.stdout}\n${run.stderr}`;
  if (run.status !== 0 || /\bERROR:/.test(printed)) {
    throw new Error(
      `single-user postgres on ${db} failed:\n${printed
        .split("\n")
        .filter((l) => /ERROR|FATAL/.test(l))
        .slice(0, 5)
        .join("\n")}`,
    );
  }
  if (!counted) return 0;
  // BENCH_KEEP_CALLGRIND=<dir>: each counted run's callgrind file is kept there (callgrind_annotate --inclusive=yes reads it)
  if (process.env.BENCH_KEEP_CALLGRIND)
    cpSync(out, join(process.env.BENCH_KEEP_CALLGRIND, `${db}-${lines.length}-${randomUUID().slice(0, 8)}.out`));
  const summary = /^summary: (\d+)/m.exec(readFileSync(out, "utf8"));
  if (!summary) throw new Error("callgrind wrote no summary");
  return Number(summary[1]);
}

interface Row {
  key: string;
  label: string;
  db: "svc" | "floor";
  spread: boolean;
  body: string;
  /** statements run (not counted) on the row's copy before it: what the variant takes away */
  change?: string[];
  /** the floor's statement on the service's tables (db "svc") */
  onTables?: boolean;
}

const DROP_ORDERS = ["DROP INDEX comments_list_top_idx;", "DROP INDEX comments_list_score_idx;", "DROP INDEX comments_list_best_idx;"];
const ROWS: Row[] = [
  { key: "floor-spread", label: "floor, 1,000 discussions, short body", db: "floor", spread: true, body: SHORT_BODY },
  { key: "service-spread", label: "service, 1,000 discussions, short body", db: "svc", spread: true, body: SHORT_BODY },
  { key: "floor-hot", label: "floor, one discussion, short body", db: "floor", spread: false, body: SHORT_BODY },
  { key: "service-hot", label: "service, one discussion, short body", db: "svc", spread: false, body: SHORT_BODY },
  { key: "floor-typical", label: "floor, 1,000 discussions, typical formatted comment", db: "floor", spread: true, body: TYPICAL_BODY },
  { key: "service-typical", label: "service, 1,000 discussions, typical formatted comment", db: "svc", spread: true, body: TYPICAL_BODY },
  {
    key: "floor-tables-spread",
    label: "floor on the service's tables, 1,000 discussions, short body",
    db: "svc",
    spread: true,
    body: SHORT_BODY,
    onTables: true,
  },
  {
    key: "floor-tables-hot",
    label: "floor on the service's tables, one discussion, short body",
    db: "svc",
    spread: false,
    body: SHORT_BODY,
    onTables: true,
  },
  {
    key: "floor-tables-typical",
    label: "floor on the service's tables, 1,000 discussions, typical formatted comment",
    db: "svc",
    spread: true,
    body: TYPICAL_BODY,
    onTables: true,
  },
  {
    key: "service-no-orders",
    label: "service, 1,000 discussions, short body, without the top/score/best partial indexes",
    db: "svc",
    spread: true,
    body: SHORT_BODY,
    change: DROP_ORDERS,
  },
];
const wanted = process.env.BENCH_ROWS?.split(",");
/**
 * BENCH_VARIANT=<file>: SQL statements, separated by lines holding only `;;` (no `--` comments: each is
 * run as one line), run on the service's copy before each of its rows: a lever measured before it is
 * built (a function replaced, an index dropped)
 */
const VARIANT = process.env.BENCH_VARIANT
  ? readFileSync(process.env.BENCH_VARIANT, "utf8").split(/^;;$/m).map(oneLine).filter(Boolean)
  : [];

/** One row: instructions a post (two copies of the data: WARM + POSTS posts, and WARM). */
function measure(row: Row): number {
  const all = posts(WARM + POSTS, { spread: row.spread, body: row.body, seed: 2, from: START });
  const prepare = row.onTables
    ? `PREPARE p(text, text, text, text, text, text, text, uuid, text, text) AS ${oneLine(FLOOR_POST_ON_SERVICE_TABLES)};`
    : row.db === "svc"
      ? `PREPARE p AS ${SERVICE_POST};`
      : `PREPARE p(text, text, text, text, text, text, text, uuid, text) AS ${oneLine(FLOOR_POST)};`;
  const argsOf = (p: Post) => (row.onTables ? floorTablesArgs(tenant, p) : row.db === "svc" ? serviceArgs(tenant, p) : floorArgs(p));
  const execute = all.map((p) => `EXECUTE p(${argsOf(p).map(literal).join(", ")});`);
  const counts = [WARM + POSTS, WARM].map((n) => {
    const copy = join(work, `data-${randomUUID()}`);
    cpSync(own.dir, copy, { recursive: true });
    chmodSync(copy, 0o700); // PostgreSQL refuses a data directory others may read (the copy's mode is the umask's)
    if (user.uid !== undefined) execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, copy]);
    try {
      const change = [...(row.change ?? []), ...(row.db === "svc" && !row.onTables ? VARIANT : [])];
      if (change.length) single(copy, row.db, change, false);
      return single(copy, row.db, [prepare, ...execute.slice(0, n)], true);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
  return (counts[0]! - counts[1]!) / POSTS;
}

const results: { row: Row; perPost: number }[] = [];
try {
  for (const row of ROWS) {
    if (wanted && !wanted.includes(row.key)) continue;
    process.stdout.write(`${row.key}… `);
    results.push({ row, perPost: measure(row) });
    console.log(`${Math.round(results.at(-1)!.perPost).toLocaleString("en-US")} instructions a post`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  await own.stop();
}

const floorOf = (r: Row) => results.find((x) => x.row.db === "floor" && x.row.spread === r.spread && x.row.body === r.body);
const tablesFloorOf = (r: Row) => results.find((x) => x.row.onTables && x.row.spread === r.spread && x.row.body === r.body);
const serviceSpread = results.find((x) => x.row.key === "service-spread");
console.log(
  `\nPostgreSQL instructions a POST (callgrind; ${SEED.toLocaleString("en-US")} comments seeded, ${POSTS} posts counted a row)\n`,
);
console.log(
  fmtTable(
    ["row", "instructions a post", "× the floor's", "× the floor's on the service's tables", "against the service's spread row"],
    results.map(({ row, perPost }) => {
      const floor = floorOf(row);
      const tables = tablesFloorOf(row);
      return [
        row.label,
        Math.round(perPost).toLocaleString("en-US"),
        row.db === "svc" && floor ? `${(perPost / floor.perPost).toFixed(2)}×` : "",
        row.db === "svc" && !row.onTables && !row.change && tables ? `${(perPost / tables.perPost).toFixed(2)}×` : "",
        row.change && serviceSpread ? `${(((perPost - serviceSpread.perPost) / serviceSpread.perPost) * 100).toFixed(1)} %` : "",
      ];
    }),
  ),
);
