// Comment search for moderators (contract section 21): GET /api/v1/comments/search and GraphQL
// searchComments. Query syntax (all words, prefix, phrase, exclusion; case- and accent-insensitive),
// each filter, paging, the capability, validation — on PostgreSQL and on the embedded database
// (PGlite, which loads the unaccent extension itself: src/db/pglite-extensions.ts).
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { pgliteDataDir } from "./support/pglite-template.js";
import type { Client } from "./support/client.js";

interface Seeded {
  server: TestServer;
  t: TestTenant;
  mod: Client;
  plainKey: string;
  /** comment ids by name */
  ids: Record<string, string>;
  /** each comment's creation time by name */
  at: Record<string, string>;
  close(): Promise<void>;
}

/** The comments every search below runs over, one second apart (names in posting order). */
async function seed(server: TestServer, clock: ReturnType<typeof manualClock>, close: () => Promise<void>): Promise<Seeded> {
  const t = await createTestTenant(server);
  const plainKey = (await keyWith(t, [])).key;
  // the moderator's searches carry the token a write answers with, as the console sends it: each
  // waits until the search documents (projected from the event log after the commit) hold the writes
  const token = (await t.api.put("/api/v1/discussions/d0", {})).headers.get("x-service-consistency")!;
  const mod = t.as({ key: (await keyWith(t, ["moderate_content"])).key, headers: { "x-service-consistency": token } });
  const as = async (sub: string) =>
    t.as({ key: plainKey, identity: await t.identity(sub, { iat: Math.floor(clock.now().getTime() / 1000) }) });
  const ids: Record<string, string> = {};
  const at: Record<string, string> = {};
  const post = async (name: string, sub: string, discussion: string, body: string) => {
    clock.advance(1000);
    const r = await (await as(sub)).post(`/api/v1/discussions/${discussion}/comments`, { body });
    expect(r.status).toBe(201);
    ids[name] = r.body.id;
    at[name] = r.body.createdAt;
  };
  await post("cafe1", "alice", "d1", "The Café is open late");
  await post("cafe2", "bob", "d2", "CAFE closes early tonight");
  await post("link", "alice", "d1", "Visit https://example.com for details");
  await post("prog1", "carol", "d2", "Programming in TypeScript is fun");
  await post("prog2", "bob", "d1", "I like programs and the café crème");
  await post("notopen", "carol", "d2", "fun is not open");
  await post("spam", "dave", "d1", "spam spam buy now");
  await post("gone", "dave", "d2", "deleted words here");
  expect((await mod.post(`/api/v1/comments/${ids.spam}/reject`)).status).toBe(200);
  expect((await mod.del(`/api/v1/comments/${ids.gone}`)).status).toBe(204);
  expect((await (await as("bob")).post(`/api/v1/comments/${ids.prog1}/reports`, { reason: "spam" })).status).toBe(201);
  // another tenant's café is never found
  const other = await createTestTenant(server);
  expect((await (await other.reader("eve")).post("/api/v1/discussions/d1/comments", { body: "café café" })).status).toBe(201);
  return { server, t, mod, plainKey, ids, at, close };
}

const engines: [string, () => Promise<Seeded>][] = [
  [
    "PostgreSQL",
    async () => {
      const clock = manualClock(new Date());
      const server = await startServer({}, { clock });
      return seed(server, clock, () => server.stop());
    },
  ],
  [
    "the embedded database (PGlite)",
    async () => {
      const clock = manualClock(new Date());
      const dataDir = await pgliteDataDir("eng-search-");
      const app = await buildApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "silent" }), { clock });
      const server: TestServer = { url: await app.start(), app, stop: () => app.stop() };
      expect(app.runtime.services.db.kind).toBe("embedded");
      return seed(server, clock, async () => {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      });
    },
  ],
];

