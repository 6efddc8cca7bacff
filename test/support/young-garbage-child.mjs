// A child process for test/young-garbage.test.ts, run with --trace-gc-nvp: 50 loops at once, each
// making one short-lived thing after another, the shape a request makes. Prints one line of JSON when
// done (`{"made": n, "from": ms}`: what it made after a warm-up, and from when); the test sums the
// young-generation collections' promoted bytes after that. argv[2], each pattern and its control:
// "pg-read-timeout" / "pg" (a pg pool with / without query_timeout, each loop one named query of 20
// rows at a time); "pothos-context-cache" / "context" (each loop a new context object and the entry
// Pothos's context cache keeps for it, which refers back to its context as a plugin's request data
// does / the same entry set on the context by hand); "graphql-rate-limit" / "rest-rate-limit" (each
// loop a reply and a context announced on it as /graphql does, told again later / as REST does).
import process from "node:process";
import { performance } from "node:perf_hooks";
import { setImmediate, setTimeout } from "node:timers";
import pg from "pg";
import { createContextCache } from "@pothos/core";

const kind = process.argv[2];
const seconds = Number(process.argv[3] ?? 2);
let made = 0;
let stop = false;
// what was made in the first half second (modules, connections, the first compilations) is not counted:
// the line printed at the end says from when (ms since the start, as V8's trace lines count) and how many
let from = 0;
let madeBefore = 0;
setTimeout(() => {
  from = performance.now();
  madeBefore = made;
  setTimeout(() => (stop = true), seconds * 1000);
}, 500);

/** 50 loops at once, each running `once` after the last until the time is up, counting each. */
const loops = (once) =>
  Promise.all(
    Array.from({ length: 50 }, async () => {
      while (!stop) {
        await once();
        made++;
      }
    }),
  );
const turn = () => new Promise((resolve) => setImmediate(resolve));
const entryFor = (ctx) => ({ ctx, data: Array.from({ length: 20 }, (_, i) => ({ i, s: `x${i}` })) });

if (kind === "pg-read-timeout" || kind === "pg") {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, ...(kind === "pg" ? {} : { query_timeout: 4_500 }) });
  const text = "SELECT g AS id, 'comment body number ' || g AS body, now() AS created_at FROM generate_series(1, 20) g";
  await loops(async () => {
    const { rows } = await pool.query({ name: "young-garbage", text, values: [] });
    if (rows.length !== 20) throw new Error("20 rows expected");
  });
  await pool.end();
} else if (kind === "pothos-context-cache" || kind === "context") {
  const cache = kind === "context" ? (ctx) => (ctx.entry ??= entryFor(ctx)) : createContextCache(entryFor);
  await loops(async () => {
    const ctx = { id: made };
    const entry = cache(ctx);
    await turn();
    if (cache(ctx) !== entry) throw new Error("one entry a context expected");
  });
} else if (kind === "graphql-rate-limit" || kind === "rest-rate-limit") {
  // what /graphql's context does with its reply (src/http/request-context.ts, as built in dist/)
  const { announceRateLimit } = await import("../../dist/http/request-context.js");
  const graphql = kind === "graphql-rate-limit";
  await loops(async () => {
    const reply = { headers() {}, sent: Array.from({ length: 20 }, (_, i) => ({ i, s: `x${i}` })) };
    const ctx = announceRateLimit({ rateLimit: undefined }, reply, graphql);
    await turn();
    if (graphql !== (typeof ctx.onRateLimit === "function")) throw new Error("onRateLimit only on /graphql");
  });
} else {
  throw new Error(`unknown kind ${kind}`);
}
process.stdout.write(`${JSON.stringify({ made: made - madeBefore, from })}\n`);
