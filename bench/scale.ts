// npm run bench:scale — flat costs at a million comments (contract section 16). One server, two
// tenants: a big one (SCALE_COMMENTS comments in SCALE_THREADS discussions, plus one discussion of
// SCALE_BIG comments) and a small one (one discussion of SCALE_SMALL comments, deep enough for 500
// pages), both imported from generated Disqus files (bench/import-generate.ts), the two measured
// discussions' comments then given votes (as many as 15 up and 7 down each, set-based, with the
// tallies eng_vote keeps). Then the same reads and writes on each, SCALE_SAMPLES times one after
// another: the first page and the page 500 pages deep of the biggest discussion (newest, oldest, top,
// best, score), one comment by id, a post, a reaction, a
// stream connect replaying 1,000 events, the moderation queue (pending and rejected, across the tenant), the recent
// comments, a comment's replies, comment search (words, filters, a reader, links), and analytics over the 30 days the
// imported comments span, after a VACUUM (ANALYZE) of the imported tables. Prints the import times and a table of p50/p99 per tenant with the big
// tenant's p99 over the small one's: the goal is at most 1.5× (analytics under 1 s); the vote
// sorts' p99 on the big discussion over newest's, page for page (the goal: at most 1.5×); and how
// often those operations read each index of the comments' tables (each index is there for one). Ratios, not
// absolute numbers: the machine is noisy.
// Env: SCALE_COMMENTS (1,000,000), SCALE_THREADS (10,000), SCALE_BIG (100,000), SCALE_SMALL (10,600),
// SCALE_SAMPLES (200); BENCH_PG_URL and BENCH_REDIS_URL as for `npm run bench`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { EventSource } from "eventsource";
import { assertion, fmtTable, startBenchApp, type BenchEnv } from "./support.js";
import { createTenant } from "../src/modules/tenants/engine/tenants.js";
import { runImport } from "../src/modules/portability/engine/importer.js";

const COMMENTS = Number(process.env.SCALE_COMMENTS ?? 1_000_000);
const THREADS = Number(process.env.SCALE_THREADS ?? 10_000);
const BIG = Number(process.env.SCALE_BIG ?? 100_000);
const SMALL = Number(process.env.SCALE_SMALL ?? 10_600);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 200);
const DEPTH = 500;
/** the list sorts measured, first page and DEPTH pages deep */
const SORTS = ["newest", "oldest", "top", "best", "score"];
const PAGE = 20;
const REPLAY = 1000;
/** the imported comments' month (bench/import-generate.ts dates them from 2015-01-01) */
const WINDOW = { from: "2015-01-01T00:00:00.000Z", to: "2015-01-31T00:00:00.000Z" };

interface Tenant {
  name: string;
  tenantId: string;
  apiKey: string;
  identitySecret: string;
  /** the discussion the reads and writes go to */
  discussion: string;
}

async function generate(file: string, args: string[]): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/import-generate.ts", "--out", file, ...args], { stdio: "inherit" });
  const [code] = (await once(child, "exit")) as [number];
  if (code !== 0) throw new Error(`import-generate ${args.join(" ")}: exit ${code}`);
}

async function importFile(env: BenchEnv, tenantId: string, file: string): Promise<{ seconds: number; comments: number }> {
  const started = performance.now();
  const summary = await runImport(env.app.runtime.services.sql, createReadStream(file), {
    tenantId,
    format: "disqus",
    idFrom: "identifier",
    onError: "skip",
    now: new Date(),
  });
  if (summary.state !== "succeeded") throw new Error(`import of ${file}: ${summary.failure}`);
  return { seconds: (performance.now() - started) / 1000, comments: summary.comments };
}

const identity = (t: Tenant, sub: string) => assertion(t.identitySecret, sub, { name: `Bench ${sub}` });