describe.each(engines)("comment search on %s", (_engine, start) => {
  let s: Seeded;
  beforeAll(async () => {
    s = await start();
  }, 120_000);
  afterAll(() => s?.close());

  /** the names of the comments a search answers, in its order */
  const search = async (query: string) => {
    const r = await s.mod.get(`/api/v1/comments/search?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const byId = Object.fromEntries(Object.entries(s.ids).map(([name, id]) => [id, name]));
    return (r.body.items as { id: string }[]).map((c) => byId[c.id] ?? c.id);
  };
  const q = (text: string) => `q=${encodeURIComponent(text)}`;

  it("matches every word, ignoring case and accents, newest first", async () => {
    expect(await search(q("cafe"))).toEqual(["prog2", "cafe2", "cafe1"]);
    expect(await search(q("CAFÉ"))).toEqual(["prog2", "cafe2", "cafe1"]);
    expect(await search(q("café open"))).toEqual(["cafe1"]);
    expect(await search(q("creme"))).toEqual(["prog2"]);
    expect(await search(q("nothing-like-this"))).toEqual([]);
  });

  it("takes a trailing * as a prefix", async () => {
    expect(await search(q("prog*"))).toEqual(["prog2", "prog1"]);
    expect(await search(q("prog"))).toEqual([]);
    expect(await search(q("typesc* fun"))).toEqual(["prog1"]);
  });

  it("matches a quoted phrase as adjacent words in order", async () => {
    expect(await search(q("open"))).toEqual(["notopen", "cafe1"]);
    expect(await search(q('"is open"'))).toEqual(["cafe1"]);
    expect(await search(q('"open is"'))).toEqual([]);
    expect(await search(q('"CAFÉ is OPEN" late'))).toEqual(["cafe1"]);
  });

  it("leaves out -excluded words, phrases and prefixes", async () => {
    expect(await search(q("cafe -early"))).toEqual(["prog2", "cafe1"]);
    expect(await search(q('cafe -"is open"'))).toEqual(["prog2", "cafe2"]);
    expect(await search(q("cafe -prog*"))).toEqual(["cafe2", "cafe1"]);
  });

  it("filters by status: every one but deleted by default", async () => {
    expect(await search("")).toEqual(["spam", "notopen", "prog2", "prog1", "link", "cafe2", "cafe1"]);
    expect(await search(q("spam"))).toEqual(["spam"]); // rejected ones too
    expect(await search(`${q("spam")}&status=rejected`)).toEqual(["spam"]);
    expect(await search("status=rejected")).toEqual(["spam"]);
    expect(await search("status=deleted")).toEqual(["gone"]);
    expect(await search(`${q("deleted")}&status=deleted`)).toEqual([]); // a deleted body is cleared
    expect(await search(`${q("cafe")}&status=approved`)).toEqual(["prog2", "cafe2", "cafe1"]);
  });

  it("filters by discussion, reader, links, open reports and time", async () => {
    expect(await search(`${q("cafe")}&discussionId=d1`)).toEqual(["prog2", "cafe1"]);
    expect(await search("discussionId=d2")).toEqual(["notopen", "prog1", "cafe2"]);
    expect(await search("readerId=alice")).toEqual(["link", "cafe1"]);
    expect(await search("hasLinks=true")).toEqual(["link"]);
    expect(await search("hasLinks=false&readerId=alice")).toEqual(["cafe1"]);
    expect(await search("reported=true")).toEqual(["prog1"]);
    expect(await search("reported=false&discussionId=d2")).toEqual(["notopen", "cafe2"]);
    expect(await search(`from=${encodeURIComponent(s.at.link!)}&to=${encodeURIComponent(s.at.notopen!)}`)).toEqual([
      "prog2",
      "prog1",
      "link",
    ]);
    expect(await search(`${q("cafe")}&from=${encodeURIComponent(s.at.cafe2!)}`)).toEqual(["prog2", "cafe2"]);
  });

  it("follows an edit: the words are the body's as it is now", async () => {
    const clock = Math.floor(Date.now() / 1000);
    const alice = s.t.as({ key: s.plainKey, identity: await s.t.identity("alice", { iat: clock }) });
    const posted = await alice.post("/api/v1/discussions/d3/comments", { body: "zebra crossing" });
    expect(await search(q("zebra"))).toEqual([posted.body.id]);
    expect((await alice.patch(`/api/v1/comments/${posted.body.id}`, { body: "giraffe crossing" })).status).toBe(200);
    expect(await search(q("zebra"))).toEqual([]);
    expect(await search(q("giraffe"))).toEqual([posted.body.id]);
    expect((await s.mod.del(`/api/v1/comments/${posted.body.id}`)).status).toBe(204);
  });

  it("follows an edit and a deletion with hasLinks: whether the body shows a link as it is now", async () => {
    const clock = Math.floor(Date.now() / 1000);
    const alice = s.t.as({ key: s.plainKey, identity: await s.t.identity("alice", { iat: clock }) });
    const posted = await alice.post("/api/v1/discussions/d4/comments", { body: "no link yet" });
    const linked = async () => search("hasLinks=true&discussionId=d4");
    expect(await linked()).toEqual([]);
    expect((await alice.patch(`/api/v1/comments/${posted.body.id}`, { body: "now see https://example.org" })).status).toBe(200);
    expect(await linked()).toEqual([posted.body.id]);
    expect((await alice.patch(`/api/v1/comments/${posted.body.id}`, { body: "and no link again" })).status).toBe(200);
    expect(await linked()).toEqual([]);
    expect((await alice.patch(`/api/v1/comments/${posted.body.id}`, { body: "a link <https://example.net>" })).status).toBe(200);
    expect(await linked()).toEqual([posted.body.id]);
    expect((await s.mod.del(`/api/v1/comments/${posted.body.id}`)).status).toBe(204);
    expect(await search("hasLinks=true&discussionId=d4&status=deleted")).toEqual([]);
    expect(await search("hasLinks=false&discussionId=d4&status=deleted")).toEqual([posted.body.id]);
  });

  it("pages with nextCursor, bound to its query", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; body: any } = await s.mod.get(`/api/v1/comments/search?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.items.map((c: { id: string }) => c.id));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    const all = (await s.mod.get("/api/v1/comments/search?limit=100")).body.items.map((c: { id: string }) => c.id);
    expect(all).toHaveLength(7);
    expect(seen).toEqual(all);
    const first = await s.mod.get(`/api/v1/comments/search?${q("cafe")}&limit=1`);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const wrong = await s.mod.get(`/api/v1/comments/search?${q("open")}&cursor=${first.body.nextCursor}`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ path: "cursor" })]);
  });

  it("pages words within a discussion newest first, a pinned comment in its time's place, each once", async () => {
    // d1's comments (a pinned one among them): paged 1 at a time, the first read (a walk of the
    // discussion's list index) answers each full page, the GIN read the last, short one
    expect((await s.mod.post(`/api/v1/comments/${s.ids.cafe1}/pin`)).status).toBe(200);
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await s.mod.get(
        `/api/v1/comments/search?${q("cafe")}&discussionId=d1&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(r.status).toBe(200);
      const byId = Object.fromEntries(Object.entries(s.ids).map(([name, id]) => [id, name]));
      names.push(...r.body.items.map((c: { id: string }) => byId[c.id] ?? c.id));
      cursor = r.body.nextCursor;
    } while (cursor && names.length < 10);
    expect(names).toEqual(["prog2", "cafe1"]);
    expect(await search(`${q("cafe")}&discussionId=d1`)).toEqual(["prog2", "cafe1"]);
    expect((await s.mod.post(`/api/v1/comments/${s.ids.cafe1}/unpin`)).status).toBe(200);
  });

  it("answers moderators only", async () => {
    const denied = await s.t.as({ key: s.plainKey }).get(`/api/v1/comments/search?${q("cafe")}`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: "missing_capability", required: "moderate_content" });
    const gql = await s.t.as({ key: s.plainKey }).post("/graphql", { query: '{ searchComments(q: "cafe") { items { id } } }' });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe("missing_capability");
    expect((await s.t.admin.get(`/api/v1/comments/search?${q("cafe")}`)).status).toBe(200); // the console's admin JWT
  });

  it("refuses a bad q, bad dates and bad filters with problem documents", async () => {
    // query parameters: 400 invalid_parameter, naming each one at fault (contract section 1)
    const problem = async (query: string, path: string) => {
      const r = await s.mod.get(`/api/v1/comments/search?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(r.body.code).toBe("invalid_parameter");
      expect(
        r.body.errors.map((e: { path: string }) => e.path),
        query,
      ).toContain(path);
    };
    await problem(q("x".repeat(201)), "q");
    await problem(q("-cafe"), "q");
    await problem(q('-"is open" -late'), "q");
    await problem(q("*** --"), "q");
    await problem(q(Array.from({ length: 13 }, (_, i) => `w${i}`).join(" ")), "q");
    await problem("from=yesterday", "from");
    await problem("to=2026-13-45T00:00:00Z", "to");
    await problem("from=2026-11-25", "from"); // a date without a time and zone
    await problem("from=2026-11-25T10:00:00Z&to=2026-11-25T09:00:00Z", "from");
    await problem("discussionId=bad%20id", "discussionId");
    await problem("hasLinks=yes", "hasLinks");
    await problem("reported=1", "reported");
    await problem("limit=0", "limit");
    await problem(`${q("x".repeat(201))}&from=nope`, "from"); // every problem at once
    // GraphQL: validation_failed, as every field's argument errors
    const gql = await s.mod.post("/graphql", { query: '{ searchComments(q: "-only") { items { id } } }' });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe("validation_failed");
    const status = await s.mod.get("/api/v1/comments/search?status=flagged");
    expect(status.status).toBe(400);
    expect(status.body.code).toBe("invalid_parameter");
    // operators and quotes in q are only words to look for, never tsquery syntax
    expect(await search(q("cafe & | ! ( ) : ' \\"))).toEqual(["prog2", "cafe2", "cafe1"]);
    expect(await search(q("caf'e*"))).toEqual([]);
  });

  it("answers GraphQL searchComments with the same filters", async () => {
    const r = await s.mod.post("/graphql", {
      query: `query($q: String, $d: String) { searchComments(q: $q, discussionId: $d, status: approved, first: 5) {
        edges { node { id discussionTitle } } pageInfo { hasNextPage } } }`,
      variables: { q: "café", d: "d1" },
    });
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.searchComments.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([s.ids.prog2, s.ids.cafe1]);
    expect(r.body.data.searchComments.pageInfo.hasNextPage).toBe(false);
  });
});
