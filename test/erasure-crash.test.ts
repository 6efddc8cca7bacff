// A reader's erasure under an Idempotency-Key, its server killed midway (contract sections 11 and
// 13): the same DELETE retried with the same key on another instance ends with nothing of the
// reader left — comments, reactions, reports, event-log payloads, pending webhook jobs, the exports,
// discussion counts — and answers 204 without Idempotent-Replayed (the retry ran the erasure again;
// src/modules/readers/erasure.ts). The first server is a child process (node on dist/, erasing 5
// comments per batch); the test holds a row lock that the statement where it is to die needs, waits
// for the child to block on it, kills the child with SIGKILL and ends the blocked statement in the
// database (a crash before that statement committed). The retrying server's clock is past the
// claim's lease, so the retry takes the key over without waiting 30 s.
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "./support/client.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startServer, testEnv, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint } from "./support/receiver-app.js";
import { spawnReady } from "./support/process.js";
import { CLAIM_LEASE_MS } from "../src/idempotency/records.js";

const BATCH = 5;
const PER_DISCUSSION = 12; // 3 batches each: 5, 5, 2
const DISCUSSIONS = ["era-a", "era-b", "era-c"]; // erased in this order (by id)
const SECRET = "quokka-watermark";
const SECRET_NAME = "Philippa Unerased";

let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
let receiver: Receiver;
let child: ChildProcess | undefined;

beforeAll(async () => {
  isolated = await isolatedDatabase("erasecrash");
  // another instance, its clock past the lease of a claim the child made just now
  const clock = { now: () => new Date(Date.now() + CLAIM_LEASE_MS + 1_000) };
  server = await startServer({ DATABASE_URL: isolated.url }, { clock });
  receiver = await startReceiver();
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await server?.stop();
  await receiver?.close();
  await isolated?.drop();
});

async function startChild(): Promise<{ proc: ChildProcess; url: string }> {
  const script = fileURLToPath(new URL("./support/erasure-crash-server.mjs", import.meta.url));
  const env = { ...process.env, ...testEnv({ DATABASE_URL: isolated.url, ERASURE_BATCH_SIZE: String(BATCH) }) };
  const { proc, ready } = await spawnReady(script, env, 45_000); // a node start: 3 s quiet, 30+ s under load
  return { proc, url: ready };
}

const query = async <T = any>(text: string, params: unknown[]): Promise<T[]> => server.app.runtime.services.sql.query<T>(text, params);

/** ann's comments in a discussion, in the order the erasure takes them (eng_erase_reader_batch). */
const annsComments = (t: TestTenant, discussion: string) =>
  query<{ id: string }>(
    `SELECT id FROM comments WHERE tenant_id = $1 AND discussion_id = $2 AND author_id = 'ann' ORDER BY depth DESC, id`,
    [t.tenantId, discussion],
  );

async function setup(mode: "anonymize" | "delete") {
  const t = await createTestTenant(server);
  if (mode === "delete") expect((await t.api.patch("/api/v1/settings", { privacy: { erasure: "delete" } })).status).toBe(200);
  await createVerifiedEndpoint(t, receiver, { events: ["*"] }); // no worker runs: its jobs stay pending
  const ann = await t.reader("ann", { name: SECRET_NAME, ttlSeconds: 3600 });
  const bob = await t.reader("bob", { name: "Bob" });
  const bobs: string[] = [];
  for (const d of DISCUSSIONS) {
    bobs.push((await bob.post(`/api/v1/discussions/${d}/comments`, { body: `bob in ${d}` })).body.id);
    for (let i = 0; i < PER_DISCUSSION; i++) {
      expect((await ann.post(`/api/v1/discussions/${d}/comments`, { body: `${SECRET} ${d} ${i}` })).status).toBe(201);
    }
    expect((await ann.post(`/api/v1/comments/${bobs.at(-1)}/reactions`, { kind: "like" })).status).toBe(200);
  }
  // a reply of bob's under ann's first comment: erased with delete, it stays as a tombstone
  const [first] = await annsComments(t, "era-a");
  expect((await bob.post("/api/v1/discussions/era-a/comments", { body: "bob replies", parentId: first!.id })).status).toBe(201);
  expect((await ann.post(`/api/v1/comments/${bobs[2]}/reports`, { reason: "other", note: SECRET })).status).toBe(201);
  return { t, bobs };
}

