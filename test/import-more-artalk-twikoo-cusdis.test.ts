// Switching in (contract sections 25 and 27) from Artalk, Twikoo and Cusdis, on files those systems
// (or their migration tools) wrote (../shared/fixtures/import-more, SOURCES.txt says where each
// comes from), each comment checked record by record against a reading of the file made here:
// Artalk's Artrans (its own export's string values, Artransfer's booleans and ISO dates), Twikoo's
// documents (one a line as mongoexport writes them, the admin panel's array, {"results": […]}),
// and a Cusdis database (its own empty database, rows added here through its schema; the same rows
// on PostgreSQL, dumped by the real pg_dump in each form it writes rows, gzipped and cut). Author
// names, threading (a reply naming no comment top-level; a deleted comment's replies hung from its
// parent), dates, statuses (pending, spam rejected, deleted skipped and counted), votes, pinned,
// each thread's page found by its URL (paths on the file's site_urls or on ?site=, and refused
// without either), idempotence, two files whose ids overlap, a record that would overwrite another
// source's comment, a cut or malformed file failing at its position and writing nothing, JSON
// nested 100,000 deep, a file of another format named. And one run of the CLI.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import {
  commentIdOf,
  discussionIdOfText,
  expectComments,
  holdings,
  htmlText,
  IMPORT_FIXTURES,
  importFile as importInto,
  liveParentOf,
  MORE,
  type Expected,
} from "./support/import-readings.js";
import { siteQuery } from "./support/imports.js";
import {
  CUSDIS_ODD_ROW,
  CUSDIS_ROWS,
  ODD_BODY,
  PAGES,
  SQL,
  cusdisFile,
  cusdisPostgres,
  uuid,
  type CusdisPostgres,
} from "./support/cusdis.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const importFile = (t: TestTenant, format: string, body: Uint8Array | string, query = "") => importInto(server, t, format, body, query);
const file = (name: string) => readFileSync(`${MORE}${name}`);
const text = (name: string) => readFileSync(`${MORE}${name}`, "utf8");
const post = (t: TestTenant, format: string, body: Uint8Array | string) =>
  fetch(`${server.url}/api/v1/imports?format=${format}${siteQuery(format)}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
const lookup = (t: TestTenant, url: string) => t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(url)}`);
const site = (origin: string) => `&site=${encodeURIComponent(origin)}`;

/** Where a byte offset of `body` is, as the import says it: `line L, column C (byte N)` (columns count bytes). */
function positionAt(body: string, byte: number): string {
  const before = Buffer.from(body).subarray(0, byte).toString("utf8");
  const lineStart = Buffer.byteLength(before.slice(0, before.lastIndexOf("\n") + 1));
  return `line ${before.split("\n").length}, column ${byte - lineStart + 1} (byte ${byte})`;
}

/** The byte offset of the opening bracket that is the 65th level of `json` (all its openers come before its closers). */
const sixtyFifthLevel = (json: string) => [...json].map((c, i) => (c === "[" || c === "{" ? i : -1)).filter((i) => i >= 0)[64]!;

// ---------------------------------------------------------------------------------------------
// Artalk: entity/artran.go's fields, read as Artalk reads them (every value a string)

/** Artalk's dates: Go's "2006-01-02 15:04:05 -0700" (its exporter) or ISO 8601 (Artransfer's) */
function artalkDate(s: string): Date {
  const go = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) ([+-]\d{2})(\d{2})$/.exec(s);
  return new Date(go ? `${go[1]}T${go[2]}${go[3]}:${go[4]}` : s);
}

function readArtalk(json: string) {
  const records = (JSON.parse(json) as Record<string, unknown>[]).map(
    (r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? "" : String(v)])) as Record<string, string>,
  );
  const ids = new Set(records.map((r) => r.id));
  const seen = new Set<string>();
  const duplicates: Record<string, string>[] = [];
  const expected: Expected[] = [];
  for (const r of records) {
    if (seen.has(r.id!)) {
      duplicates.push(r);
      continue;
    }
    seen.add(r.id!);
    const rid = r.rid ?? "";
    expected.push({
      sourceId: r.id!,
      discussionId: r.page_key!.startsWith("/") ? discussionIdOfText(r.page_key!) : discussionIdOfText(r.page_key!, true),
      parentSourceId: rid && rid !== "0" && ids.has(rid) ? rid : null,
      body: htmlText(r.content!),
      authorName: r.nick!,
      status: r.is_pending === "true" ? "pending" : "approved",
      createdAt: artalkDate(r.created_at!),
      upvotes: Number(r.vote_up ?? 0),
      downvotes: Number(r.vote_down ?? 0),
      pinned: r.is_pinned === "true",
    });
  }
  return { records, expected, duplicates };
}

