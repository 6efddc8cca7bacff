// npm run bench:indexable (npx tsx bench/indexable.ts) — what an indexable thread (GET
// /embed/v1/discussions/{id}.html, contract section 23) costs beside the JSON of the same page: the
// thread element's own GraphQL query for its 20 top-level comments with their replies (EmbedThread,
// embed/src/thread/api.ts), which the fragment's island stands in for, and the REST list of the 20
// top-level comments alone (no replies: less than the page). The goal: the fragment's p99 within 1.3×
// the JSON of the same page. A discussion of 25 top-level comments (a second page) with two replies
// each, bodies of a few Markdown sentences; the three requests alternate, one at a time, each round
// starting at the next row, so each sees the same machine; answers compressed as a browser asks
// (Accept-Encoding as fetch sends it; bytes: uncompressed). Ratios are of figures from the same run.
// BENCH_REQUESTS per row (default 400), after 40 unmeasured.
import { performance } from "node:perf_hooks";
import { signAdminToken } from "../src/auth/admin-jwt.js";
import { assertion, fmtTable, startBenchApp } from "./support.js";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const WARMUP = 40;
const BODY =
  "Rivers carry **more sediment** than most people think: after the spring floods the delta grows by metres. " +
  "See [the survey](https://example.org/survey) for the figures, and `gauge 14` for the station.";
const COMMENT = `id parentId author { id name avatarUrl badge } body bodyHtml status pinned editedAt createdAt reactions: reactionMap viewerReactions replyCount score upvotes downvotes myVote`;
const EMBED_THREAD = `query EmbedThread($d: String!, $sort: CommentSort, $after: String) {
  discussion(id: $d) { state commentCount reactions: reactionMap myReactions }
  comments(discussionId: $d, topLevel: true, sort: $sort, first: 20, after: $after) { edges { node { ${COMMENT} replies(first: 5) { edges { node { ${COMMENT} } } pageInfo { hasNextPage endCursor } } } } pageInfo { hasNextPage endCursor } }
}`;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function main(): Promise<void> {
  const env = await startBenchApp({ RUN_FOLLOW_WORKER: "0", RUN_EMAIL_WORKER: "0", RUN_WEBHOOK_WORKER: "0" });
  try {
    const tenantId = (await env.app.runtime.services.prisma.tenant.findFirstOrThrow({ select: { id: true } })).id;
    const admin = await signAdminToken({ secret: "bench-admin-secret-0123456789abcdef0123456789", tenantId, ttlSeconds: 3600 });
    const pkAnswer = await fetch(`${env.url}/api/v1/publishable-keys`, {
      method: "POST",
      headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
      body: JSON.stringify({ label: "bench" }),
    });
    const pk = ((await pkAnswer.json()) as { key: string }).key;
    const writer = async (sub: string) => ({
      "X-API-Key": env.apiKey,
      "Content-Type": "application/json",
      "X-Service-Identity": await assertion(env.identitySecret, sub, { name: `Reader ${sub}` }),
    });
    const headers = [await writer("ann"), await writer("bob"), await writer("cleo")];
    const put = await fetch(`${env.url}/api/v1/discussions/rivers`, {
      method: "PUT",
      headers: headers[0]!,
      body: JSON.stringify({ title: "Rivers and lakes", url: "https://blog.example/rivers" }),
    });
    if (!put.ok) throw new Error(`PUT discussion: ${put.status}`);
    const post = async (i: number, body: object) => {
      const r = await fetch(`${env.url}/api/v1/discussions/rivers/comments`, {
        method: "POST",
        headers: headers[i % 3]!,
        body: JSON.stringify(body),
      });
      if (r.status !== 201) throw new Error(`POST comment: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { id: string }).id;
    };
    for (let i = 0; i < 25; i++) {
      const top = await post(i, { body: `${i}. ${BODY}` });
      for (let j = 1; j <= 2; j++) await post(i + j, { body: `Reply ${j}: ${BODY}`, parentId: top });
    }

    const read = { "X-API-Key": pk };
    const rows: [string, () => Promise<Response>][] = [
      [
        "JSON page with replies (GraphQL EmbedThread)",
        () =>
          fetch(`${env.url}/graphql`, {
            method: "POST",
            headers: { ...read, "Content-Type": "application/json" },
            body: JSON.stringify({ query: EMBED_THREAD, variables: { d: "rivers" } }),
          }),
      ],
      [
        "JSON list (REST, 20 top-level, no replies)",
        () => fetch(`${env.url}/api/v1/discussions/rivers/comments?topLevel=true&limit=20`, { headers: read }),
      ],
      ["fragment (HTML, island, JSON-LD)", () => fetch(`${env.url}/embed/v1/discussions/rivers.html?key=${pk}`)],
    ];
    const times = rows.map(() => [] as number[]);
    const bytes = rows.map(() => 0);
    for (let n = 0; n < WARMUP + REQUESTS; n++) {
      for (let k = 0; k < rows.length; k++) {
        const i = (n + k) % rows.length;
        const request = rows[i]![1];
        const t0 = performance.now();
        const res = await request();
        const body = await res.arrayBuffer();
        const ms = performance.now() - t0;
        if (!res.ok) throw new Error(`${rows[i]![0]}: ${res.status}`);
        if (n >= WARMUP) times[i]!.push(ms);
        bytes[i] = body.byteLength;
      }
    }
    const stats = times.map((t) => t.sort((a, b) => a - b)).map((t) => ({ p50: quantile(t, 0.5), p99: quantile(t, 0.99) }));
    const [page, list] = [stats[0]!.p99, stats[1]!.p99];
    console.log(
      fmtTable(
        ["request", "p50 ms", "p99 ms", "p99 / same page (GraphQL)", "p99 / REST list", "bytes"],
        rows.map(([name], i) => [
          name,
          stats[i]!.p50.toFixed(2),
          stats[i]!.p99.toFixed(2),
          (stats[i]!.p99 / page).toFixed(2),
          (stats[i]!.p99 / list).toFixed(2),
          bytes[i]!,
        ]),
      ),
    );
    const ratio = stats[2]!.p99 / page;
    console.log(`\nfragment p99 / JSON of the same page p99 = ${ratio.toFixed(2)} (goal ≤ 1.30): ${ratio <= 1.3 ? "met" : "NOT met"}`);
    console.log(`fragment p99 / REST list (top level only) p99 = ${(stats[2]!.p99 / list).toFixed(2)}`);
  } finally {
    await env.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