/**
 * Sends the keyed DELETE to a child server and kills it once it blocks on the row `lock` selects
 * (FOR UPDATE, held by the test): the statement that needed it never commits.
 */
async function eraseAndKill(t: TestTenant, key: string, lock: { sql: string; params: unknown[] }): Promise<void> {
  const holder = new pg.Client({ connectionString: isolated.url });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    expect((await holder.query(lock.sql, lock.params)).rowCount).toBe(1);
    const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const started = await startChild();
    child = started.proc;
    let outcome = "still running";
    const answer = client(started.url, { key: t.apiKey })
      .del("/api/v1/readers/ann", { headers: { "idempotency-key": key } })
      .then((r) => (outcome = `answered ${r.status}`))
      .catch(() => (outcome = "killed"));
    let blocked: number | undefined;
    for (let i = 0; !blocked; i++) {
      if (i > 600) throw new Error(`the erasure did not reach the locked row (${outcome})`);
      // pg_stat_activity is read once per transaction unless its snapshot is cleared
      await holder.query("SELECT pg_stat_clear_snapshot()");
      const sql = "SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))";
      blocked = (await holder.query<{ pid: number }>(sql, [holderPid])).rows[0]?.pid;
      if (!blocked) await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise((ok) => child!.once("exit", ok));
    child.kill("SIGKILL");
    await exited;
    child = undefined;
    expect(await answer).toBe("killed");
    // the dead process's statement, still waiting in the database, ends without committing
    const ended = await holder.query<{ ok: boolean }>("SELECT pg_terminate_backend($1, 10000) AS ok", [blocked]);
    expect(ended.rows[0]!.ok).toBe(true);
  } finally {
    await holder.query("ROLLBACK").catch(() => undefined);
    await holder.end();
  }
}

const left = async (t: TestTenant) =>
  Object.fromEntries(await Promise.all(DISCUSSIONS.map(async (d) => [d, (await annsComments(t, d)).length] as const)));

async function expectNothingOfAnnLeft(t: TestTenant, mode: "anonymize" | "delete", bobs: string[]) {
  const everything = JSON.stringify(
    await query(
      `SELECT (SELECT json_agg(c) FROM comments c WHERE c.tenant_id = $1) AS comments,
              (SELECT json_agg(r) FROM reactions r WHERE r.tenant_id = $1) AS reactions,
              (SELECT json_agg(x) FROM comment_reports x WHERE x.tenant_id = $1) AS reports,
              (SELECT json_agg(e) FROM events e WHERE e.tenant_id = $1) AS events,
              (SELECT json_agg(rd) FROM readers rd WHERE rd.tenant_id = $1) AS readers`,
      [t.tenantId],
    ),
  );
  for (const trace of [SECRET, SECRET_NAME, '"ann"']) expect(everything).not.toContain(trace);

  const comments = await query<{ status: string; body: string; author_id: string; n: number }>(
    `SELECT status, body, author_id, count(*)::int AS n FROM comments WHERE tenant_id = $1 AND author_id <> 'bob' GROUP BY 1, 2, 3`,
    [t.tenantId],
  );
  if (mode === "anonymize") {
    expect(comments).toEqual([{ status: "approved", body: "[erased]", author_id: "", n: DISCUSSIONS.length * PER_DISCUSSION }]);
  } else {
    // removed, but for the one under bob's reply
    expect(comments).toEqual([{ status: "deleted", body: "", author_id: "", n: 1 }]);
  }
  // what webhook receivers are still to be sent: the scrubbed events
  const jobs = await query<{ envelope: string }>(
    `SELECT COALESCE(e.envelope, e.payload::text) AS envelope FROM webhook_deliveries w JOIN events e ON e.id = w.event_id WHERE w.tenant_id = $1 AND w.status = 'pending'`,
    [t.tenantId],
  );
  expect(jobs.length).toBeGreaterThan(DISCUSSIONS.length * PER_DISCUSSION);
  const sent = jobs.map((j) => JSON.stringify(JSON.parse(j.envelope))).join("\n");
  expect(sent).toContain('"comment"');
  for (const trace of [SECRET, SECRET_NAME, '"ann"']) expect(sent).not.toContain(trace);

  // the exports
  const ndjson = await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": t.apiKey } });
  expect(ndjson.status).toBe(200);
  const exported = await ndjson.text();
  expect(exported.split("\n").filter(Boolean).length).toBeGreaterThan(DISCUSSIONS.length);
  for (const trace of [SECRET, SECRET_NAME, '"ann"']) expect(exported).not.toContain(trace);
  expect((await t.api.get("/api/v1/readers/ann/export")).status).toBe(404);
  expect((await t.api.get("/api/v1/readers/ann")).status).toBe(404);

  // discussion counts and reactions, as readers see them
  for (const [i, d] of DISCUSSIONS.entries()) {
    const bobsHere = d === "era-a" ? 2 : 1;
    const count = (await t.api.get(`/api/v1/discussions/${d}`)).body.commentCount;
    expect(count, d).toBe(mode === "anonymize" ? PER_DISCUSSION + bobsHere : bobsHere);
    expect((await t.api.get(`/api/v1/comments/${bobs[i]}`)).body.reactions, d).toEqual({});
  }
}