describe("Artalk", () => {
  it("Artalk's own export (string values, Go dates): its votes, its badge, a rid naming no comment top-level, its page by URL; again: nothing changes", async () => {
    const json = text("artalk/artalk-docs-artrans.json");
    const r = readArtalk(json);
    expect(r.records).toHaveLength(1);
    expect(typeof (JSON.parse(json) as any[])[0].vote_up).toBe("string");
    const t = await createTestTenant(server);
    const done = await importFile(t, "artalk", json, "&keepEmails=true");
    expect(done).toMatchObject({ format: "artalk", state: "succeeded", threads: 1, comments: 1, readers: 1, skipped: 0 });
    // rid "233" names no comment of the file: the reply is top-level, said as a warning
    expect(done.errors).toEqual([
      { position: "line 1, column 2 (byte 1)", message: "the parent 233 is not in this thread: kept as a top-level comment" },
    ]);
    await expectComments(server, t, "artalk", r.expected);
    const id = commentIdOf(t.tenantId, "artalk", "123", r.expected[0]!.discussionId);
    expect((await t.api.get(`/api/v1/comments/${id}`)).body).toMatchObject({ upvotes: 666, downvotes: 0, score: 666 });
    const page = await lookup(t, "https://artalk.js.org/guide/transfer.html");
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ title: "Data Migration", url: "https://artalk.js.org/guide/transfer.html", commentCount: 1 });
    const readers = await server.app.runtime.services.prisma.reader.findMany({ where: { tenantId: t.tenantId } });
    expect(readers.map((x) => [x.name, x.email, x.badge])).toEqual([["qwqcode", "qwqcode@github.com", "Administrator"]]);
    expect(await importFile(t, "artalk", json)).toMatchObject({ state: "succeeded", threads: 0, comments: 0, readers: 0, unchanged: 1 });
    await expectComments(server, t, "artalk", r.expected);
  });

  it("Artransfer's files (booleans, ISO dates): WordPress's replies and chain, Disqus's rid \"\", Valine's page \"/\"; each again: nothing changes", async () => {
    const t = await createTestTenant(server);
    const all: Expected[] = [];
    for (const [name, threads, replies] of [
      ["artalk/artransfer-wordpress.artrans", 1, 2],
      ["artalk/artransfer-disqus.artrans", 1, 2],
      ["artalk/artransfer-valine.artrans", 1, 1],
    ] as const) {
      const r = readArtalk(text(name));
      expect(
        r.expected.filter((e) => e.parentSourceId !== null),
        name,
      ).toHaveLength(replies);
      const done = await importFile(t, "artalk", file(name), site("https://valine.example"));
      expect(done, name).toMatchObject({ state: "succeeded", threads, comments: r.expected.length, skipped: 0, errors: [] });
      all.push(...r.expected);
      await expectComments(server, t, "artalk", all);
      expect(await importFile(t, "artalk", file(name), site("https://valine.example")), name).toMatchObject({
        comments: 0,
        unchanged: r.expected.length,
      });
    }
    // a chain: 5 replies to 3, which replies to 2
    const rows = await server.app.runtime.services.prisma.comment.findMany({ where: { tenantId: t.tenantId } });
    const wp = (id: string) =>
      rows.find(
        (x) => x.id === commentIdOf(t.tenantId, "artalk", id, discussionIdOfText("http://10.90.1.130:8099/2022/04/09/hello-world/", true)),
      )!;
    expect([wp("5").parentId, wp("3").parentId, wp("5").depth]).toEqual([wp("3").id, wp("2").id, 2]);
    expect((await lookup(t, "http://127.0.0.1:5500/disqus.html")).body).toMatchObject({ commentCount: 4 });
    // Valine's page "/" on the import's site
    expect((await lookup(t, "https://valine.example/")).body).toMatchObject({ commentCount: 2 });
  });

  it("a page named by path: on the import's site, else on the file's site_urls (not a local one), else the import fails naming site and writes nothing", async () => {
    const twikoo = readArtalk(text("artalk/artransfer-twikoo.artrans"));
    // two comments share an id (as Twikoo's string and {"$oid"} ids did): the second is an error
    expect(twikoo.duplicates).toHaveLength(1);
    const t = await createTestTenant(server);
    const bare = await importFile(t, "artalk", file("artalk/artransfer-twikoo.artrans"));
    expect(bare).toMatchObject({ state: "failed", comments: 0 });
    expect(bare.failure).toMatch(/^line 1, column 2 \(byte 1\): its page is "\/post\/1", a path, .*\(--site, \?site=\)/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });

    const done = await importFile(t, "artalk", file("artalk/artransfer-twikoo.artrans"), site("https://xn--qpru0x.cn"));
    expect(done).toMatchObject({ state: "succeeded", threads: 1, comments: 6, skipped: 1, site: "https://xn--qpru0x.cn" });
    const lines = text("artalk/artransfer-twikoo.artrans").split("\n");
    const second = lines.findLastIndex((l) => l.includes(`"id": "${twikoo.duplicates[0]!.id}"`)) - 1;
    expect(done.errors).toEqual([
      {
        position: expect.stringMatching(new RegExp(`^line ${second + 1}, column 4 \\(byte \\d+\\)$`)),
        message: expect.stringMatching(/^the comment id is already in this file \(at line \d+, column 4 \(byte \d+\)\): skipped$/),
      },
    ]);
    await expectComments(server, t, "artalk", twikoo.expected);
    expect((await lookup(t, "https://xn--qpru0x.cn/post/1")).body).toMatchObject({ id: "post-1", commentCount: 6 });

    // Artalk's own export names its pages by path with the site's URLs beside: the first that is not local
    const own = (JSON.parse(text("artalk/artalk-docs-artrans.json")) as Record<string, string>[]).map((x): Record<string, string> => ({
      ...x,
      page_key: "/guide/transfer.html",
    }));
    expect(own[0]!.site_urls!.split(",")[0]).toMatch(/localhost/);
    const u = await createTestTenant(server);
    expect(await importFile(u, "artalk", JSON.stringify(own))).toMatchObject({ state: "succeeded", comments: 1 });
    expect((await lookup(u, "https://artalk.js.org/guide/transfer.html")).body).toMatchObject({ id: "guide-transfer.html" });
    // the import's site is taken before the file's
    const v = await createTestTenant(server);
    expect(await importFile(v, "artalk", JSON.stringify(own), site("https://moved.example"))).toMatchObject({ comments: 1 });
    expect((await lookup(v, "https://moved.example/guide/transfer.html")).status).toBe(200);
  });

  it("pending, pinned, down votes and replies as strings; two files whose ids overlap keep both; one that would overwrite another's comment is an error for it", async () => {
    const base = (JSON.parse(text("artalk/artalk-docs-artrans.json")) as Record<string, string>[])[0]!;
    const records: Record<string, string>[] = [
      { ...base, id: "1", rid: "0", vote_up: "2", vote_down: "3", is_pinned: "true" },
      { ...base, id: "2", rid: "1", content: "a **reply**", is_pending: "true", vote_up: "0", created_at: "2021-10-29 08:00:00 +0000" },
      { ...base, id: "3", rid: "2", content: "<p>a reply to the reply</p>", nick: "someone", email: "", badge_name: "" },
    ];
    const first = JSON.stringify(records);
    // another site's Artalk: the same ids, on another page
    const other = JSON.stringify(records.map((x) => ({ ...x, page_key: "https://other.example/post/", content: `other: ${x.content}` })));
    const a = readArtalk(first);
    const b = readArtalk(other);
    expect(a.expected.map((e) => [e.status, e.pinned, e.parentSourceId])).toEqual([
      ["approved", true, null],
      ["pending", false, "1"],
      ["approved", false, "2"],
    ]);
    const t = await createTestTenant(server);
    expect(await importFile(t, "artalk", first)).toMatchObject({ state: "succeeded", comments: 3, errors: [] });
    expect(await importFile(t, "artalk", other)).toMatchObject({ state: "succeeded", comments: 3, unchanged: 0, errors: [] });
    await expectComments(server, t, "artalk", [...a.expected, ...b.expected]);
    // the first file's page and ids again, another time: another source's comments, never written over
    const clash = JSON.stringify(records.map((x) => ({ ...x, created_at: "2022-01-01 00:00:00 +0000", content: "not the same" })));
    const done = await importFile(t, "artalk", clash);
    expect(done).toMatchObject({ state: "succeeded", comments: 0, skipped: 3 });
    expect(done.errors).toHaveLength(3);
    for (const e of done.errors) expect(e.message).toMatch(/is another source's comment/);
    await expectComments(server, t, "artalk", [...a.expected, ...b.expected]);
  });

  it("a cut file fails at its byte, JSON nested 100,000 deep at the depth; neither writes anything; one object (the docs' example) or another format is refused", async () => {
    const t = await createTestTenant(server);
    const whole = text("artalk/artransfer-disqus.artrans");
    const cut = whole.slice(0, Math.floor(whole.length / 2));
    const done = await importFile(t, "artalk", cut);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toBe(`${positionAt(cut, Buffer.byteLength(cut))}: the file ends inside a JSON value: it is truncated`);
    const deep = `[{"id":"1","page_key":"/x","content":${"[".repeat(100_000)}${"]".repeat(100_000)}}]`;
    const nested = await importFile(t, "artalk", deep);
    expect(nested.failure).toBe(`${positionAt(deep, sixtyFifthLevel(deep))}: not read: JSON nested deeper than 64`);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });

    const object = await post(t, "artalk", file("artalk/artalk-docs-artran.json"));
    expect(object.status).toBe(422);
    expect((await object.json()).errors[0]).toMatchObject({ path: "body", message: expect.stringMatching(/^is not a JSON array/) });
    const twikoo = await post(t, "artalk", file("twikoo/artransfer-twikoo.json"));
    expect((await twikoo.json()).errors[0].message).toBe("is a Twikoo export, not artalk");
    const github = await post(t, "artalk", file("github/piotrmurach-github-issue-61-comments.json"));
    expect((await github.json()).errors[0].message).toBe("is GitHub's JSON of issue or discussion comments, not artalk");
    const artalk = await post(t, "github", file("artalk/artransfer-wordpress.artrans"));
    expect((await artalk.json()).errors[0].message).toBe("is an Artalk export (Artrans), not github");
  });
});

