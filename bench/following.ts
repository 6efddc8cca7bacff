// npm run bench:following — a writer's cost of a comment in a discussion with 10,000 followers
// against one with none (contract section 19: at most 1.2×). The follow worker is off while the
// writes are timed (RUN_FOLLOW_WORKER=0), so only the comment's statement is measured: with
// followers it adds one EXISTS on the partial index and one `follow` job of the outbound queue. Then the queued jobs
// are drained by one worker pass, timed apart (the fan-out after commit). Writes alternate between
// the two discussions, one at a time, so both see the same machine. BENCH_POSTS, BENCH_FOLLOWERS.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { assertion, fmtTable, startBenchApp } from "./support.js";

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 10_000);
const POSTS = Number(process.env.BENCH_POSTS ?? 400);

async function main(): Promise<void> {
  const env = await startBenchApp({ RUN_FOLLOW_WORKER: "0", RUN_EMAIL_WORKER: "0", RUN_WEBHOOK_WORKER: "0" });
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  try {
    const tenantId = (await db.query<{ id: string }>(`SELECT id FROM tenants LIMIT 1`)).rows[0]!.id;
    const identity = await assertion(env.identitySecret, "writer", { name: "Writer" });
    const headers = { "X-API-Key": env.apiKey, "X-Service-Identity": identity, "Content-Type": "application/json" };
    for (const id of ["quiet", "followed"]) {
      const r = await fetch(`${env.url}/api/v1/discussions/${id}`, { method: "PUT", headers, body: JSON.stringify({ title: id }) });
      if (!r.ok) throw new Error(`PUT discussion: ${r.status}`);
    }
    await db.query(
      `INSERT INTO discussion_subscriptions (tenant_id, discussion_id, reader_id, mode, created_at, updated_at)
       SELECT $1, 'followed', 'f' || lpad(g::text, 6, '0'), 'all', now(), now() FROM generate_series(1, $2) g`,
      [tenantId, FOLLOWERS],
    );
    // what a follow through the API also writes: the discussion's row says someone follows it (a post
    // asks for its followers only then)
    await db.query(`UPDATE discussions SET followed = true WHERE tenant_id = $1 AND id = 'followed'`, [tenantId]);
    await db.query(`ANALYZE discussion_subscriptions`);
    const times: Record<string, number[]> = { quiet: [], followed: [] };
    const post = async (id: string, i: number) => {
      const t0 = performance.now();
      const r = await fetch(`${env.url}/api/v1/discussions/${id}/comments`, {
        method: "POST",
        headers,
        body: JSON.stringify({ body: `comment ${i}` }),
      });
      await r.text();
      if (r.status !== 201) throw new Error(`POST: ${r.status}`);
      return performance.now() - t0;
    };
    for (let i = 0; i < 20; i++) await post(i % 2 ? "quiet" : "followed", i); // warm
    for (let i = 0; i < POSTS; i++) {
      times.quiet!.push(await post("quiet", i));
      times.followed!.push(await post("followed", i));
    }
    const stat = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return { p50: s[Math.floor(s.length / 2)]!, mean: s.reduce((a, b) => a + b, 0) / s.length, p99: s[Math.floor(s.length * 0.99)]! };
    };
    const q = stat(times.quiet!);
    const f = stat(times.followed!);
    const FOLLOW_JOBS = `FROM webhook_deliveries WHERE kind = 'follow' AND status = 'pending'`;
    const jobs = (await db.query<{ n: number }>(`SELECT count(*)::int AS n ${FOLLOW_JOBS}`)).rows[0]!.n;
    // the fan-out of one comment to every follower, timed by itself (all of them would be POSTS × FOLLOWERS items)
    await db.query(`DELETE ${FOLLOW_JOBS} AND id <> (SELECT id ${FOLLOW_JOBS} ORDER BY created_at LIMIT 1)`);
    const itemsNow = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_items`)).rows[0]!.n;
    const before = await itemsNow();
    const t0 = performance.now();
    await env.app.follow.runOnce();
    const drainS = (performance.now() - t0) / 1000;
    const drained = { items: (await itemsNow()) - before };
    console.log(
      `\n${fmtTable(
        ["discussion", "followers", "posts", "p50 ms", "mean ms", "p99 ms"],
        [
          ["quiet", 0, POSTS, q.p50.toFixed(2), q.mean.toFixed(2), q.p99.toFixed(2)],
          ["followed", FOLLOWERS, POSTS, f.p50.toFixed(2), f.mean.toFixed(2), f.p99.toFixed(2)],
        ],
      )}\n`,
    );
    console.log(
      `writer's cost ratio (followed / quiet): p50 ${(f.p50 / q.p50).toFixed(2)}×, mean ${(f.mean / q.mean).toFixed(2)}× (goal ≤ 1.2×)`,
    );
    console.log(
      `fan-out after commit: ${jobs} jobs queued (one per followed comment); one comment's fan-out to ${drained.items} followers in ${drainS.toFixed(2)} s (${Math.round(drained.items / drainS)} items/s, one worker)`,
    );
  } finally {
    await db.end();
    await env.close();
  }
}

await main();