describe("an erasure killed midway, retried with the same Idempotency-Key on another instance", () => {
  const cases: {
    name: string;
    mode: "anonymize" | "delete";
    /** the row whose lock the statement to die in waits for */
    lock: (t: TestTenant) => Promise<{ sql: string; params: unknown[] }>;
    /** ann's comments per discussion when the child died */
    leftAtCrash: Record<string, number>;
  }[] = [
    {
      name: "after the first batch",
      mode: "anonymize",
      lock: async (t) => ({
        sql: "SELECT 1 FROM comments WHERE id = $1 FOR UPDATE",
        params: [(await annsComments(t, "era-a"))[BATCH]!.id],
      }),
      leftAtCrash: { "era-a": PER_DISCUSSION - BATCH, "era-b": PER_DISCUSSION, "era-c": PER_DISCUSSION },
    },
    ...(["anonymize", "delete"] as const).map((mode) => ({
      name: "midway: one discussion done, the next one's first batch done",
      mode,
      lock: async (t: TestTenant) => ({
        sql: "SELECT 1 FROM comments WHERE id = $1 FOR UPDATE",
        params: [(await annsComments(t, "era-b"))[BATCH]!.id],
      }),
      leftAtCrash: { "era-a": 0, "era-b": PER_DISCUSSION - BATCH, "era-c": PER_DISCUSSION },
    })),
    {
      name: "after every batch, before the statement without a discussion lock",
      mode: "delete",
      lock: async (t) => ({ sql: "SELECT 1 FROM readers WHERE tenant_id = $1 AND id = 'ann' FOR UPDATE", params: [t.tenantId] }),
      leftAtCrash: { "era-a": 0, "era-b": 0, "era-c": 0 },
    },
  ];

  for (const c of cases) {
    it(`${c.name} (${c.mode}): the retry finishes it; nothing of the reader is left`, async () => {
      const { t, bobs } = await setup(c.mode);
      const key = `erase-${c.mode}-${Date.now()}`;
      await eraseAndKill(t, key, await c.lock(t));
      expect(await left(t)).toEqual(c.leftAtCrash);
      expect((await t.api.get("/api/v1/readers/ann")).status).toBe(200); // the profile goes last

      // the retry: the same request, the same key, another instance
      const retry = await t.api.del("/api/v1/readers/ann", { headers: { "idempotency-key": key } });
      expect(retry.status).toBe(204);
      // it ran the erasure again (what was left); its answer is its own, not a replay
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      await expectNothingOfAnnLeft(t, c.mode, bobs);

      // its answer is kept now: a repeat gets it back, replayed
      const again = await t.api.del("/api/v1/readers/ann", { headers: { "idempotency-key": key } });
      expect(again.status).toBe(204);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    }, 60_000);
  }
});