// ---------------------------------------------------------------------------------------------
// Twikoo: the comment collection's documents (index.js parse(), utils/import.js)

const twikooId = (v: unknown) => (typeof v === "object" && v !== null ? (v as { $oid: string }).$oid : (v as string));

function readTwikoo(docs: any[]) {
  const seen = new Set<string>();
  const duplicates: any[] = [];
  const expected: Expected[] = [];
  for (const d of docs) {
    const id = twikooId(d._id);
    if (seen.has(id)) {
      duplicates.push(d);
      continue;
    }
    seen.add(id);
    expected.push({
      sourceId: id,
      discussionId: discussionIdOfText(d.url),
      parentSourceId: d.pid || d.rid || null,
      body: htmlText(d.comment),
      authorName: d.nick,
      status: d.isSpam === true ? "rejected" : "approved",
      createdAt: new Date(d.created),
      upvotes: (d.ups ?? d.like ?? []).length,
      downvotes: (d.downs ?? []).length,
      pinned: d.top === true,
    });
  }
  return { expected, duplicates };
}

const twikooLines = () =>
  text("twikoo/artransfer-twikoo.json")
    .split("\n")
    .filter((l) => l.trim());

/** The sample's documents as the admin panel exports them, with what the sample lacks: votes, spam, pinned, replies. */
function adminPanelDocs() {
  const docs = twikooLines().map((l) => JSON.parse(l));
  docs[0].top = true;
  docs[1].ups = ["uid-1", "uid-2"];
  docs[1].downs = ["uid-3"];
  docs[2].isSpam = true;
  docs[3].like = ["uid-4"]; // an older version's votes
  docs[4].pid = docs[3]._id;
  docs[4].rid = docs[3]._id;
  docs[5].pid = docs[4]._id;
  docs[5].rid = docs[3]._id;
  // the thread's first comment was written on the page reached with a query
  docs[0].href = `${docs[0].href}?from=feed#twikoo`;
  return docs;
}

