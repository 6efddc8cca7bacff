// Comment search's documents as a projection of the event log, off the write path
// (src/modules/comments/engine/search-projector.ts, prisma/sql/72-search.sql): a new comment is
// found once the projector has passed its event, and a search carrying X-Service-Consistency waits
// for that; an edit, a deletion, a rejection and an erasure change what is found as the search's
// rules say; `engagement search rebuild` finds every comment again (imported ones and those whose
// events the log no longer holds too); two instances apply each event once, and one that runs no
// projector has its writes projected by the other. Conditions are waited for, never slept on.
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { importFinished, postImport } from "./support/imports.js";
import { disqusXml } from "./support/import-files.js";
import { client, type Client } from "./support/client.js";

const CONSISTENCY = "x-service-consistency";
/** the token a write answers with (any write's: without replicas they are all the same) */
let token: string;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** The ids a moderator's search for `q` answers, newest first; with `wait`, carrying the write's token. */
async function found(c: Client, q: string, opts: { wait?: boolean; query?: string } = {}): Promise<string[]> {
  const r = await c.get(`/api/v1/comments/search?q=${encodeURIComponent(q)}${opts.query ?? ""}`, {
    headers: opts.wait ? { [CONSISTENCY]: token } : {},
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.items as { id: string }[]).map((c) => c.id);
}

/** A comment posted by `sub` in `discussion`; notes the write's token. */
async function post(t: TestTenant, sub: string, discussion: string, body: string): Promise<string> {
  const r = await (await t.reader(sub)).post(`/api/v1/discussions/${discussion}/comments`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  token = r.headers.get(CONSISTENCY)!;
  expect(token).toEqual(expect.any(String));
  return r.body.id as string;
}

const db = () => server.app.runtime.services.sql;
const documentsOf = async (tenantId: string) =>
  (
    await db().query<{ comment_id: string }>("SELECT comment_id FROM comment_search WHERE tenant_id = $1 ORDER BY comment_id", [tenantId])
  ).map((r) => r.comment_id);
/** discussions of the tenant whose events the projection has not passed */
const behind = async (tenantId: string) =>
  (
    await db().query<{ id: string }>(
      `SELECT d.id FROM discussions d LEFT JOIN search_positions p ON p.tenant_id = d.tenant_id AND p.discussion_id = d.id
        WHERE d.tenant_id = $1 AND d.seq > COALESCE(p.seq, 0)`,
      [tenantId],
    )
  ).map((r) => r.id);

/** The operator's shell, on the run's database. */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
  for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
  return env;
}

describe("the search projection on one instance", { timeout: 60_000 }, () => {
  it("finds a new comment once the projector has passed its event, its discussion's position then at its head", async () => {
    const t = await createTestTenant(server);
    const id = await post(t, "ann", "birds", "an albatross overhead");
    await vi.waitFor(async () => expect(await found(t.api, "albatross")).toEqual([id]), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect(await behind(t.tenantId)).toEqual([]), { timeout: 10_000, interval: 20 });
    // a search with the token finds the next one at once: it waited for the projection if it had to
    const next = await post(t, "bob", "birds", "a second albatross");
    expect(await found(t.api, "albatross", { wait: true })).toEqual([next, id]);
    expect(await documentsOf(t.tenantId)).toEqual([id, next].sort());
    // the projector's work and its lag behind the writes, on the metrics
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^search_projection_events_total [1-9]/m);
    expect(metrics).toMatch(/^search_projection_lag_seconds_count [1-9]/m);
  });

  it("follows an edit, a deletion, a rejection and an erasure as the search's rules say", async () => {
    const t = await createTestTenant(server);
    const edited = await post(t, "ann", "zoo", "a zebra crossing");
    const deleted = await post(t, "bob", "zoo", "a zebra to delete");
    const rejected = await post(t, "cy", "zoo", "a zebra to reject");
    const annOther = await post(t, "ann", "park", "a zebra in the park");
    expect(await found(t.api, "zebra", { wait: true })).toEqual([annOther, rejected, deleted, edited]);

    expect((await (await t.reader("ann")).patch(`/api/v1/comments/${edited}`, { body: "a giraffe crossing" })).status).toBe(200);
    token = (await t.api.del(`/api/v1/comments/${deleted}`)).headers.get(CONSISTENCY)!;
    token = (await t.api.post(`/api/v1/comments/${rejected}/reject`)).headers.get(CONSISTENCY)!;
    expect(await found(t.api, "zebra", { wait: true })).toEqual([annOther, rejected]); // every status but deleted
    expect(await found(t.api, "giraffe", { wait: true })).toEqual([edited]);
    expect(await found(t.api, "zebra", { wait: true, query: "&status=approved" })).toEqual([annOther]);
    expect(await found(t.api, "zebra", { wait: true, query: "&status=rejected" })).toEqual([rejected]);
    expect(await found(t.api, "zebra", { wait: true, query: "&status=deleted" })).toEqual([]);
    expect(await documentsOf(t.tenantId)).not.toContain(deleted);

    // a reader's erasure takes their words in its own transaction: none left to find
    const erased = await t.api.del("/api/v1/readers/ann");
    expect(erased.status).toBe(204);
    token = erased.headers.get(CONSISTENCY)!;
    const withWords = async () =>
      (
        await db().query<{ comment_id: string }>(
          "SELECT comment_id FROM comment_search WHERE tenant_id = $1 AND length(vector) > 0 ORDER BY comment_id",
          [t.tenantId],
        )
      ).map((r) => r.comment_id);
    expect(await withWords()).toEqual([rejected]);
    expect(await found(t.api, "giraffe", { wait: true })).toEqual([]);
    expect(await found(t.api, "zebra", { wait: true })).toEqual([rejected]);
    await vi.waitFor(async () => expect(await behind(t.tenantId)).toEqual([]), { timeout: 10_000, interval: 20 });
    // the projector made their comments (kept, the body a marker) documents without words: found by a
    // search by filters (which walks the documents), never by words
    expect(await documentsOf(t.tenantId)).toEqual([annOther, edited, rejected].sort());
    const words = await db().query<{ comment_id: string; words: string }>(
      "SELECT comment_id, vector::text AS words FROM comment_search WHERE tenant_id = $1 AND comment_id = ANY ($2)",
      [t.tenantId, [annOther, edited]],
    );
    expect(words.map((w) => w.words)).toEqual(["", ""]);
    expect(await withWords()).toEqual([rejected]);
    expect(await found(t.api, "", { wait: true, query: "&discussionId=zoo" })).toEqual([rejected, edited]);
    expect(await found(t.api, "", { wait: true, query: "&status=deleted" })).toEqual([deleted]);
    expect(await found(t.api, "erased", { wait: true })).toEqual([]);
  });

  it("walks the documents for a search by filters alone: a new comment is found once projected (at once with the token), with links by the documents that say so", async () => {
    const t = await createTestTenant(server);
    const plain = await post(t, "ann", "f1", "no link here");
    const linked = await post(t, "bob", "f2", "see [the notes](https://notes.example/a)");
    // with the write's token the search waits for the projection: both found at once, newest first
    expect(await found(t.api, "", { wait: true })).toEqual([linked, plain]);
    expect(await found(t.api, "", { wait: true, query: "&hasLinks=true" })).toEqual([linked]);
    expect(await found(t.api, "", { wait: true, query: "&hasLinks=false" })).toEqual([plain]);
    expect(await found(t.api, "", { wait: true, query: "&readerId=ann" })).toEqual([plain]);
    expect(await found(t.api, "", { wait: true, query: "&discussionId=f2&status=approved" })).toEqual([linked]);
    const docs = await db().query<{ comment_id: string; has_links: boolean }>(
      "SELECT comment_id, has_links FROM comment_search WHERE tenant_id = $1 ORDER BY has_links",
      [t.tenantId],
    );
    expect(docs).toEqual([
      { comment_id: plain, has_links: false },
      { comment_id: linked, has_links: true },
    ]);
    // an edit that takes the link away: the document follows, and the comment's own column decides at once
    expect((await (await t.reader("bob")).patch(`/api/v1/comments/${linked}`, { body: "no link any more" })).status).toBe(200);
    expect(await found(t.api, "", { query: "&hasLinks=true" })).toEqual([]);
    token = (await (await t.reader("bob")).patch(`/api/v1/comments/${linked}`, { body: "back: https://notes.example/b" })).headers.get(
      CONSISTENCY,
    )!;
    expect(await found(t.api, "", { wait: true, query: "&hasLinks=true" })).toEqual([linked]);
    // the statuses of the queue's index: walked on comments, a held comment found before any projection
    const held = await t.api.post(`/api/v1/comments/${plain}/reject`);
    expect(held.status).toBe(200);
    expect(await found(t.api, "", { query: "&status=rejected" })).toEqual([plain]);
  });

  it("`search rebuild` finds every comment again: documents cleared, events gone from the log, imported comments", async () => {
    const t = await createTestTenant(server);
    const other = await createTestTenant(server);
    const ids = [
      await post(t, "ann", "r1", "a kestrel hovers"),
      await post(t, "bob", "r1", "another kestrel"),
      await post(t, "cy", "r2", "kestrel again"),
    ];
    const theirs = await post(other, "dee", "r1", "their kestrel");
    expect(await found(t.api, "kestrel", { wait: true })).toEqual([...ids].reverse());
    // imported comments have no events: the import writes their documents itself
    const imported = await importFinished(
      t,
      await postImport(
        server,
        t,
        "disqus",
        disqusXml(
          [{ id: "th1", identifier: "r3", link: "https://news.example/r3", title: "R3" }],
          [{ id: "p1", thread: "th1", message: "an imported kestrel", createdAt: "2024-02-01T00:00:00Z", author: { name: "Old" } }],
        ),
      ),
    );
    expect(imported).toMatchObject({ state: "succeeded", comments: 1 });
    const all = await found(t.api, "kestrel", { wait: true });
    expect(all).toHaveLength(4);

    // the documents cleared (and one discussion's events gone, as when retention has dropped their day)
    await db().query("DELETE FROM comment_search WHERE tenant_id = $1", [t.tenantId]);
    expect(await found(t.api, "kestrel")).toEqual([]);
    const rebuilt = await runCliInProcess(["search", "rebuild", "--tenant", t.tenantId, "--json"], cliEnv());
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toEqual({ tenants: 1, discussions: 3, documents: 4, orphans: 0 });
    expect(await found(t.api, "kestrel", { wait: true })).toEqual(all);
    expect(await found(other.api, "kestrel", { wait: true })).toEqual([theirs]); // another tenant's untouched

    // events the log no longer holds: the projector's sweep finds the discussion behind and makes its
    // documents from its comments
    await db().query("DELETE FROM comment_search WHERE tenant_id = $1 AND discussion_id = 'r1'", [t.tenantId]);
    await db().query("DELETE FROM events WHERE tenant_id = $1 AND discussion_id = 'r1'", [t.tenantId]);
    await db().query("UPDATE search_positions SET seq = 0 WHERE tenant_id = $1 AND discussion_id = 'r1'", [t.tenantId]);
    await vi.waitFor(async () => expect(await found(t.api, "kestrel")).toEqual(all), { timeout: 15_000, interval: 50 });
    expect(await behind(t.tenantId)).toEqual([]);

    const unknown = await runCliInProcess(["search", "rebuild", "--tenant", "ten_does_not_exist"], cliEnv());
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe("engagement: No tenant with id ten_does_not_exist\n");
  });
});

