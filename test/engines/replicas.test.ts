// Read replicas (contract section 26; src/db/replicas/, src/context/read-routing.ts): a PostgreSQL
// primary of the test's own and a streaming standby made from it with `pg_basebackup -R`
// (test/support/own-services.ts), the real service over HTTP against them. Replay on the standby is
// paused (`pg_wal_replay_pause()`) so that a write is on the primary only: a read that does not see
// it was served by the replica; one that does, by the primary. Two services share the pair: `loose`
// tolerates any lag (where reads go, read-your-writes, stickiness, stream replay), `strict` takes
// a replica lagging more than 300 ms out (lag, and the standby stopped and started again).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestTenant, keyWith, type TestTenant } from "../support/fixtures.js";
import { testEnv, type TestServer } from "../support/server.js";
import { startOwnPostgres, type OwnPostgres } from "../support/own-services.js";
import { client } from "../support/client.js";
import { openSse, seqsOf } from "../support/sse.js";

const HEADER = "x-service-consistency";
const WAIT = { timeout: 20_000, interval: 100 };

let primary: OwnPostgres;
let standby: OwnPostgres;
let loose: TestServer;
let strict: TestServer;
const dbUrl = (pgUrl: string) => pgUrl.replace(/\/postgres$/, "/engagement");

async function sql<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

async function startService(env: Record<string, string>): Promise<TestServer> {
  const app = await buildApp(loadConfig(testEnv({ DATABASE_URL: dbUrl(primary.url), DATABASE_REPLICA_URLS: dbUrl(standby.url), ...env })));
  const url = await app.start();
  return { url, app, stop: () => app.stop() };
}