async function call(url: string, t: Tenant, init: { method?: string; body?: unknown; identity?: string } = {}): Promise<unknown> {
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: {
      "X-API-Key": t.apiKey,
      ...(init.identity ? { "X-Service-Identity": init.identity } : {}),
      ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

/** p50 and p99 of `n` runs of `fn`, one after another, in ms */
async function measure(n: number, fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  await fn(-1); // warm
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/** The cursor after `pages` pages of the discussion in `sort` order. */
async function cursorAfter(base: string, t: Tenant, sort: string, pages: number): Promise<string> {
  let cursor = "";
  for (let i = 0; i < pages; i++) {
    const page = (await call(
      `${base}/discussions/${t.discussion}/comments?sort=${sort}&limit=${PAGE}${cursor ? `&cursor=${cursor}` : ""}`,
      t,
    )) as {
      nextCursor: string | null;
    };
    if (!page.nextCursor) throw new Error(`${t.name}: only ${i + 1} pages in ${sort} order`);
    cursor = page.nextCursor;
  }
  return cursor;
}

/** Time from opening the stream with Last-Event-ID to the last of `count` replayed events. */
function replay(url: string, t: Tenant, lastEventId: number, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const es = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), "X-API-Key": t.apiKey, "Last-Event-ID": String(lastEventId) },
        }),
    });
    const done = () => {
      es.close();
      resolve();
    };
    for (const type of ["comment_created", "reaction_toggled"]) {
      es.addEventListener(type, () => {
        if (++seen === count) done();
      });
    }
    es.onerror = (e) => {
      es.close();
      reject(new Error(`stream: ${String((e as { message?: string }).message ?? e.type)}`));
    };
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-scale-"));
  const env = await startBenchApp();
  const base = `${env.url}/api/v1`;
  try {
    const services = env.app.runtime.services;
    const make = async (name: string, discussion: string): Promise<Tenant> => {
      const created = await createTenant(services, name);
      await services.prisma.tenant.update({
        where: { id: created.tenantId },
        data: { settings: { rateLimits: { requestsPerMinute: 1_000_000, readerRequestsPerMinute: 1_000_000 } } },
      });
      return { name, discussion, ...created };
    };
    const big = await make("big", "big-0");
    const small = await make("small", "small-0");

    console.log(`generating: ${COMMENTS} comments in ${THREADS} discussions, one of ${BIG}, and a small tenant's ${SMALL}`);
    const files = { spread: join(dir, "spread.xml"), big: join(dir, "big.xml"), small: join(dir, "small.xml") };
    await generate(files.spread, ["--comments", String(COMMENTS), "--threads", String(THREADS)]);
    await generate(files.big, ["--comments", String(BIG), "--threads", "1", "--offset", "50000000", "--prefix", "big-", "--seed", "2"]);
    await generate(files.small, ["--comments", String(SMALL), "--threads", "1", "--prefix", "small-", "--seed", "3"]);
    const imports = [
      ["big tenant", `${COMMENTS} in ${THREADS} discussions`, await importFile(env, big.tenantId, files.spread)],
      ["big tenant", `${BIG} in one discussion`, await importFile(env, big.tenantId, files.big)],
      ["small tenant", `${SMALL} in one discussion`, await importFile(env, small.tenantId, files.small)],
    ] as const;
    console.log(
      `\n${fmtTable(
        ["import", "file", "comments written", "seconds", "comments/s"],
        imports.map(([who, what, r]) => [who, what, r.comments, r.seconds.toFixed(1), Math.round(r.comments / r.seconds)]),
      )}\n`,
    );

    // a connection of its own for the set-up below: no statement timeout (the service's client has
    // one), and VACUUM runs outside a transaction
    const maintenance = new pg.Client({ connectionString: env.databaseUrl });
    await maintenance.connect();
    // votes on the measured discussions' comments: imports carry none, and a sort by votes over tallies
    // that are all 0 would only be newest again
    const voting = performance.now();
    const voted = await maintenance.query<{ n: string }>(
      `WITH v AS (SELECT c.id, (hashtext(c.id) & 15) AS up, ((hashtext(c.id) >> 4) & 7) AS down FROM comments c
                   WHERE c.tenant_id = ANY ($1::text[]) AND c.discussion_id = ANY ($2::text[])),
            u AS (UPDATE comments c SET upvotes = v.up, downvotes = v.down, score = v.up - v.down,
                         vote_best = eng_wilson_lower_bound(v.up, v.up + v.down)
                    FROM v WHERE c.id = v.id RETURNING 1)
       SELECT count(*)::text AS n FROM u`,
      [
        [big.tenantId, small.tenantId],
        [big.discussion, small.discussion],
      ],
    );
    console.log(`votes on ${voted.rows[0]?.n} comments: ${((performance.now() - voting) / 1000).toFixed(1)} s`);

    // the steady state a site reaches once autovacuum has visited the imported tables, not the minute
    // after a bulk load when it is still running beside the measurements
    const vacuum = performance.now();
    await maintenance.query("VACUUM (ANALYZE) comments, comment_search, discussions, readers");
    // the indexes' scan counts from here on: which index the reads and writes below use
    await maintenance.query("SELECT pg_stat_reset()");
    await maintenance.end();
    console.log(`VACUUM (ANALYZE) after the imports: ${((performance.now() - vacuum) / 1000).toFixed(1)} s`);

    // the big tenant's export, read as a client reads GET /api/v1/export (the goal: under 60 s)
    const exportStarted = performance.now();
    const exportRes = await fetch(`${base}/export`, { headers: { "X-API-Key": big.apiKey } });
    if (!exportRes.ok || !exportRes.body) throw new Error(`GET /export: ${exportRes.status}`);
    let exported = 0;
    const reader = exportRes.body.getReader();
    for (let part = await reader.read(); !part.done; part = await reader.read()) exported += part.value.byteLength;
    const exportSeconds = (performance.now() - exportStarted) / 1000;
    console.log(`export of the big tenant (GET /api/v1/export): ${(exported / 1e6).toFixed(0)} MB in ${exportSeconds.toFixed(1)} s\n`);

    const rows: (string | number)[][] = [];
    /** the big tenant's p50 and p99 per operation, for the sorts' comparison with newest */
    const bigTimes = new Map<string, { p50: number; p99: number }>();
    const compare = async (name: string, fn: (t: Tenant) => (i: number) => Promise<unknown>, samples = SAMPLES) => {
      const s = await measure(samples, fn(small));
      const b = await measure(samples, fn(big));
      bigTimes.set(name, b);
      rows.push([name, s.p50.toFixed(1), s.p99.toFixed(1), b.p50.toFixed(1), b.p99.toFixed(1), `${(b.p99 / s.p99).toFixed(2)}×`]);
      console.log(`  ${name}: small p99 ${s.p99.toFixed(1)} ms, big p99 ${b.p99.toFixed(1)} ms`);
    };

    // the server's first requests (compiling, connections) belong to no row
    for (const t of [small, big]) await measure(50, () => call(`${base}/discussions/${t.discussion}/comments?limit=${PAGE}`, t));
    for (const sort of SORTS) {
      await compare(`first page, ${sort}`, (t) => () => call(`${base}/discussions/${t.discussion}/comments?sort=${sort}&limit=${PAGE}`, t));
      const cursors = { small: await cursorAfter(base, small, sort, DEPTH), big: await cursorAfter(base, big, sort, DEPTH) };
      await compare(
        `page ${DEPTH + 1}, ${sort}`,
        (t) => () =>
          call(
            `${base}/discussions/${t.discussion}/comments?sort=${sort}&limit=${PAGE}&cursor=${t === big ? cursors.big : cursors.small}`,
            t,
          ),
      );
    }
    const someIds = async (t: Tenant) =>
      ((await call(`${base}/discussions/${t.discussion}/comments?limit=100`, t)) as { items: { id: string; status: string }[] }).items
        .filter((c) => c.status === "approved") // tombstones are listed too, and take no reactions
        .map((c) => c.id);
    const ids = { small: await someIds(small), big: await someIds(big) };
    const idsOf = (t: Tenant) => (t === big ? ids.big : ids.small);
    await compare("one comment by id", (t) => (i) => call(`${base}/comments/${idsOf(t)[Math.abs(i) % idsOf(t).length]}`, t));
    const writers = { small: await identity(small, "bench-writer"), big: await identity(big, "bench-writer") };
    const writer = (t: Tenant) => (t === big ? writers.big : writers.small);
    // a post: enough of them that the stream row below has 1,000 events to replay
    await compare(
      "a post",
      (t) => (i) =>
        call(`${base}/discussions/${t.discussion}/comments`, t, { method: "POST", body: { body: `bench post ${i}` }, identity: writer(t) }),
      Math.max(SAMPLES, REPLAY + 10),
    );
    await compare(
      "a reaction",
      (t) => (i) =>
        call(`${base}/comments/${idsOf(t)[Math.abs(i) % idsOf(t).length]}/reactions`, t, {
          method: "POST",
          body: { kind: "like" },
          identity: writer(t),
        }),
    );
    const latest = async (t: Tenant) => {
      const rows = await services.sql.query<{ seq: string | null }>(
        "SELECT max(seq)::text AS seq FROM events WHERE tenant_id = $1 AND discussion_id = $2",
        [t.tenantId, t.discussion],
      );
      return Number(rows[0]?.seq ?? 0);
    };
    const heads = { small: await latest(small), big: await latest(big) };
    // the last REPLAY events of the discussion (the posts' and the reactions' above), replayed from the log
    await compare(
      `stream connect, ${REPLAY}-event replay`,
      (t) => () => replay(`${base}/stream/${t.discussion}`, t, (t === big ? heads.big : heads.small) - REPLAY, REPLAY),
      Math.min(SAMPLES, 50),
    );
    await compare("moderation queue, pending", (t) => () => call(`${base}/comments?status=pending&limit=50`, t));
    await compare("moderation queue, rejected", (t) => () => call(`${base}/comments?status=rejected&limit=50`, t));
    await compare("recent comments", (t) => () => call(`${base}/comments/recent?limit=20`, t));
    // a comment's replies (comments_replies_idx): those of the measured discussion's comments that have some
    const parentsOf = async (t: Tenant) =>
      (
        await services.sql.query<{ id: string }>(
          "SELECT id FROM comments WHERE tenant_id = $1 AND discussion_id = $2 AND reply_count > 0 LIMIT 100",
          [t.tenantId, t.discussion],
        )
      ).map((r) => r.id);
    const parents = { small: await parentsOf(small), big: await parentsOf(big) };
    await compare("a comment's replies", (t) => (i) => {
      const list = t === big ? parents.big : parents.small;
      return call(
        `${base}/discussions/${t.discussion}/comments?parentId=${list[Math.abs(i) % Math.max(1, list.length)] ?? "none"}&limit=20`,
        t,
      );
    });
    // a reader of the measured discussion, for the searches by reader
    const authorOf = async (t: Tenant) =>
      (
        await services.sql.query<{ a: string }>("SELECT author_id AS a FROM comments WHERE tenant_id = $1 AND discussion_id = $2 LIMIT 1", [
          t.tenantId,
          t.discussion,
        ])
      )[0]?.a ?? "";
    const authors = { small: await authorOf(small), big: await authorOf(big) };
    // comment search (contract section 21; the goal: p99 under 200 ms on the big tenant). The generated
    // bodies draw on 20 words, so each word is in most comments: a word walks the documents' newest-first
    // index (comment_search_newest_idx), as filters alone do; a word no comment has reads the GIN index and
    // finds nothing; a status of the queue's (pending, rejected, deleted) walks comments_queue_idx
    const searchRows: [string, string][] = [
      ["search, one word", "q=agree"],
      ["search, prefix and word", "q=agre*%20think"],
      ["search, phrase", `q=${encodeURIComponent('"good point"')}`],
      ["search, word and exclusion", "q=article%20-maybe"],
      ["search, a word no comment has", "q=zeppelin"],
      ["search, no q, approved, no open report", "status=approved&reported=false"],
      ["search, word in one discussion", "q=agree&discussionId=DISCUSSION"],
      ["search, no q, one reader", "readerId=READER"],
      ["search, word by one reader", "q=agree&readerId=READER"],
      ["search, no q, with links", "hasLinks=true"],
      ["search, no q, deleted", "status=deleted"],
    ];
    for (const [name, query] of searchRows) {
      const of = (t: Tenant) =>
        query.replace("DISCUSSION", t.discussion).replace("READER", encodeURIComponent(t === big ? authors.big : authors.small));
      await compare(name, (t) => () => call(`${base}/comments/search?${of(t)}&limit=50`, t));
    }
    await compare(
      "analytics, 30 days",
      (t) => () => call(`${base}/analytics?from=${WINDOW.from}&to=${WINDOW.to}&interval=day`, t),
      Math.min(SAMPLES, 50),
    );
    console.log(`\n${fmtTable(["operation", "small p50 ms", "small p99 ms", "big p50 ms", "big p99 ms", "big/small p99"], rows)}\n`);
    // the vote sorts against newest on the discussion of BIG comments (the goal: at most 1.5× its p99)
    const against = (page: string, sort: string) => {
      const mine = bigTimes.get(`${page}, ${sort}`) ?? { p50: NaN, p99: NaN };
      const newest = bigTimes.get(`${page}, newest`) ?? { p50: NaN, p99: NaN };
      const f = (n: number) => n.toFixed(1);
      return [`${page}, ${sort}`, f(newest.p50), f(mine.p50), f(newest.p99), f(mine.p99), `${(mine.p99 / newest.p99).toFixed(2)}×`];
    };
    console.log(
      `${fmtTable(
        [`${BIG} comments in one discussion`, "newest p50 ms", "sort p50 ms", "newest p99 ms", "sort p99 ms", "p99 against newest"],
        ["best", "score"].flatMap((sort) => ["first page", `page ${DEPTH + 1}`].map((page) => against(page, sort))),
      )}\n`,
    );
    // every index of the comments' tables and how often the operations above read it (a backend's
    // counts reach the statistics once it has been idle 10 s): each should be read by one of them
    await new Promise((r) => setTimeout(r, 11_000));
    const stats = new pg.Client({ connectionString: env.databaseUrl });
    await stats.connect();
    const used = await stats.query<{ table: string; index: string; scans: string; mb: string }>(
      `SELECT relname AS table, indexrelname AS index, idx_scan::text AS scans, (pg_relation_size(indexrelid) / 1048576.0)::numeric(10, 1)::text AS mb
         FROM pg_stat_user_indexes WHERE relname IN ('comments', 'comment_search', 'discussions') ORDER BY relname, idx_scan DESC, indexrelname`,
    );
    await stats.end();
    console.log(
      `${fmtTable(
        ["table", "index", "scans by the operations above", "MB"],
        used.rows.map((r) => [r.table, r.index, r.scans, r.mb]),
      )}\n`,
    );
  } finally {
    await env.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
