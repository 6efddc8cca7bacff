// npm run bench:writes — throughput and latency of the write and read paths beside a bare
// graphql-yoga `{ hello }` endpoint measured in the same run. Prints a table; not a test.
// Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50), BENCH_DISCUSSIONS (default 100).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import { createSchema, createYoga } from "graphql-yoga";
import { SignJWT } from "jose";
import { fmtTable, startBenchApp } from "./support.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DISCUSSIONS = Number(process.env.BENCH_DISCUSSIONS ?? 100);

async function bareYoga(): Promise<{ url: string; server: Server }> {
  const yoga = createYoga({
    schema: createSchema({ typeDefs: "type Query { hello: String! }", resolvers: { Query: { hello: () => "world" } } }),
    logging: false,
  });
  const server = createServer(yoga);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function run(name: string, opts: autocannon.Options): Promise<Row> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const non2xx = r.non2xx + r.errors + r.timeouts;
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: non2xx };
}

const env = await startBenchApp();
const bare = await bareYoga();
try {
  const identity = await new SignJWT({ name: "Bench Reader" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("bench-reader")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(env.identitySecret));
  const headers = { "content-type": "application/json", "x-api-key": env.apiKey, "x-service-identity": identity };
  // seed: discussions to spread writes over, and one discussion with a full page to list
  for (let i = 0; i < DISCUSSIONS; i++) {
    await fetch(`${env.url}/api/v1/discussions/bench-${i}`, { method: "PUT", headers, body: "{}" });
  }
  for (let i = 0; i < 100; i++) {
    await fetch(`${env.url}/api/v1/discussions/bench-list/comments`, {
      method: "POST",
      headers,
      body: JSON.stringify({ body: `seed ${i}` }),
    });
  }
  let n = 0;
  const nextDiscussion = () => `bench-${n++ % DISCUSSIONS}`;
  const body = JSON.stringify({ body: "A comment from the benchmark." });

  const rows: Row[] = [];
  rows.push(
    await run("bare yoga { hello }", {
      url: `${bare.url}/graphql`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"query":"{ hello }"}',
    }),
  );
  rows.push(
    await run("REST POST comment", {
      url: env.url,
      requests: [
        { method: "POST", headers, setupRequest: (req) => ({ ...req, path: `/api/v1/discussions/${nextDiscussion()}/comments`, body }) },
      ],
    }),
  );
  rows.push(
    await run("GraphQL postComment", {
      url: `${env.url}/graphql`,
      requests: [
        {
          method: "POST",
          headers,
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              query: "mutation($d: String!, $b: String!) { postComment(discussionId: $d, input: { body: $b }) { id } }",
              variables: { d: nextDiscussion(), b: "A comment from the benchmark." },
            }),
          }),
        },
      ],
    }),
  );
  rows.push(await run("REST list comments (20)", { url: `${env.url}/api/v1/discussions/bench-list/comments?limit=20`, headers }));

  const base = rows[0]!.rps;
  console.log(`\n${SECONDS}s per scenario, ${CONNECTIONS} connections, writes spread over ${DISCUSSIONS} discussions\n`);
  console.log(
    fmtTable(
      ["scenario", "req/s", "p50 ms", "p99 ms", "non-2xx/errors", "% of bare", "target (≥40 %, p99 ≤ 50 ms)"],
      rows.map((r, i) => [
        r.name,
        r.rps.toFixed(0),
        r.p50,
        r.p99,
        r.errors,
        i === 0 ? "100 %" : `${((r.rps / base) * 100).toFixed(1)} %`,
        i === 0 ? "-" : r.rps / base >= 0.4 && r.p99 <= 50 ? "met" : "not met",
      ]),
    ),
  );
} finally {
  bare.server.close();
  await env.close();
}