describe("two instances", { timeout: 120_000 }, () => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let a: TestServer;
  let b: TestServer;
  let quiet: TestServer;
  beforeAll(async () => {
    // a database of their own: every event in it is one of this test's
    isolated = await isolatedDatabase("search_projection");
    a = await startServer({ ...isolated.env, SEARCH_POLL_MS: "20" });
    b = await startServer({ ...isolated.env, SEARCH_POLL_MS: "20" });
    quiet = await startServer({ ...isolated.env, RUN_SEARCH_PROJECTOR: "0" });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), quiet?.stop()]);
    await isolated?.drop();
  });

  it("apply each event once, and project the writes of an instance that runs no projector", async () => {
    const t = await createTestTenant(a);
    const on = (s: TestServer) => async (sub: string) => client(s.url, { key: t.apiKey, identity: await t.identity(sub) });
    const writers = [on(a), on(b), on(quiet)];
    const posted: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await (await writers[i % 3]!(`r${i % 4}`)).post(`/api/v1/discussions/d${i % 5}/comments`, { body: `osprey number ${i}` });
      expect(r.status).toBe(201);
      posted.push(r.body.id);
      token = r.headers.get(CONSISTENCY)!;
    }
    // the instance without a projector waits for the others' (their sweeps every 20 ms)
    const quietApi = client(quiet.url, { key: t.apiKey });
    expect((await found(quietApi, "osprey", { wait: true, query: "&limit=50" })).sort()).toEqual([...posted].sort());
    const events = async () =>
      Number((await a.app.runtime.services.sql.query<{ n: string }>("SELECT sum(seq)::text AS n FROM discussions", []))[0]!.n);
    const total = await events();
    expect(total).toBe(30);
    const passed = () => a.app.runtime.search.projected + b.app.runtime.search.projected + quiet.app.runtime.search.projected;
    await vi.waitFor(() => expect(passed()).toBe(total), { timeout: 10_000, interval: 20 });
    expect(quiet.app.runtime.search.projected).toBe(0);
    // sweeps on both find nothing left: still once
    await Promise.all([a.app.runtime.search.catchUp(), b.app.runtime.search.catchUp()]);
    expect(passed()).toBe(total);
  });
});

