// A discussion found by its page's URL (contract section 27): GET /api/v1/discussions/lookup?url=
// and GraphQL discussion(url:), URLs compared normalized (src/modules/discussions/url-key.ts); a url
// is one discussion's in a tenant (409 url_taken on create, update and a page's first comment); the
// migration that keyed the discussions stored before it.
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";
import { disqusXml } from "./support/import-files.js";
import { importFinished, postImport } from "./support/imports.js";
import { urlKey } from "../src/modules/discussions/url-key.js";

const SITE = "https://blog.example";
let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let pk: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  other = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [SITE] })).status).toBe(200);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key;
});
afterAll(() => server?.stop());

const lookup = (url: string | null, c = t.api) =>
  c.get(`/api/v1/discussions/lookup${url === null ? "" : `?url=${encodeURIComponent(url)}`}`);

describe("GET /api/v1/discussions/lookup", () => {
  it("answers the discussion whose url is the page's, however its address is written, as GET by id does", async () => {
    expect((await t.api.put("/api/v1/discussions/hello", { title: "Hello", url: `${SITE}/posts/hello` })).status).toBe(201);
    const byId = await t.api.get("/api/v1/discussions/hello");
    for (const form of [
      `${SITE}/posts/hello`,
      "HTTPS://Blog.Example/posts/hello/",
      `${SITE}:443/posts/hello#comment-cmt_1`,
      `${SITE}/posts/hello#top`,
    ]) {
      const found = await lookup(form);
      expect(found.status, form).toBe(200);
      expect(found.body, form).toEqual(byId.body);
    }
    // the query is part of the page; the path's case too
    expect((await lookup(`${SITE}/posts/hello?page=2`)).status).toBe(404);
    expect((await lookup(`${SITE}/posts/Hello`)).status).toBe(404);
  });

  it("takes any key, a publishable one included; another tenant's page is not found", async () => {
    const browser = client(server.url, { key: pk, headers: { origin: SITE } });
    const found = await lookup(`${SITE}/posts/hello`, browser);
    expect(found.status).toBe(200);
    expect(found.body.id).toBe("hello");
    const elsewhere = await lookup(`${SITE}/posts/hello`, other.api);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe("not_found");
    expect((await client(server.url).get(`/api/v1/discussions/lookup?url=${encodeURIComponent(SITE)}`)).status).toBe(401);
  });

  it("answers 404 not_found for a page without a discussion, 400 for a missing or bad url", async () => {
    const missing = await lookup(`${SITE}/never`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    for (const bad of [null, "", "/posts/hello", "blog.example/posts/hello", "ftp://blog.example/a", "javascript:alert(1)"]) {
      const r = await lookup(bad);
      expect(r.status, String(bad)).toBe(400);
      expect(r.body, String(bad)).toMatchObject({ code: "invalid_parameter", errors: [{ path: "url" }] });
      expect(r.headers.get("content-type")).toContain("application/problem+json");
    }
    const unknown = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(SITE)}&id=x`);
    expect(unknown.status).toBe(400);
  });

  it("is GraphQL's discussion(url:), beside discussion(id:)", async () => {
    const q = "query($id: String, $url: String) { discussion(id: $id, url: $url) { id url } }";
    const byUrl = await t.api.post("/graphql", { query: q, variables: { url: "https://BLOG.example/posts/hello/" } });
    expect(byUrl.body.data.discussion).toEqual({ id: "hello", url: `${SITE}/posts/hello` });
    const byId = await t.api.post("/graphql", { query: "query($id: String!) { discussion(id: $id) { id } }", variables: { id: "hello" } });
    expect(byId.body.data.discussion).toEqual({ id: "hello" });
    const none = await t.api.post("/graphql", { query: q, variables: { url: `${SITE}/never` } });
    expect(none.body.errors[0].extensions.code).toBe("not_found");
    const both = await t.api.post("/graphql", { query: q, variables: { id: "hello", url: `${SITE}/posts/hello` } });
    expect(both.body.errors[0].extensions).toMatchObject({ code: "validation_failed", errors: [{ path: "url" }] });
    const neither = await t.api.post("/graphql", { query: q, variables: {} });
    expect(neither.body.errors[0].extensions).toMatchObject({ code: "validation_failed", errors: [{ path: "url" }] });
  });
});

describe("a url is one discussion's in its tenant", () => {
  it("refuses another discussion's url on create and on update (409 url_taken), compared normalized", async () => {
    expect((await t.api.put("/api/v1/discussions/taken-a", { url: `${SITE}/taken` })).status).toBe(201);
    const created = await t.api.put("/api/v1/discussions/taken-b", { url: "https://blog.EXAMPLE:443/taken/#x" });
    expect(created.status).toBe(409);
    expect(created.body).toMatchObject({ code: "url_taken", discussionId: "taken-a" });
    expect(created.headers.get("content-type")).toContain("application/problem+json");
    expect((await t.api.get("/api/v1/discussions/taken-b")).status).toBe(404);
    expect((await t.api.put("/api/v1/discussions/taken-c", { url: `${SITE}/free` })).status).toBe(201);
    const updated = await t.api.put("/api/v1/discussions/taken-c", { url: `${SITE}/taken/` });
    expect(updated).toMatchObject({ status: 409, body: { code: "url_taken" } });
    expect((await t.api.get("/api/v1/discussions/taken-c")).body.url).toBe(`${SITE}/free`);
    // its own url again, in another form, is no conflict; a url given up is free again
    expect((await t.api.put("/api/v1/discussions/taken-a", { url: `${SITE}/taken/` })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/taken-a", { url: null })).status).toBe(200);
    expect((await lookup(`${SITE}/taken`)).status).toBe(404);
    expect((await t.api.put("/api/v1/discussions/taken-c", { url: `${SITE}/taken` })).status).toBe(200);
    expect((await lookup(`${SITE}/taken`)).body.id).toBe("taken-c");
    // another tenant has pages of its own
    expect((await other.api.put("/api/v1/discussions/taken-a", { url: `${SITE}/taken` })).status).toBe(201);
  });

  it("is url_taken through GraphQL too", async () => {
    const r = await t.api.post("/graphql", {
      query: 'mutation { upsertDiscussion(id: "taken-d", input: { url: "https://blog.example/taken" }) { created } }',
    });
    expect(r.body.errors[0].extensions).toMatchObject({ code: "url_taken", status: 409, discussionId: "taken-c" });
  });

  it("keys the discussion a page's first comment creates, and refuses a page whose url another discussion has", async () => {
    const identity = await t.identity("ann", { name: "Ann", ttlSeconds: 3600 });
    const browser = client(server.url, { key: pk, identity, headers: { origin: SITE } });
    const posted = await browser.post("/api/v1/discussions/page-made/comments", {
      body: "First!",
      discussion: { url: `${SITE}/made-by-a-page/`, title: "Made" },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    expect((await lookup(`${SITE}/made-by-a-page`)).body).toMatchObject({ id: "page-made", commentCount: 1 });
    const clash = await browser.post("/api/v1/discussions/page-clash/comments", {
      body: "Here?",
      discussion: { url: `${SITE}/made-by-a-page`, title: "Clash" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: "url_taken", discussionId: "page-made" });
    expect((await t.api.get("/api/v1/discussions/page-clash")).status).toBe(404);
  });

  it("holds under concurrent creates of one url: one wins, the others are told url_taken", async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.api.put(`/api/v1/discussions/race-${i}`, { url: `${SITE}/race` })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe("url_taken");
  });
});

describe("imports", () => {
  it("key the threads they write; a thread of a page that has a discussion goes into it (another discussion's, an earlier thread's)", async () => {
    const site = await createTestTenant(server);
    expect((await site.api.put("/api/v1/discussions/kept", { url: "https://imp.example/taken" })).status).toBe(201);
    const threads = [
      { id: "1", identifier: "imp-1", link: "https://imp.example/one/", title: "One" },
      { id: "2", identifier: "imp-2", link: "https://IMP.example/one", title: "One again" },
      { id: "3", identifier: "imp-3", link: "https://imp.example/taken#c", title: "Taken" },
      { id: "4", identifier: "imp-4", link: "https://imp.example/four", title: "Four" },
    ];
    const posts = threads.map((th) => ({
      id: `p${th.id}`,
      thread: th.id,
      message: `On ${th.title}`,
      author: { name: "Bo", username: "bo" },
    }));
    const done = await importFinished(site, await postImport(server, site, "disqus", disqusXml(threads, posts)));
    expect(done.state, JSON.stringify(done)).toBe("succeeded");
    const find = async (url: string) => (await lookup(url, site.api)).body.id;
    expect(await find("https://imp.example/one")).toBe("imp-1");
    expect(await find("https://imp.example/four/")).toBe("imp-4");
    expect(await find("https://imp.example/taken")).toBe("kept");
    // a page has one discussion: the second thread of /one and the thread of /taken were not made, their comments are there
    expect((await site.api.get("/api/v1/discussions/imp-2")).status).toBe(404);
    expect((await site.api.get("/api/v1/discussions/imp-3")).status).toBe(404);
    expect((await lookup("https://imp.example/one", site.api)).body.commentCount).toBe(2);
    expect((await lookup("https://imp.example/taken", site.api)).body).toMatchObject({ url: "https://imp.example/taken", commentCount: 1 });
  });
});

describe("the migration that keyed stored discussions", () => {
  const migration = readdirSync("prisma/migrations").find((d) => d.endsWith("_discussions_url_key"))!;
  const sql = readFileSync(`prisma/migrations/${migration}/migration.sql`, "utf8");
  // its backfill: the statement between the column's addition and the index
  const backfill = sql.slice(sql.indexOf("WITH parts AS"), sql.indexOf("-- CreateIndex"));

  it("keys each url as urlKey does, the oldest of duplicates keeping the key", async () => {
    const c = new pg.Client({ connectionString: inject("databaseDirectUrl") ?? inject("databaseUrl") });
    await c.connect();
    try {
      await c.query("BEGIN");
      // a table of the session's own that the statement finds first (pg_temp comes first in the search path)
      await c.query("CREATE TEMP TABLE discussions (LIKE public.discussions INCLUDING DEFAULTS) ON COMMIT DROP");
      const urls = [
        "https://blog.example/a",
        "HTTPS://Blog.Example:443/b/",
        "http://blog.example:80/c#frag",
        "http://blog.example:8080/d//",
        "https://blog.example",
        "https://blog.example/?p=1#x",
        "https://blog.example/e?",
        "https://ann:secret@blog.example/f",
        " https://blog.example/g ",
        "ftp://blog.example/h",
        "not a url",
      ];
      let n = 0;
      for (const url of urls)
        await c.query(`INSERT INTO discussions (tenant_id, id, url, created_at) VALUES ('t', $1, $2, now() - interval '1 day')`, [
          `u${n++}`,
          url,
        ]);
      // duplicates: the older keeps the key, the younger none; another tenant's are its own
      await c.query(
        `INSERT INTO discussions (tenant_id, id, url, created_at) VALUES ('t', 'dup-old', 'https://blog.example/dup', now() - interval '2 days')`,
      );
      await c.query(`INSERT INTO discussions (tenant_id, id, url, created_at) VALUES ('t', 'dup-new', 'https://BLOG.example/dup/', now())`);
      await c.query(`INSERT INTO discussions (tenant_id, id, url, created_at) VALUES ('t2', 'dup-new', 'https://blog.example/dup', now())`);
      await c.query(`INSERT INTO discussions (tenant_id, id, url, created_at) VALUES ('t', 'no-url', NULL, now())`);
      await c.query(backfill);
      const rows = (
        await c.query<{ tenant_id: string; id: string; url: string | null; url_key: string | null }>(
          "SELECT tenant_id, id, url, url_key FROM discussions ORDER BY tenant_id, id",
        )
      ).rows;
      const of = (tenant: string, id: string) => rows.find((r) => r.tenant_id === tenant && r.id === id)!.url_key;
      for (const [i, url] of urls.entries()) expect(of("t", `u${i}`), url).toBe(urlKey(url));
      expect(of("t", "dup-old")).toBe("https://blog.example/dup");
      expect(of("t", "dup-new")).toBeNull();
      expect(of("t2", "dup-new")).toBe("https://blog.example/dup");
      expect(of("t", "no-url")).toBeNull();
    } finally {
      await c.query("ROLLBACK").catch(() => {});
      await c.end();
    }
  });
});