/** Resolves once the standby has replayed everything the primary has written so far. */
async function caughtUp(): Promise<void> {
  const [row] = await sql<{ lsn: string }>(primary.url, "SELECT pg_current_wal_lsn()::text AS lsn");
  const lsn = row!.lsn;
  await expect
    .poll(async () => (await sql<{ ok: boolean }>(standby.url, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS ok`))[0]!.ok, WAIT)
    .toBe(true);
}

async function pauseReplay(): Promise<void> {
  await sql(standby.url, "SELECT pg_wal_replay_pause()");
  await expect
    .poll(async () => (await sql<{ s: string }>(standby.url, "SELECT pg_get_wal_replay_pause_state() AS s"))[0]!.s, WAIT)
    .toBe("paused");
}
const resumeReplay = () => sql(standby.url, "SELECT pg_wal_replay_resume()");

/** The value of one sample of the service's /metrics (0 when absent). */
async function metric(server: TestServer, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf("}"));
    if (want.every((w) => inside.split(",").includes(w))) return Number(line.slice(line.indexOf("}") + 1).trim());
  }
  return 0;
}

async function replicaOf(server: TestServer): Promise<{ name: string; state: string; lagMs: number | null }> {
  const res = await fetch(`${server.url}/readyz`);
  const body = (await res.json()) as { details: { replicas: { name: string; state: string; lagMs: number | null }[] } };
  return body.details.replicas[0]!;
}

const bodies = (res: { body: { items: { body: string }[] } }) => res.body.items.map((c) => c.body);

beforeAll(async () => {
  primary = await startOwnPostgres();
  standby = await startOwnPostgres({ standbyOf: primary });
  // the first service creates and migrates the database (on the primary; the standby replays it)
  loose = await startService({
    DATABASE_REPLICA_MAX_LAG_MS: "3600000",
    DATABASE_REPLICA_STICKY_MS: "600000",
    CORS_ORIGINS: "https://site.example",
  });
  strict = await startService({ DATABASE_REPLICA_MAX_LAG_MS: "300", DATABASE_REPLICA_STICKY_MS: "0" });
}, 240_000);

afterAll(async () => {
  await resumeReplay().catch(() => undefined);
  await loose?.stop();
  await strict?.stop();
  await standby?.stop();
  await primary?.stop();
}, 60_000);

describe("reads on a streaming replica", () => {
  let t: TestTenant;
  let other: ReturnType<typeof client>;
  let writer: ReturnType<typeof client>;
  beforeAll(async () => {
    t = await createTestTenant(loose);
    writer = await t.reader("writer");
    other = client(loose.url, { key: (await keyWith(t, [])).key });
  });

  it("serves the read routes from the replica, honours X-Service-Consistency, and keeps a writer on the primary", async () => {
    const first = await writer.post("/api/v1/discussions/ryw/comments", { body: "before the pause" });
    expect(first.status).toBe(201);
    const before = first.headers.get(HEADER);
    expect(before).toMatch(/^c2\.[A-Za-z0-9_-]{48}$/);
    const keyReader = client(loose.url, { key: (await keyWith(t, ["manage_api_keys"])).key });
    await caughtUp();
    await pauseReplay();
    // the service knows replicas' positions from its checks (every second): one now, so it knows this one has `before`
    await loose.app.runtime.services.db.replicas.check();
    try {
      const second = await writer.post("/api/v1/discussions/ryw/comments", { body: "during the pause" });
      expect(second.status).toBe(201);
      const token = second.headers.get(HEADER)!;
      expect(token).toMatch(/^c2\./);
      expect(token).not.toBe(before);

      // another key, without the header: the replica, which has not replayed the second comment
      const replicaReads = await metric(loose, "db_read_routes_total", { target: "replica", reason: "route" });
      const plain = await other.get("/api/v1/discussions/ryw/comments");
      expect(plain.status).toBe(200);
      expect(bodies(plain)).toEqual(["before the pause"]);
      expect(await metric(loose, "db_read_routes_total", { target: "replica", reason: "route" })).toBeGreaterThan(replicaReads);
      // one comment, by id: the same
      expect((await other.get(`/api/v1/comments/${second.body.id}`)).status).toBe(404);
      // with the second write's token: only a replica past it may answer — none is, so the primary
      const fresh = await other.get("/api/v1/discussions/ryw/comments", { headers: { [HEADER]: token } });
      expect(bodies(fresh).sort()).toEqual(["before the pause", "during the pause"]);
      expect((await other.get(`/api/v1/comments/${second.body.id}`, { headers: { [HEADER]: token } })).status).toBe(200);
      // the first write's token: the replica has replayed past it, so it serves
      expect(bodies(await other.get("/api/v1/discussions/ryw/comments", { headers: { [HEADER]: before! } }))).toEqual(["before the pause"]);
      // something that is not a token: the primary (never a stale answer, never a refusal)
      expect(bodies(await other.get("/api/v1/discussions/ryw/comments", { headers: { [HEADER]: "junk" } })).length).toBe(2);
      // the key and the reader that wrote, within DATABASE_REPLICA_STICKY_MS and without the header: the primary
      expect(bodies(await t.api.get("/api/v1/discussions/ryw/comments")).length).toBe(2);
      const sameReader = client(loose.url, { key: (await keyWith(t, [])).key, identity: await t.identity("writer") });
      expect(bodies(await sameReader.get("/api/v1/discussions/ryw/comments")).length).toBe(2);

      // /graphql: the direct path (a backend's POST) and yoga's (GET) route the same way
      const query = `query { comments(discussionId: "ryw", first: 10) { edges { node { body } } } }`;
      const direct = async (headers: Record<string, string> = {}) =>
        (await other.post("/graphql", { query }, { headers })).body.data.comments.edges.length as number;
      expect(await direct()).toBe(1);
      expect(await direct({ [HEADER]: token })).toBe(2);
      const viaYoga = async (headers: Record<string, string> = {}) =>
        (await other.get(`/graphql?query=${encodeURIComponent(query)}`, { headers })).body.data.comments.edges.length as number;
      expect(await viaYoga()).toBe(1);
      expect(await viaYoga({ [HEADER]: token })).toBe(2);
      // a GraphQL query's answer carries no token; a mutation's does
      expect((await other.post("/graphql", { query })).headers.get(HEADER)).toBeNull();
      const mutation = await writer.post("/graphql", {
        query: `mutation { postComment(discussionId: "ryw", input: { body: "by mutation" }) { id } }`,
      });
      expect(mutation.body.errors).toBeUndefined();
      expect(mutation.headers.get(HEADER)).toMatch(/^c2\./);
      // reads that are not read routes (the keys) stay on the primary: the key made during the pause is listed
      const made = await keyWith(t, []);
      const keys = await keyReader.post("/graphql", { query: "query { apiKeys(first: 50) { edges { node { id } } } }" });
      expect(JSON.stringify(keys.body.data)).toContain(made.id);
    } finally {
      await resumeReplay();
    }
    await caughtUp();
    expect(bodies(await other.get("/api/v1/discussions/ryw/comments")).length).toBe(3);
  });

  it("lets browsers send the header and read it (CORS)", async () => {
    const origin = "https://site.example";
    const preflight = await fetch(`${loose.url}/api/v1/discussions/ryw/comments`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "x-api-key, x-service-consistency" },
    });
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/X-Service-Consistency/);
    const graphqlPreflight = await fetch(`${loose.url}/graphql`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "x-service-consistency" },
    });
    expect(graphqlPreflight.headers.get("access-control-allow-headers")).toMatch(/X-Service-Consistency/i);
    const written = await writer.post("/api/v1/discussions/cors/comments", { body: "from a page" }, { headers: { origin } });
    expect(written.headers.get(HEADER)).toMatch(/^c2\./);
    expect(written.headers.get("access-control-expose-headers")).toMatch(/X-Service-Consistency/);
  });

  it("replays a stream from the replica only when it has every requested event", async () => {
    await t.api.put("/api/v1/discussions/replay", {});
    for (let i = 0; i < 3; i++) expect((await writer.post("/api/v1/discussions/replay/comments", { body: `e${i}` })).status).toBe(201);
    // a stream keeps the discussion's channel open: later connects replay through the log reader
    const live = openSse(`${loose.url}/api/v1/stream/replay`, { "x-api-key": t.apiKey });
    await expect.poll(() => live.frames.some((f) => f.event === "connected"), WAIT).toBe(true);
    await caughtUp();
    await pauseReplay();
    let behind: Awaited<ReturnType<typeof openSse>> | undefined;
    try {
      for (let i = 3; i < 6; i++) expect((await writer.post("/api/v1/discussions/replay/comments", { body: `e${i}` })).status).toBe(201);
      await live.waitForEvents(3);
      const fromPrimary = await metric(loose, "db_read_routes_total", { target: "primary", reason: "replay" });
      // the replica lacks the newest events: the primary replays them, with no gap
      behind = openSse(`${loose.url}/api/v1/stream/replay`, { "x-api-key": t.apiKey, "last-event-id": "1" });
      await behind.waitForEvents(5);
      expect(seqsOf(behind.events())).toEqual([2, 3, 4, 5, 6]);
      expect(await metric(loose, "db_read_routes_total", { target: "primary", reason: "replay" })).toBeGreaterThan(fromPrimary);
    } finally {
      behind?.close();
      await resumeReplay();
    }
    await caughtUp();
    const fromReplica = await metric(loose, "db_read_routes_total", { target: "replica", reason: "replay" });
    const caught = openSse(`${loose.url}/api/v1/stream/replay`, { "x-api-key": t.apiKey, "last-event-id": "2" });
    await caught.waitForEvents(4);
    expect(seqsOf(caught.events())).toEqual([3, 4, 5, 6]);
    expect(await metric(loose, "db_read_routes_total", { target: "replica", reason: "replay" })).toBeGreaterThan(fromReplica);
    caught.close();
    live.close();
  });
});

describe("the replicas' health", () => {
  let t: TestTenant;
  let writer: ReturnType<typeof client>;
  beforeAll(async () => {
    t = await createTestTenant(strict);
    writer = await t.reader("writer");
  });

  it("takes a replica lagging more than DATABASE_REPLICA_MAX_LAG_MS out, and back once it catches up", async () => {
    await caughtUp();
    await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("serving");
    await pauseReplay();
    try {
      expect((await writer.post("/api/v1/discussions/lag/comments", { body: "while lagging" })).status).toBe(201);
      await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("lagging");
      expect((await replicaOf(strict)).lagMs).toBeGreaterThan(300);
      expect(await metric(strict, "db_replica_state", { replica: "replica-1", state: "lagging" })).toBe(1);
      expect(await metric(strict, "db_replica_serving", { replica: "replica-1" })).toBe(0);
      expect(await metric(strict, "db_replica_lag_seconds", { replica: "replica-1" })).toBeGreaterThan(0.3);
      // no replica serving: the primary, which has the comment
      const noReplica = await metric(strict, "db_read_routes_total", { target: "primary", reason: "no_replica" });
      expect(bodies(await t.api.get("/api/v1/discussions/lag/comments"))).toEqual(["while lagging"]);
      expect(await metric(strict, "db_read_routes_total", { target: "primary", reason: "no_replica" })).toBeGreaterThan(noReplica);
    } finally {
      await resumeReplay();
    }
    await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("serving");
    expect(await metric(strict, "db_replica_serving", { replica: "replica-1" })).toBe(1);
    const replicaReads = await metric(strict, "db_read_routes_total", { target: "replica", reason: "route" });
    expect(bodies(await t.api.get("/api/v1/discussions/lag/comments"))).toEqual(["while lagging"]);
    expect(await metric(strict, "db_read_routes_total", { target: "replica", reason: "route" })).toBeGreaterThan(replicaReads);
  });

  it("answers every read while the standby dies (from the primary), shows it down, and takes it back when it returns", async () => {
    expect((await writer.post("/api/v1/discussions/down/comments", { body: "kept" })).status).toBe(201);
    await caughtUp();
    await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("serving");
    const reads = () => Promise.all(Array.from({ length: 5 }, () => t.api.get("/api/v1/discussions/down/comments")));
    await standby.crash();
    try {
      // the first reads may still be sent to the replica: they fail over to the primary, never a 5xx
      for (let round = 0; round < 3; round++) for (const r of await reads()) expect([r.status, bodies(r)]).toEqual([200, ["kept"]]);
      await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("down");
      expect((await replicaOf(strict)).lagMs).toBeNull();
      expect(await metric(strict, "db_replica_state", { replica: "replica-1", state: "down" })).toBe(1);
      const ready = await fetch(`${strict.url}/readyz`);
      expect(ready.status).toBe(200); // a replica is not a dependency of readiness
      for (const r of await reads()) expect(r.status).toBe(200);
    } finally {
      await standby.start();
    }
    await expect.poll(async () => (await replicaOf(strict)).state, WAIT).toBe("serving");
    const replicaReads = await metric(strict, "db_read_routes_total", { target: "replica", reason: "route" });
    for (const r of await reads()) expect(r.status).toBe(200);
    expect(await metric(strict, "db_read_routes_total", { target: "replica", reason: "route" })).toBeGreaterThan(replicaReads);
  });
});