describe("one step of the projector", { timeout: 60_000 }, () => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let quiet: TestServer;
  beforeAll(async () => {
    // no projector anywhere on this database: the steps below are the only ones
    isolated = await isolatedDatabase("search_projection_step");
    quiet = await startServer({ ...isolated.env, RUN_SEARCH_PROJECTOR: "0" });
  });
  afterAll(async () => {
    await quiet?.stop();
    await isolated?.drop();
  });

  it("takes many discussions of several tenants at once, at most its limit of each, and leaves the rest for the next", async () => {
    const t = await createTestTenant(quiet);
    const u = await createTestTenant(quiet);
    const long = [];
    for (let i = 0; i < 5; i++) long.push(await post(t, `r${i}`, "long", `heron ${i}`));
    const short = await post(t, "ann", "short", "heron short");
    const theirs = await post(u, "bob", "long", "heron theirs");
    const sql = quiet.app.runtime.services.sql;
    type Step = { events: number; more: [string, string][]; gaps: [string, string][]; lags: number[] };
    const step = async (limit: number) =>
      (
        await sql.query<{ r: Step }>("SELECT eng_search_project($1::text[], $2::text[], $3::int) AS r", [
          [t.tenantId, t.tenantId, u.tenantId, t.tenantId],
          ["long", "short", "long", "long"],
          limit,
        ])
      )[0]!.r;
    const docs = async () =>
      (await sql.query<{ id: string }>("SELECT comment_id AS id FROM comment_search ORDER BY comment_id", [])).map((r) => r.id);
    const positions = async () =>
      (
        await sql.query<{ k: string; seq: number }>(
          "SELECT tenant_id || '/' || discussion_id AS k, seq FROM search_positions ORDER BY tenant_id, discussion_id",
          [],
        )
      ).map((r) => `${r.k === `${u.tenantId}/long` ? "u" : "t"}/${r.k.split("/")[1]}=${r.seq}`);

    const first = await step(2);
    expect(first).toMatchObject({ events: 4, more: [[t.tenantId, "long"]], gaps: [] });
    expect(first.lags).toHaveLength(4);
    expect(await docs()).toEqual([long[0], long[1], short, theirs].sort());
    expect((await positions()).sort()).toEqual(["t/long=2", "t/short=1", "u/long=1"]);
    expect(await step(2)).toMatchObject({ events: 2, more: [[t.tenantId, "long"]] });
    // a gap: the next event is gone from the log, the discussion stays where it is
    await sql.query("DELETE FROM events WHERE tenant_id = $1 AND discussion_id = 'long' AND seq = 5", [t.tenantId]);
    expect(await step(2)).toEqual({ events: 0, more: [], gaps: [[t.tenantId, "long"]], lags: [] });
    expect((await positions()).sort()).toEqual(["t/long=4", "t/short=1", "u/long=1"]);
    expect(await docs()).toEqual([...long.slice(0, 4), short, theirs].sort());
    // nothing behind: a step passes nothing
    expect(await step(2)).toMatchObject({ events: 0, more: [] });
  });
});