describe("Twikoo", () => {
  it('one document a line as mongoexport writes it: names, dates, its page by href; the repeated {"$oid"} id an error for the second; again: nothing changes', async () => {
    const lines = twikooLines();
    expect(lines).toHaveLength(7);
    const docs = lines.map((l) => JSON.parse(l));
    const r = readTwikoo(docs);
    expect(r.duplicates).toHaveLength(1);
    expect(typeof r.duplicates[0]._id).toBe("object");
    const t = await createTestTenant(server);
    const done = await importFile(t, "twikoo", file("twikoo/artransfer-twikoo.json"), "&keepEmails=true");
    expect(done).toMatchObject({ format: "twikoo", state: "succeeded", threads: 1, comments: 6, skipped: 1 });
    expect(done.errors).toEqual([
      {
        position: positionAt(text("twikoo/artransfer-twikoo.json"), Buffer.byteLength(lines.slice(0, 6).join("\n") + "\n")),
        message: `the comment id is already in this file (at ${positionAt(text("twikoo/artransfer-twikoo.json"), Buffer.byteLength(lines.slice(0, 5).join("\n") + "\n"))}): skipped`,
      },
    ]);
    await expectComments(server, t, "twikoo", r.expected);
    const page = await lookup(t, "https://xn--qpru0x.cn/post/1");
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ id: "post-1", url: "https://xn--qpru0x.cn/post/1", commentCount: 6 });
    const readers = await server.app.runtime.services.prisma.reader.findMany({ where: { tenantId: t.tenantId } });
    // one address: one reader, each comment its own name
    expect(readers.map((x) => x.email)).toEqual(["6@9i3.cn"]);
    expect(await importFile(t, "twikoo", file("twikoo/artransfer-twikoo.json"))).toMatchObject({
      state: "succeeded",
      threads: 0,
      comments: 0,
      readers: 0,
      unchanged: 6,
    });
    await expectComments(server, t, "twikoo", r.expected);
  });

  it("the admin panel's array and {\"results\": […]}: spam rejected, pinned, ups and downs (like of older versions) as votes, pid threading, the page's own path without a visitor's query", async () => {
    const docs = adminPanelDocs();
    const r = readTwikoo(docs);
    expect(r.expected.map((e) => [e.status, e.pinned, e.upvotes, e.downvotes])).toEqual([
      ["approved", true, 0, 0],
      ["approved", false, 2, 1],
      ["rejected", false, 0, 0],
      ["approved", false, 1, 0],
      ["approved", false, 0, 0],
      ["approved", false, 0, 0],
    ]);
    for (const body of [JSON.stringify(docs, null, 2), JSON.stringify({ results: docs })]) {
      const t = await createTestTenant(server);
      const done = await importFile(t, "twikoo", body);
      expect(done).toMatchObject({ state: "succeeded", threads: 1, comments: 6, skipped: 1 });
      const rows = await expectComments(server, t, "twikoo", r.expected);
      expect(rows.find((x) => x.id === commentIdOf(t.tenantId, "twikoo", docs[5]._id))!.depth).toBe(2);
      const d = await t.api.get("/api/v1/discussions/post-1");
      expect(d.body).toMatchObject({ url: "https://xn--qpru0x.cn/post/1", commentCount: 5 });
      expect(await importFile(t, "twikoo", body)).toMatchObject({ comments: 0, unchanged: 6 });
    }
  });

  it("without href, the url path is on ?site=, and without a site the import fails naming site and writes nothing", async () => {
    const docs = twikooLines()
      .slice(0, 3)
      .map((l) => {
        const doc = JSON.parse(l);
        delete doc.href;
        return JSON.stringify(doc);
      });
    const t = await createTestTenant(server);
    const bare = await importFile(t, "twikoo", docs.join("\n"));
    expect(bare).toMatchObject({ state: "failed", comments: 0 });
    expect(bare.failure).toMatch(/^line 1, column 1 \(byte 0\): its page is "\/post\/1", a path, .*--site/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
    expect(await importFile(t, "twikoo", docs.join("\n"), site("https://blog.example"))).toMatchObject({ state: "succeeded", comments: 3 });
    expect((await lookup(t, "https://blog.example/post/1")).body).toMatchObject({ id: "post-1", commentCount: 3 });
  });

  it("a cut file fails at its end, a malformed line where it goes wrong, JSON nested 100,000 deep at the depth; none writes anything; another format is named", async () => {
    const t = await createTestTenant(server);
    const whole = text("twikoo/artransfer-twikoo.json");
    const cut = whole.slice(0, whole.length - 200);
    const done = await importFile(t, "twikoo", cut);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toBe(`${positionAt(cut, Buffer.byteLength(cut))}: the file ends inside a JSON value: it is truncated`);
    // line 4 cut after one of its members: line 5's "{" comes where a member's name should
    const lines = twikooLines();
    const short = lines[3]!.slice(0, lines[3]!.indexOf('"mail"'));
    const malformed = [...lines.slice(0, 3), short, ...lines.slice(4)].join("\n");
    const bad = await importFile(t, "twikoo", malformed);
    expect(bad).toMatchObject({ state: "failed", comments: 0 });
    const at = Buffer.byteLength([...lines.slice(0, 3), short].join("\n") + "\n");
    expect(bad.failure).toBe(`${positionAt(malformed, at)}: not well-formed JSON: Unexpected LEFT_BRACE ("{")`);
    expect(bad.failure).toMatch(/^line 5, column 1 /);
    const deep = `{"_id":"a","url":"/x","comment":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const nested = await importFile(t, "twikoo", deep);
    expect(nested.failure).toBe(`${positionAt(deep, sixtyFifthLevel(deep))}: not read: JSON nested deeper than 64`);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });

    const artalk = await post(t, "twikoo", file("artalk/artransfer-twikoo.artrans"));
    expect(artalk.status).toBe(422);
    expect((await artalk.json()).errors[0].message).toBe("is an Artalk export (Artrans), not twikoo");
    const disqus = await post(t, "twikoo", readFileSync(`${IMPORT_FIXTURES}disqus-isso.xml`));
    expect((await disqus.json()).errors[0].message).toBe("is a Disqus export, not twikoo");
    const wrong = await post(t, "commento", file("twikoo/artransfer-twikoo.json"));
    expect((await wrong.json()).errors[0].message).toBe("is a Twikoo export, not commento");
  });
});

// ---------------------------------------------------------------------------------------------
// Cusdis: its own empty database (made by its SQLite migrations), rows added here through its schema

/** Prisma's times in SQLite read here: epoch ms, or text (UTC without a zone) */
const prismaTime = (v: number | string) =>
  typeof v === "number" ? new Date(v) : new Date(/Z$|[+-]\d\d:?\d\d$/.test(v) ? v : `${v.replace(" ", "T")}Z`);

/** Cusdis's tables SELECTed here (its Prisma schema for SQLite; its comment service) */
function readCusdis(bytes: Uint8Array) {
  const db = new SQL.Database(bytes);
  const rows = (q: string) => {
    const [res] = db.exec(q);
    return (res?.values ?? []).map((v) => Object.fromEntries(res!.columns.map((c, i) => [c, v[i]]))) as any[];
  };
  const pages = rows("SELECT * FROM pages");
  const comments = rows("SELECT * FROM comments");
  db.close();
  const deleted = new Set(comments.filter((c) => c.deletedAt !== null).map((c) => c.id as string));
  const parents = new Map(comments.map((c) => [c.id as string, c.parentId as string | null]));
  const expected: Expected[] = comments
    .filter((c) => c.deletedAt === null)
    .map((c) => ({
      sourceId: c.id,
      discussionId: discussionIdOfText(pages.find((p) => p.id === c.pageId).slug),
      parentSourceId: liveParentOf(parents, deleted, c.parentId),
      body: c.content.trim(),
      authorName: c.by_nickname,
      status: c.approved === 1 ? "approved" : "pending",
      createdAt: prismaTime(c.created_at),
    }));
  return { pages, comments, deleted, expected };
}

describe("Cusdis", () => {
  it("its database: replies, a deleted comment (skipped; its reply top-level), an unapproved one pending, three pages found by URL; again: nothing changes", async () => {
    const bytes = cusdisFile(CUSDIS_ROWS);
    const r = readCusdis(bytes);
    expect([r.pages.length, r.comments.length, r.deleted.size]).toEqual([3, 8, 1]);
    const t = await createTestTenant(server);
    const done = await importFile(t, "cusdis", bytes, `&keepEmails=true${site("https://blog.example")}`);
    expect(done).toMatchObject({ format: "cusdis", state: "succeeded", threads: 3, comments: 7, skipped: 1, errors: [] });
    const rows = await expectComments(server, t, "cusdis", r.expected);
    expect(r.expected.find((e) => e.sourceId === uuid(4))!.parentSourceId).toBeNull();
    expect(r.expected.filter((e) => e.status === "pending").map((e) => e.sourceId)).toEqual([uuid(6)]);
    expect(rows.find((x) => x.id === commentIdOf(t.tenantId, "cusdis", uuid(5)))!.depth).toBe(1);
    for (const [url, id, count] of [
      ["https://blog.example/posts/hello/", "posts-hello", 4],
      ["https://blog.example/2024/second/", "second-post", 1],
      ["https://blog.example/about/", "about", 1],
    ] as const) {
      const page = await lookup(t, url);
      expect(page.status, url).toBe(200);
      expect(page.body, url).toMatchObject({ id, url, commentCount: count });
    }
    expect((await t.api.get("/api/v1/discussions/posts-hello")).body.title).toBe("Hello");
    const readers = await server.app.runtime.services.prisma.reader.findMany({ where: { tenantId: t.tenantId } });
    // Ann wrote under two names from one address: one reader, each comment its own name
    expect(readers.filter((x) => x.email === "ann@example.org")).toHaveLength(1);
    expect(await importFile(t, "cusdis", bytes, site("https://blog.example"))).toMatchObject({
      state: "succeeded",
      threads: 0,
      comments: 0,
      unchanged: 7,
      skipped: 1,
    });
    await expectComments(server, t, "cusdis", r.expected);
    // its own empty database: nothing to import, nothing refused
    const empty = await importFile(t, "cusdis", file("cusdis/cusdis-pr302-dev.db"));
    expect(empty).toMatchObject({ state: "succeeded", threads: 0, comments: 0, errors: [] });
  });

  it("a page named by its slug only needs ?site=: without it the import fails naming site and writes nothing", async () => {
    const t = await createTestTenant(server);
    const done = await importFile(t, "cusdis", cusdisFile(CUSDIS_ROWS));
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toMatch(new RegExp(`^pages id ${PAGES.about}: its page is "/about/", a path, .*--site`));
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });

  it("a cut database fails at the byte where it ends, one with a view is refused naming it; neither writes anything; another format is named", async () => {
    const t = await createTestTenant(server);
    const bytes = cusdisFile(CUSDIS_ROWS);
    const half = bytes.subarray(0, bytes.byteLength / 2);
    const cut = await importFile(t, "cusdis", half, site("https://blog.example"));
    expect(cut).toMatchObject({ state: "failed", comments: 0 });
    expect(cut.failure).toBe(
      `byte ${half.byteLength}: the database file ends at byte ${half.byteLength}, but its header says it holds ${bytes.byteLength} bytes: it is truncated`,
    );
    const view = cusdisFile(`${CUSDIS_ROWS} CREATE VIEW recent AS SELECT * FROM comments ORDER BY created_at DESC;`);
    const viewed = await importFile(t, "cusdis", view, site("https://blog.example"));
    expect(viewed).toMatchObject({ state: "failed", comments: 0 });
    expect(viewed.failure).toMatch(/^view recent: a view: an imported database is read column by plain column/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });

    const asIsso = await post(t, "isso", bytes);
    expect(asIsso.status).toBe(422);
    expect((await asIsso.json()).errors[0].message).toBe("is an SQLite database (Cusdis's), not isso");
    const isso = await post(t, "cusdis", file("isso/isso-tests-disqus.db"));
    expect((await isso.json()).errors[0].message).toBe("is an SQLite database (isso's), not cusdis");
    const json = await post(t, "cusdis", file("twikoo/artransfer-twikoo.json"));
    expect((await json.json()).errors[0].message).toBe("is a Twikoo export, not cusdis");
    const plain = await post(t, "cusdis", "hello");
    expect((await plain.json()).errors[0].message).toBe("is neither an SQLite database nor a pg_dump (Cusdis's)");
    const asJson = await post(t, "remark42", bytes);
    expect((await asJson.json()).errors[0].message).toBe("is an SQLite database (Cusdis's), not remark42");
  });
});

// Cusdis on PostgreSQL: the same rows (and one whose text every escape touches) in a scratch
// database of Cusdis's PostgreSQL schema, dumped by the machine's pg_dump
describe("Cusdis: a pg_dump of its PostgreSQL database", () => {
  const bytes = cusdisFile(CUSDIS_ROWS + CUSDIS_ODD_ROW);
  const r = readCusdis(bytes);
  let pgCusdis: CusdisPostgres;
  beforeAll(async () => {
    pgCusdis = await cusdisPostgres(inject("adminDatabaseUrl"), bytes);
    // a row updated after its replies were written: PostgreSQL writes it anew at the table's end,
    // so the dump has its replies before it
    await pgCusdis.run(`UPDATE comments SET updated_at = updated_at WHERE id = '${uuid(1)}'`);
  });
  afterAll(() => pgCusdis?.drop());
  const query = `&keepEmails=true${site("https://blog.example")}`;

  /** what a tenant holds, named by source ids where ids depend on the tenant */
  async function held(t: TestTenant) {
    const prisma = server.app.runtime.services.prisma;
    const where = { tenantId: t.tenantId };
    const discussions = await prisma.discussion.findMany({ where, orderBy: { id: "asc" } });
    const readers = await prisma.reader.findMany({ where, orderBy: { id: "asc" } });
    return {
      discussions: discussions.map((d) => [d.id, d.title, d.url, d.createdAt.toISOString()]),
      // a reader's name is its first comment's in the file (Ann's differs: the dump has her reply
      // first); each comment's own is checked by expectComments
      readers: readers.map((x) => [x.id, x.email]),
    };
  }

  it("its COPY form (the whole database), --inserts and --column-inserts import as the SQLite file of the same rows does: the same ids, bodies, authors, parents, statuses and dates; each again, and the SQLite file after, change nothing", async () => {
    expect(r.expected.find((e) => e.sourceId === uuid(9))!.body).toBe(ODD_BODY);
    const sqlite = await createTestTenant(server);
    expect(await importFile(sqlite, "cusdis", bytes, query)).toMatchObject({ state: "succeeded", threads: 3, comments: 8, skipped: 1 });
    const reference = await held(sqlite);

    const dumps = {
      copy: pgCusdis.dump(),
      inserts: pgCusdis.dump("--data-only", "--inserts", "-t", "pages", "-t", "comments"),
      columnInserts: pgCusdis.dump("--data-only", "--column-inserts", "--rows-per-insert=3", "-t", "pages", "-t", "comments"),
    };
    // what each holds: the whole database with its schema, its tables' rows in name order (comments
    // before pages: held until the pages come); the data only, ordered by foreign keys (pages first),
    // as INSERTs naming no columns (their order is Cusdis's, postById last) and as INSERTs naming
    // them, three rows a statement. Each has a reply before its parent
    expect(dumps.copy).toMatch(/^CREATE TABLE public\.users \(/m);
    expect(dumps.copy).toMatch(/^COPY public\.comments \(id, "pageId", .*, "parentId", "postById"\) FROM stdin;$/m);
    expect(dumps.inserts).not.toMatch(/CREATE TABLE|public\.users/);
    expect(dumps.inserts).toMatch(/^INSERT INTO public\.comments VALUES \('/m);
    expect(dumps.columnInserts).toMatch(/^INSERT INTO public\.comments \(id, "pageId", .*\) VALUES$/m);
    const first = (dump: string) => /^(?:COPY|INSERT INTO) public\.(comments|pages)\b/m.exec(dump)?.[1];
    expect([first(dumps.copy), first(dumps.inserts), first(dumps.columnInserts)]).toEqual(["comments", "pages", "pages"]);
    for (const dump of Object.values(dumps)) {
      expect(dump.indexOf(uuid(2))).toBeLessThan(dump.lastIndexOf(uuid(1)));
    }

    for (const [form, dump] of Object.entries(dumps)) {
      const t = await createTestTenant(server);
      const done = await importFile(t, "cusdis", dump, query);
      expect(done, form).toMatchObject({ format: "cusdis", state: "succeeded", threads: 3, comments: 8, skipped: 1, errors: [] });
      await expectComments(server, t, "cusdis", r.expected);
      expect(await held(t), form).toEqual(reference);
      expect(await importFile(t, "cusdis", dump, query), form).toMatchObject({ state: "succeeded", threads: 0, comments: 0, unchanged: 8 });
      expect(await importFile(t, "cusdis", bytes, query), form).toMatchObject({
        state: "succeeded",
        threads: 0,
        comments: 0,
        unchanged: 8,
      });
      await expectComments(server, t, "cusdis", r.expected);
    }
    // and the SQLite file's tenant takes a dump as nothing new
    expect(await importFile(sqlite, "cusdis", dumps.copy, query)).toMatchObject({ state: "succeeded", comments: 0, unchanged: 8 });
  });

  it("a gzipped dump imports; a cut one (in a COPY's rows, in an INSERT, between statements, its gzip stream) fails at its line and writes nothing; another format is told it is a pg_dump", async () => {
    const t = await createTestTenant(server);
    const copy = pgCusdis.dump("--data-only", "-t", "pages", "-t", "comments");
    const inserts = pgCusdis.dump("--data-only", "--column-inserts", "-t", "pages", "-t", "comments");
    const lineAt = (text: string, at: number) => text.slice(0, at).split("\n").length;

    // COPY: cut inside the row of the odd comment
    const inRow = copy.slice(0, copy.indexOf("a new line:"));
    const cut = await importFile(t, "cusdis", inRow, query);
    expect(cut).toMatchObject({ state: "failed", comments: 0 });
    expect(cut.failure).toBe(
      `line ${lineAt(inRow, inRow.length)}: the dump ends inside the rows of comments (its COPY at line ${lineAt(copy, copy.indexOf("COPY public.comments"))}) before their \\. line: it is truncated`,
    );
    // an INSERT cut inside the odd comment's text, which goes on past its line
    const inValue = inserts.slice(0, inserts.indexOf("\\. not the end"));
    const start = inserts.lastIndexOf("INSERT INTO", inValue.length);
    expect((await importFile(t, "cusdis", inValue, query)).failure).toBe(
      `line ${lineAt(inValue, inValue.length - 1)}: the dump ends inside a value that starts at line ${lineAt(inserts, start)}: it is truncated`,
    );
    // between two statements, after every page and comment: pg_dump's last line is missing
    const lastRow = inserts.lastIndexOf("INSERT INTO public.pages");
    const between = inserts.slice(0, inserts.indexOf("\n", lastRow) + 1);
    expect((await importFile(t, "cusdis", between, query)).failure).toBe(
      `line ${lineAt(between, between.length - 1)}: the dump ends without pg_dump's last line ("-- PostgreSQL database dump complete"): it is truncated`,
    );
    const gz = gzipSync(copy);
    const gzCut = await importFile(t, "cusdis", gz.subarray(0, gz.byteLength - 40), query);
    expect(gzCut.failure).toMatch(/byte \d+ of the gzip file\)?: the gzip file ends early: it is truncated$/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });

    expect(await importFile(t, "cusdis", gz, query)).toMatchObject({ state: "succeeded", threads: 3, comments: 8, skipped: 1, errors: [] });
    await expectComments(server, t, "cusdis", r.expected);

    const asIsso = await post(t, "isso", copy);
    expect(asIsso.status).toBe(422);
    expect((await asIsso.json()).errors[0].message).toBe("is a PostgreSQL dump (pg_dump), not isso");
    const gzAsTwikoo = await post(t, "twikoo", gz);
    expect((await gzAsTwikoo.json()).errors[0].message).toBe("is a PostgreSQL dump (pg_dump), not twikoo");
  });

  it("the CLI takes a dump", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const t = await createTestTenant(server);
    const dir = mkdtempSync(join(tmpdir(), "cusdis-dump-"));
    try {
      const path = join(dir, "cusdis.sql");
      writeFileSync(path, pgCusdis.dump("--data-only", "-t", "pages", "-t", "comments"));
      const args = ["import", "--tenant", t.tenantId, "--format", "cusdis", "--site", "https://blog.example", "--json", path];
      const run = await runCliInProcess(args, env);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ state: "succeeded", threads: 3, comments: 8, skipped: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("engagement import --format twikoo|artalk|cusdis", { timeout: 60_000 }, () => {
  it("the CLI takes the new formats, --site among them", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const t = await createTestTenant(server);
    const run = async (format: string, path: string, ...more: string[]) => {
      const r = await runCliInProcess(["import", "--tenant", t.tenantId, "--format", format, ...more, "--json", path], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    expect(await run("twikoo", `${MORE}twikoo/artransfer-twikoo.json`)).toMatchObject({ state: "succeeded", comments: 6 });
    expect(await run("artalk", `${MORE}artalk/artransfer-valine.artrans`, "--site", "https://valine.example")).toMatchObject({
      state: "succeeded",
      comments: 2,
    });
    const summary = await run("cusdis", `${MORE}cusdis/cusdis-pr302-dev.db`);
    expect(summary).toMatchObject({ state: "succeeded", comments: 0 });
    expect((await t.api.get(`/api/v1/imports/${summary.importId}`)).body).toMatchObject({ format: "cusdis", state: "succeeded" });
  });
});
