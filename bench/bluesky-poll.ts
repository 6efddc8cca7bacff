// npm run bench:bluesky-poll — what reading linked Bluesky posts costs (contract section 30,
// docs/bluesky.md "The pace, and its cost"): BENCH_LINKS discussions (default 10,000) linked to posts
// whose threads a stand-in AppView on loopback answers (getPostThread, BENCH_REPLIES replies each,
// default 3, from the same JSON every time: the AppView's own cost is not ours to measure). Two rounds
// of the poller's passes (the app's own, run back to back, BLUESKY_POLL_INTERVAL_MS=0):
//   first read   every link due: each thread's replies become comments (the comments' own writes)
//   steady read  every link due again, nothing new: what most reads at 10,000 links are
// against a floor doing a steady read's durable work by hand on the same database and stand-in:
// GET the thread, parse it, read the discussion's known replies, write the next read's time.
// Prints reads a second, ms a read, and the ratio to the floor.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { fmtTable, startBenchApp } from "./support.js";

const LINKS = Number(process.env.BENCH_LINKS ?? 10_000);
const REPLIES = Number(process.env.BENCH_REPLIES ?? 3);
const DID = "did:plc:benchbenchbenchbenchbenc";
/** a well-formed content id (the client checks the answer against the lexicons) */
const CID = "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm";

/** a thread as the AppView answers it: the post and REPLIES replies of distinct accounts */
function threadOf(uri: string): string {
  const rkey = uri.split("/").pop()!;
  const replies = Array.from({ length: REPLIES }, (_, i) => ({
    $type: "app.bsky.feed.defs#threadViewPost",
    post: {
      uri: `at://did:plc:reader${String(i).padStart(18, "0")}/app.bsky.feed.post/${rkey}r${i}`,
      cid: CID,
      author: { did: `did:plc:reader${String(i).padStart(18, "0")}`, handle: `reader${i}.bsky.social`, displayName: `Reader ${i}` },
      record: { $type: "app.bsky.feed.post", text: `Reply ${i} to ${rkey}`, createdAt: "2026-11-01T10:00:00.000Z" },
      indexedAt: "2026-11-01T10:00:01.000Z",
    },
    replies: [],
  }));
  return JSON.stringify({
    thread: {
      $type: "app.bsky.feed.defs#threadViewPost",
      post: {
        uri,
        cid: CID,
        author: { did: DID, handle: "blog.bsky.social" },
        record: { $type: "app.bsky.feed.post", text: "An article", createdAt: "2026-11-01T09:00:00.000Z" },
        indexedAt: "2026-11-01T09:00:01.000Z",
      },
      replies,
    },
  });
}

async function main(): Promise<void> {
  const appView = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/xrpc/app.bsky.feed.getPostThread") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(threadOf(url.searchParams.get("uri") ?? ""));
  });
  await new Promise<void>((r) => appView.listen(0, "127.0.0.1", r));
  const appViewUrl = `http://127.0.0.1:${(appView.address() as AddressInfo).port}`;
  const env = await startBenchApp({
    BLUESKY_POLL_INTERVAL_MS: "0",
    RUN_WEBHOOK_WORKER: "0",
    RUN_EMAIL_WORKER: "0",
    RUN_FOLLOW_WORKER: "0",
  });
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  try {
    const tenantId = (await db.query<{ id: string }>(`SELECT id FROM tenants LIMIT 1`)).rows[0]!.id;
    const r = await fetch(`${env.url}/api/v1/settings`, {
      method: "PATCH",
      headers: { "X-API-Key": env.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ bluesky: { enabled: true, appView: appViewUrl, remoteModeration: "post" } }),
    });
    if (!r.ok) throw new Error(`PATCH settings: ${r.status} ${await r.text()}`);
    await db.query(
      `INSERT INTO discussions (tenant_id, id, title, url, url_key, updated_at)
       SELECT $1, 'd' || g, 'Article ' || g, 'https://blog.example/' || g, 'https://blog.example/' || g, now() FROM generate_series(1, $2) g`,
      [tenantId, LINKS],
    );
    const due = () => db.query(`UPDATE bluesky_links SET next_poll_at = now() - interval '1 second' WHERE tenant_id = $1`, [tenantId]);
    await db.query(
      `INSERT INTO bluesky_links (tenant_id, discussion_id, uri, cid, posted, created_at, next_poll_at)
       SELECT $1, 'd' || g, 'at://${DID}/app.bsky.feed.post/p' || g, 'bafy', false, now(), now() FROM generate_series(1, $2) g`,
      [tenantId, LINKS],
    );
    await db.query(`ANALYZE`);

    const round = async () => {
      const t0 = performance.now();
      let reads = 0;
      // until every link is read once (a link whose read found replies is due again a minute later: not counted twice)
      while (reads < LINKS) {
        const n = await env.app.bluesky.runOnce();
        if (n === 0) break;
        reads += n;
      }
      const s = (performance.now() - t0) / 1000;
      return { reads, s };
    };
    const first = await round();
    const errors = (
      await db.query<{ last_error: string | null }>(`SELECT last_error FROM bluesky_links WHERE last_error IS NOT NULL LIMIT 1`)
    ).rows[0];
    if (errors) throw new Error(`a read failed: ${errors.last_error}`);
    const comments = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM comments WHERE kind = 'bluesky'`)).rows[0]!.n;
    await due();
    const steady = await round();

    // the floor: a steady read's durable work by hand, one link after another
    await due();
    const floorT0 = performance.now();
    const links = (
      await db.query<{ discussion_id: string; uri: string }>(
        `SELECT discussion_id, uri FROM bluesky_links WHERE tenant_id = $1 ORDER BY next_poll_at`,
        [tenantId],
      )
    ).rows;
    for (const l of links) {
      const res = await fetch(`${appViewUrl}/xrpc/app.bsky.feed.getPostThread?uri=${encodeURIComponent(l.uri)}&depth=1000&parentHeight=0`);
      const thread = (await res.json()) as { thread: { replies: { post: { uri: string } }[] } };
      const known = await db.query(`SELECT uri_hash FROM bluesky_replies WHERE tenant_id = $1 AND discussion_id = $2`, [
        tenantId,
        l.discussion_id,
      ]);
      if (known.rowCount !== thread.thread.replies.length)
        throw new Error(`the floor found another thread: ${known.rowCount} known, ${thread.thread.replies.length} there`);
      await db.query(
        `UPDATE bluesky_links SET polled_at = now(), next_poll_at = now() + interval '5 minutes' WHERE tenant_id = $1 AND discussion_id = $2`,
        [tenantId, l.discussion_id],
      );
    }
    const floorS = (performance.now() - floorT0) / 1000;

    const row = (name: string, reads: number, s: number) => [
      name,
      reads,
      (reads / s).toFixed(0),
      ((s * 1000) / reads).toFixed(2),
      (s / floorS).toFixed(2),
    ];
    console.log(
      `\n${fmtTable(
        ["round", "reads", "reads/s", "ms/read", "× floor"],
        [
          row("first read (brings replies in)", first.reads, first.s),
          row("steady read (nothing new)", steady.reads, steady.s),
          row("floor (steady, by hand)", links.length, floorS),
        ],
      )}\n`,
    );
    console.log(`${LINKS} links, ${REPLIES} replies each: ${comments} comments brought in by the first read.`);
    console.log(
      `At the pace of docs/bluesky.md (~11,000 reads an hour at 10,000 links), steady reads take ${((11_000 * (steady.s / steady.reads)) / 36).toFixed(1)} % of one instance's time.`,
    );
  } finally {
    await db.end();
    await env.close();
    appView.close();
  }
}

await main();
