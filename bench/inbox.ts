// npm run bench:inbox — a burst of signed ActivityPub deliveries to the service's inbox beside a
// hand-written floor inbox (bench/floor/inbox.ts: parse, check the Digest and the draft-cavage
// signature with the key in memory, store one row, 202), in the same run. Not a test: it prints a table.
//
//  - the service runs as `npm start` runs it (built into dist/, plain node, its own database, Redis,
//    the worker on, so the burst's activities are applied by the same process while it answers); the
//    floor is compiled the same way and runs as a process of its own;
//  - the sender is a Fedify peer in this process (test/support/fedi-peer.ts, Mastodon-shaped); its
//    key is fetched by the service once, before the first burst;
//  - each round fires BENCH_BURST signed Create(Note)s at once (signed beforehand, so the client
//    signs nothing meanwhile) at the service and at the floor, in alternating order, after the
//    service has applied everything of the round before; a time is the request's, from its start to
//    its answer's end, at this client; the inbox's rate limit of the sending domain is reset before
//    each burst (a burst of 500 a round is over its 600 a minute by the second round);
//  - for the service, also the time until every activity of the burst is applied (the queue drained).
// Env: BENCH_BURST (500), BENCH_ROUNDS (3), BENCH_PG_URL, BENCH_REDIS_URL, BENCH_CPU_PROFILE (a directory).
import { spawn, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Redis } from "ioredis";
import { BENCH_REDIS_URL, benchDatabase, compiledScript, fmtTable, freePort, startServiceProcess, waitUp } from "./support.js";
import { startFediPeer } from "../test/support/fedi-peer.js";
import { signInKeyPrefix } from "../src/auth/sign-in-throttle.js";

const BURST = Number(process.env.BENCH_BURST ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AS = "https://www.w3.org/ns/activitystreams";

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const children: ChildProcess[] = [];
const database = await benchDatabase("eng_bench_inbox");
const { url: databaseUrl } = database;
const db = new pg.Client({ connectionString: databaseUrl });
const redis = new Redis(BENCH_REDIS_URL);
const peer = await startFediPeer({ names: ["alice"] });

try {
  // ---- the service, as npm start runs it ----
  const svc = await startServiceProcess(databaseUrl);
  children.push(svc.process);
  const { url, tenant, api } = svc;
  await db.connect();
  await api("PATCH", "/api/v1/settings", { federation: { enabled: true, handle: "bench", remoteModeration: "post" } });
  await api("PUT", "/api/v1/discussions/post", { title: "A post", url: "https://bench.example/post" });
  const actor = `${url}/ap/actors/${tenant.tenantId}`;
  const article = `${actor}/articles/post`;

  // ---- the floor, with the sender's key in memory ----
  const actorDoc = (await (await fetch(peer.actorUri("alice"), { headers: { accept: "application/activity+json" } })).json()) as {
    publicKey: { publicKeyPem: string };
  };
  const floorPort = await freePort();
  const floor = spawn(process.execPath, [await compiledScript("bench/floor/inbox.ts")], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(floorPort), PUBLIC_KEY_PEM: actorDoc.publicKey.publicKeyPem },
    stdio: ["ignore", "ignore", "inherit"],
  });
  children.push(floor);
  const floorUrl = `http://127.0.0.1:${floorPort}`;
  await waitUp(floorUrl);

  let n = 0;
  const createNote = (text: string) => {
    const alice = peer.actorUri("alice").href;
    const status = `${peer.url}/users/alice/statuses/${++n}-${Date.now()}`;
    return {
      "@context": AS,
      id: `${status}/activity`,
      type: "Create",
      actor: alice,
      to: [`${AS}#Public`],
      cc: [actor],
      object: { id: status, type: "Note", inReplyTo: article, attributedTo: alice, to: [`${AS}#Public`], content: `<p>${text}</p>` },
    };
  };
  const pending = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE kind = 'activitypub_inbound' AND status = 'pending'`,
      )
    ).rows[0]!.n;
  const drained = async (since: number) => {
    while ((await pending()) > 0) await sleep(50);
    return performance.now() - since;
  };
  const resetLimits = async () => {
    const keys = await redis.keys(`${signInKeyPrefix(databaseUrl)}:ap-inbox*`);
    if (keys.length) await redis.del(...keys);
  };

  // the service fetches the sender's key once
  const warm = await peer.signedPost("alice", new URL(`${actor}/inbox`), createNote("warm"));
  if (warm.status !== 202) throw new Error(`the warm-up activity was answered ${warm.status}`);
  await drained(performance.now());

  async function burst(inbox: URL): Promise<{ took: number[]; accepted: number; started: number }> {
    const requests = await Promise.all(Array.from({ length: BURST }, (_, i) => peer.signed("alice", inbox, createNote(`burst ${i}`))));
    const took: number[] = [];
    const started = performance.now();
    const statuses = await Promise.all(
      requests.map(async ({ headers, body }) => {
        const t0 = performance.now();
        const res = await fetch(inbox, { method: "POST", headers, body });
        await res.arrayBuffer();
        took.push(performance.now() - t0);
        return res.status;
      }),
    );
    return { took: took.sort((a, b) => a - b), accepted: statuses.filter((s) => s === 202).length, started };
  }

  const rows: (string | number)[][] = [];
  const p99s: Record<string, number[]> = { service: [], floor: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? (["service", "floor"] as const) : (["floor", "service"] as const);
    for (const who of order) {
      await resetLimits();
      const inbox = new URL(`${who === "service" ? url : floorUrl}/ap/actors/${tenant.tenantId}/inbox`);
      const r = await burst(inbox);
      const drain = who === "service" ? (await drained(r.started)).toFixed(0) : "";
      p99s[who]!.push(pct(r.took, 0.99));
      rows.push([
        round,
        who,
        `${r.accepted}/${BURST}`,
        pct(r.took, 0.5).toFixed(0),
        pct(r.took, 0.99).toFixed(0),
        r.took.at(-1)!.toFixed(0),
        drain,
      ]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\ninbox: a burst of ${BURST} signed Create(Note)s at once, ${ROUNDS} rounds, alternating (times in ms, at the client)\n`);
  console.log(fmtTable(["round", "inbox", "202", "p50", "p99", "max", "all applied after"], rows));
  console.log(
    `\nmedian p99: service ${median(p99s.service!).toFixed(0)} ms, floor ${median(p99s.floor!).toFixed(0)} ms — the service at ${(median(p99s.service!) / median(p99s.floor!)).toFixed(2)}× the floor's`,
  );
} finally {
  for (const c of children) c.kill("SIGTERM");
  await sleep(500);
  await peer.close();
  await db.end().catch(() => undefined);
  redis.disconnect();
  await database.drop();
}
