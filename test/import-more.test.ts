// Switching in (contract section 25) from remark42, Commento and isso, on files those systems wrote
// (../shared/fixtures/import-more, SOURCES.txt says where each comes from): every comment checked
// record by record against an independent reading of the file (test/support/import-readings.ts:
// the JSON lines read here, the Commento JSON parsed here, isso's tables SELECTed with sql.js here)
// — author names, threading, dates, statuses (deleted skipped and counted, flagged rejected,
// unapproved pending), votes, pinned and locked; importing again changes nothing; a cut or
// damaged file fails at its position and writes nothing; gzip, a gzip bomb, JSON nested 100,000
// deep and a file of another format are refused at their position, never a 500.
import { readFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import initSqlJs from "sql.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
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
import { siteQuery, TEST_SITE } from "./support/imports.js";
import { disqusXml } from "./support/import-files.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const importFile = (t: TestTenant, format: string, body: Uint8Array | string, query = "") => importInto(server, t, format, body, query);
const file = (name: string) => readFileSync(`${MORE}${name}`);
const post = (t: TestTenant, format: string, body: Uint8Array | string) =>
  fetch(`${server.url}/api/v1/imports?format=${format}${siteQuery(format)}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });

/** remark42's backup read here: the meta line, then store.Comment per line (backend/app/migrator/native.go) */
function readRemark42(text: string) {
  const [meta, ...lines] = text.split("\n").filter((l) => l.trim());
  const comments = lines.map((l) => JSON.parse(l) as any);
  const deleted = new Set(comments.filter((c) => c.delete === true).map((c) => c.id as string));
  const parents = new Map(comments.map((c) => [c.id as string, (c.pid as string) || null]));
  const expected: Expected[] = comments
    .filter((c) => !deleted.has(c.id))
    .map((c) => {
      const votes = Object.values((c.votes ?? {}) as Record<string, boolean>);
      return {
        sourceId: c.id,
        discussionId: discussionIdOfText(c.locator.url, true),
        parentSourceId: liveParentOf(parents, deleted, c.pid || null),
        body: c.orig?.trim() || htmlText(c.text),
        authorId: `remark42:${c.user.id}`,
        authorName: c.user.name,
        status: "approved",
        createdAt: new Date(c.time),
        upvotes: votes.filter((v) => v === true).length,
        downvotes: votes.filter((v) => v === false).length,
        pinned: c.pin === true,
      };
    });
  return { meta: JSON.parse(meta!), comments, deleted, expected };
}

describe("remark42", () => {
  it("a backup imports comment by comment: names, threading (a deleted comment's replies hang from its parent), dates, votes; again: nothing changes; gzipped: the same", async () => {
    const r = readRemark42(file("remark42/radiot-576.r42").toString("utf8"));
    expect(r.comments).toHaveLength(58);
    expect(r.deleted.size).toBe(2);
    const t = await createTestTenant(server);
    const done = await importFile(t, "remark42", file("remark42/radiot-576.r42"));
    expect(done).toMatchObject({ format: "remark42", state: "succeeded", threads: 1, comments: 56, skipped: 2, errors: [] });
    expect(done.readers).toBe(new Set(r.expected.map((e) => e.authorId)).size);
    const rows = await expectComments(server, t, "remark42", r.expected);
    // the two replies of the deleted 3666132431 (top-level) are top-level now, and shown
    const orphans = r.comments.filter((c) => c.pid === "3666132431");
    expect(orphans).toHaveLength(2);
    const d = await t.api.get("/api/v1/discussions/radio-t.com-p-2017-12-16-podcast-576");
    expect(d.body).toMatchObject({ url: "https://radio-t.com/p/2017/12/16/podcast-576/", state: "open", commentCount: 56 });
    // votes are the comment's score in the API
    const voted = r.expected.find((e) => e.upvotes! > 0)!;
    const one = rows.find((x) => x.body === voted.body)!;
    expect((await t.api.get(`/api/v1/comments/${one.id}`)).body).toMatchObject({
      score: voted.upvotes! - voted.downvotes!,
      upvotes: voted.upvotes,
    });

    const again = await importFile(t, "remark42", file("remark42/radiot-576.r42"));
    expect(again).toMatchObject({ state: "succeeded", threads: 0, comments: 0, readers: 0, unchanged: 56, skipped: 2 });
    await expectComments(server, t, "remark42", r.expected);

    const gz = await createTestTenant(server);
    expect(file("remark42/radiot-576.r42.gz").subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(await importFile(gz, "remark42", file("remark42/radiot-576.r42.gz"))).toMatchObject({
      state: "succeeded",
      comments: 56,
      skipped: 2,
    });
    await expectComments(server, gz, "remark42", r.expected);
  });

  it("remark42's own test export: read_only posts are locked, a parent not in the file leaves the reply top-level with a warning", async () => {
    const r = readRemark42(file("remark42/remark42-native-test.r42").toString("utf8"));
    const t = await createTestTenant(server);
    const done = await importFile(t, "remark42", file("remark42/remark42-native-test.r42"));
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 2, skipped: 0 });
    expect(done.errors).toEqual([{ position: "line 3", message: "the parent 1234 is not in this thread: kept as a top-level comment" }]);
    await expectComments(
      server,
      t,
      "remark42",
      r.expected.map((e) => ({ ...e, parentSourceId: null })),
    );
    const readOnly = (r.meta.posts as { url: string; read_only: boolean }[]).filter((p) => p.read_only).map((p) => p.url);
    expect(readOnly).toEqual(["https://radio-t.com"]);
    expect((await t.api.get(`/api/v1/discussions/${discussionIdOfText("https://radio-t.com", true)}`)).body.state).toBe("locked");
    expect((await t.api.get(`/api/v1/discussions/${discussionIdOfText("https://radio-t.com/2", true)}`)).body.state).toBe("open");
  });

  it("a cut backup fails at its line, a cut gzip at its byte, and neither writes anything", async () => {
    const t = await createTestTenant(server);
    const cut = await importFile(t, "remark42", file("remark42/truncated-radiot-576.r42"));
    // the cut is inside line 41: the 40 lines before it parse, line 41 does not
    const text = file("remark42/truncated-radiot-576.r42").toString("utf8").split("\n");
    expect(text).toHaveLength(41);
    expect(() => JSON.parse(text[40]!)).toThrow();
    expect(cut).toMatchObject({ format: "remark42", state: "failed", comments: 0 });
    expect(cut.failure).toMatch(/^line 41: not JSON/);
    const gz = await importFile(t, "remark42", file("remark42/truncated-radiot-576.r42.gz"));
    expect(gz).toMatchObject({ state: "failed", comments: 0 });
    expect(gz.failure).toBe("line 42 (byte 5779 of the gzip file): the gzip file ends early: it is truncated");
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });

  it("what is not a backup is refused naming what it is: remark42's own test input (plain and gzipped), a Disqus export; a gzip bomb fails at its byte", async () => {
    const t = await createTestTenant(server);
    for (const name of ["remark42/remark42-cmd-import.txt", "remark42/remark42-cmd-import.txt.gz"]) {
      const res = await post(t, "remark42", file(name));
      expect(res.status, name).toBe(422);
      expect(await res.json()).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "body", message: expect.stringMatching(/is not a remark42 backup/) }],
      });
    }
    const disqus = await post(t, "remark42", readFileSync(`${IMPORT_FIXTURES}disqus-isso.xml`));
    expect(disqus.status).toBe(422);
    expect((await disqus.json()).errors[0].message).toBe("is a Disqus export, not remark42");

    // a meta line, then 512 MiB of NUL bytes (gzip members one after the other, as gunzip reads
    // them): refused once it expands past 256 times its size
    const mib = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
    const bomb = Buffer.concat([gzipSync('{"version":1,"users":[],"posts":[]}\n'), ...Array.from({ length: 512 }, () => mib)]);
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    const done = await importFile(t, "remark42", bomb);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    // its second line is the NUL bytes: too long a line, or too much expansion, whichever comes first
    expect(done.failure).toMatch(
      /^line 2(: not read: a line longer than 16777216 characters| \(byte \d+ of the gzip file\): the gzip file expands more than 256 times)/,
    );
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });
});

/** Commento's export read here: {"version","comments","commenters"} (api/domain_export.go, comment.go, commenter.go) */
function readCommento(text: string) {
  const doc = JSON.parse(text) as { comments: any[]; commenters: any[] };
  const names = new Map(doc.commenters.map((c) => [c.commenterHex as string, c.name as string]));
  const deleted = new Set(doc.comments.filter((c) => c.deleted).map((c) => c.commentHex as string));
  const parents = new Map(doc.comments.map((c) => [c.commentHex as string, c.parentHex === "root" ? null : (c.parentHex as string)]));
  const status: Record<string, string> = { approved: "approved", unapproved: "pending", flagged: "rejected" };
  const kept = doc.comments.filter((c) => !c.deleted && c.markdown.trim());
  const expected: Expected[] = kept.map((c) => ({
    sourceId: c.commentHex,
    discussionId: discussionIdOfText(`https://${c.domain}${c.url}`, true),
    parentSourceId: liveParentOf(parents, deleted, parents.get(c.commentHex) ?? null),
    body: c.markdown.trim(),
    authorId: `commento:${c.commenterHex}`,
    authorName: c.commenterHex === "anonymous" ? "Anonymous" : (names.get(c.commenterHex) ?? "Anonymous"),
    status: status[c.state]!,
    createdAt: new Date(c.creationDate),
    upvotes: Math.max(c.score, 0),
    downvotes: Math.max(-c.score, 0),
  }));
  return { doc, deleted, expected, empty: doc.comments.filter((c) => !c.deleted && !c.markdown.trim()) };
}

describe("Commento", () => {
  it("Commento's own import test: a reply listed before its parent is threaded; commenters named, anonymous ones Anonymous; again: nothing changes", async () => {
    const r = readCommento(file("commento/commento-import-test.json").toString("utf8"));
    const t = await createTestTenant(server);
    const done = await importFile(t, "commento", file("commento/commento-import-test.json"));
    expect(done).toMatchObject({ format: "commento", state: "succeeded", threads: 1, comments: 3, readers: 2, skipped: 0, errors: [] });
    const rows = await expectComments(server, t, "commento", r.expected);
    expect(rows.filter((x) => x.parentId !== null)).toHaveLength(1);
    // served gzipped, as Commento's download is
    const gz = await createTestTenant(server);
    expect(await importFile(gz, "commento", gzipSync(file("commento/commento-import-test.json")))).toMatchObject({
      state: "succeeded",
      comments: 3,
    });
    await expectComments(server, gz, "commento", r.expected);
    expect(await importFile(t, "commento", file("commento/commento-import-test.json"))).toMatchObject({
      comments: 0,
      unchanged: 3,
      readers: 0,
    });
  });

  it("states: flagged is rejected, unapproved pending, a deleted comment skipped and counted; keepEmails keeps the commenters' addresses", async () => {
    const r = readCommento(file("commento/states-remark42-migrator-commento.json").toString("utf8"));
    expect(r.deleted.size).toBe(1);
    const t = await createTestTenant(server);
    const done = await importFile(t, "commento", file("commento/states-remark42-migrator-commento.json"), "&keepEmails=true");
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 3, skipped: 1, errors: [] });
    await expectComments(server, t, "commento", r.expected);
    expect(new Set(r.expected.map((e) => e.status))).toEqual(new Set(["approved", "pending", "rejected"]));
    const readers = await server.app.runtime.services.prisma.reader.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } });
    const emails = new Map((r.doc.commenters as any[]).map((c) => [`commento:${c.commenterHex}`, c.email]));
    for (const reader of readers) expect(reader.email).toBe(emails.get(reader.id) ?? null);
    // the plain file (the same without the changed states) also imports whole
    const plain = readCommento(file("commento/remark42-migrator-commento.json").toString("utf8"));
    const p = await createTestTenant(server);
    expect(await importFile(p, "commento", file("commento/remark42-migrator-commento.json"))).toMatchObject({
      state: "succeeded",
      skipped: 0,
    });
    await expectComments(server, p, "commento", plain.expected);
  });

  it("a Commento++ export whose comments have no text: each a bad record at its position, the import goes on", async () => {
    const r = readCommento(file("commento/remark42-rest-commento.json").toString("utf8"));
    expect(r.empty).toHaveLength(7);
    const t = await createTestTenant(server);
    const done = await importFile(t, "commento", file("commento/remark42-rest-commento.json"));
    expect(done).toMatchObject({ state: "succeeded", comments: 0, skipped: 7 });
    const lines = file("commento/remark42-rest-commento.json").toString("utf8").split("\n");
    expect(done.errors).toHaveLength(7);
    for (const [i, e] of (done.errors as { position: string; message: string }[]).entries()) {
      const line = Number(/^line (\d+),/.exec(e.position)![1]);
      expect(lines[line - 1]!.trim()).toBe("{");
      expect(e.message).toBe(`comment ${r.empty[i].commentHex}: its markdown is empty`);
    }
  });

  it("a cut export fails at its line and byte and writes nothing; JSON nested 100,000 deep fails at the depth", async () => {
    const t = await createTestTenant(server);
    const cut = file("commento/truncated-remark42-migrator-commento.json");
    const done = await importFile(t, "commento", cut);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toBe(`line 39, column 46 (byte ${cut.byteLength}): the file ends inside a JSON value: it is truncated`);
    const deep = `{"version":1,"comments":[{"commentHex":"a","markdown":${"[".repeat(100_000)}${"]".repeat(100_000)}}],"commenters":[]}`;
    const nested = await importFile(t, "commento", deep);
    expect(nested).toMatchObject({ state: "failed", comments: 0 });
    // the root object, the comments array and the comment are 3 deep: the 62nd "[" is the 65th level
    const at = deep.indexOf("[[") + 61;
    expect(nested.failure).toBe(`line 1, column ${at + 1} (byte ${at}): not read: JSON nested deeper than 64`);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });
});

/** isso's tables SELECTed here with sql.js (isso/db/comments.py: mode 1 accepted, 2 pending, 4 deleted) */
async function readIsso(bytes: Uint8Array) {
  const SQL = await initSqlJs();
  const db = new SQL.Database(bytes);
  const rows = (q: string) => {
    const [res] = db.exec(q);
    return (res?.values ?? []).map((v) => Object.fromEntries(res!.columns.map((c, i) => [c, v[i]]))) as any[];
  };
  const threads = rows("SELECT id, uri, title FROM threads");
  const comments = rows("SELECT tid, id, parent, created, modified, mode, text, author, email, likes, dislikes FROM comments");
  db.close();
  const deleted = new Set(comments.filter((c) => c.mode === 4).map((c) => String(c.id)));
  const parents = new Map(comments.map((c) => [String(c.id), c.parent === null ? null : String(c.parent)]));
  const expected: Expected[] = comments
    .filter((c) => c.mode !== 4)
    .map((c) => ({
      sourceId: String(c.id),
      discussionId: discussionIdOfText(threads.find((th) => th.id === c.tid).uri),
      parentSourceId: liveParentOf(parents, deleted, c.parent === null ? null : String(c.parent)),
      body: htmlText(c.text),
      authorName: c.author ?? "Anonymous",
      status: c.mode === 2 ? "pending" : "approved",
      createdAt: new Date(c.created * 1000),
      editedAt: c.modified ? new Date(c.modified * 1000) : null,
      upvotes: c.likes,
      downvotes: c.dislikes,
    }));
  return { threads, comments, deleted, expected };
}

describe("isso", () => {
  it("Radio-T's comments in isso's database: flattened replies, a pending, an anonymous, a deleted (skipped, its replies top-level), an edited one, likes and dislikes; again: nothing changes", async () => {
    const bytes = file("isso/isso-radiot-576.db");
    const r = await readIsso(bytes);
    expect(r.comments).toHaveLength(58);
    const t = await createTestTenant(server);
    const done = await importFile(t, "isso", bytes);
    expect(done).toMatchObject({ format: "isso", state: "succeeded", threads: 1, comments: 57, skipped: 1, errors: [] });
    await expectComments(server, t, "isso", r.expected);
    expect(r.expected.filter((e) => e.status === "pending")).toHaveLength(1);
    expect(r.expected.filter((e) => e.editedAt)).toHaveLength(1);
    const d = await t.api.get("/api/v1/discussions/p-2017-12-16-podcast-576");
    expect(d.body).toMatchObject({ title: "Радио-Т 576", commentCount: 56 });
    expect(await importFile(t, "isso", bytes)).toMatchObject({ state: "succeeded", comments: 0, unchanged: 57, skipped: 1 });
    await expectComments(server, t, "isso", r.expected);
  });

  it("isso's Disqus import: two threads (one untitled), a deleted comment kept for its reply; readers merged by email keep each comment's name", async () => {
    const bytes = file("isso/isso-tests-disqus.db");
    const r = await readIsso(bytes);
    const t = await createTestTenant(server);
    const done = await importFile(t, "isso", bytes, "&keepEmails=true");
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 4, skipped: 1, errors: [] });
    const rows = await expectComments(server, t, "isso", r.expected);
    // peter and user write from one address: one reader, each comment its own name
    const shared = r.comments.filter((c) => c.email === "foo@bar.com" && c.mode !== 4);
    expect(new Set(shared.map((c) => c.author))).toEqual(new Set(["peter", "user"]));
    const inThread = (c: { tid: number }) => discussionIdOfText(r.threads.find((th) => th.id === c.tid).uri);
    const sharedRows = rows.filter((x) => shared.some((c) => commentIdOf(t.tenantId, "isso", String(c.id), inThread(c)) === x.id));
    expect(sharedRows).toHaveLength(shared.length);
    expect(new Set(sharedRows.map((x) => x.authorId)).size).toBe(1);
    const prisma = server.app.runtime.services.prisma;
    const titles = (await prisma.discussion.findMany({ where: { tenantId: t.tenantId }, orderBy: { title: "asc" } })).map((x) => x.title);
    expect(titles).toEqual(["Hello, World!", null]);
    expect((await prisma.reader.findMany({ where: { tenantId: t.tenantId } })).map((x) => x.email).sort()).toEqual([
      "baz@email.foo",
      "foo@bar.com",
    ]);
  });

  it("keeps each thread's page: its path resolved against ?site=, found by the page's URL; without a site it is refused", async () => {
    const t = await createTestTenant(server);
    const bare = await fetch(`${server.url}/api/v1/imports?format=isso`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey },
      body: new Uint8Array(file("isso/isso-radiot-576.db")),
    });
    const refused = await bare.json();
    expect([bare.status, refused.code, refused.errors?.[0]?.path]).toEqual([400, "invalid_parameter", "site"]);
    const done = await importFile(t, "isso", file("isso/isso-radiot-576.db"), "&site=https%3A%2F%2Fradio-t.com%2Fignored%2Fpath");
    expect(done).toMatchObject({ state: "succeeded", comments: 57, site: "https://radio-t.com" });
    const page = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent("https://radio-t.com/p/2017/12/16/podcast-576/")}`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({
      id: "p-2017-12-16-podcast-576",
      url: "https://radio-t.com/p/2017/12/16/podcast-576/",
      commentCount: 56,
    });
  });

  it("attaches to the discussion a page already has (its first comment came before the import); threads of one page in one file share it", async () => {
    const t = await createTestTenant(server);
    // the page had its thread before the switch: a discussion of another id, its URL written otherwise
    expect((await t.api.put("/api/v1/discussions/radio-t-576", { url: "https://RADIO-T.com/p/2017/12/16/podcast-576" })).status).toBe(201);
    const early = await t.reader("early", { name: "Early" });
    expect((await early.post("/api/v1/discussions/radio-t-576/comments", { body: "Before the switch" })).status).toBe(201);
    const done = await importFile(t, "isso", file("isso/isso-radiot-576.db"), "&site=https%3A%2F%2Fradio-t.com");
    expect(done).toMatchObject({ state: "succeeded", comments: 57, threads: 0, errors: [] });
    const lookup = () => t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent("https://radio-t.com/p/2017/12/16/podcast-576/")}`);
    expect((await lookup()).body).toMatchObject({
      id: "radio-t-576",
      url: "https://RADIO-T.com/p/2017/12/16/podcast-576",
      commentCount: 57,
    });
    // its own id was never made
    expect((await t.api.get("/api/v1/discussions/p-2017-12-16-podcast-576")).status).toBe(404);
    expect(await importFile(t, "isso", file("isso/isso-radiot-576.db"), "&site=https%3A%2F%2Fradio-t.com")).toMatchObject({
      comments: 0,
      unchanged: 57,
    });
    expect((await lookup()).body).toMatchObject({ id: "radio-t-576", commentCount: 57 });

    // two threads of one page in a Disqus file (two identifiers, the link written two ways): one discussion
    const xml = disqusXml(
      [
        { id: "71", identifier: "old-slug", link: "https://blog.example/posts/one/", title: "One" },
        { id: "72", identifier: "new-slug", link: "https://blog.example/posts/one", title: "One again" },
      ],
      [
        { id: "801", thread: "71", message: "<p>On the old identifier</p>", author: { name: "Ann", username: "ann" } },
        { id: "802", thread: "72", message: "<p>On the new identifier</p>", author: { name: "Bo", username: "bo" } },
        { id: "803", thread: "72", parent: "801", message: "<p>A reply across them</p>", author: { name: "Cy", username: "cy" } },
      ],
    );
    expect(await importFile(t, "disqus", xml)).toMatchObject({ state: "succeeded", threads: 1, comments: 3, errors: [] });
    const one = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent("https://blog.example/posts/one")}`);
    expect(one.body).toMatchObject({ id: "old-slug", title: "One", commentCount: 3 });
    expect((await t.api.get("/api/v1/discussions/new-slug")).status).toBe(404);
    const list = await t.api.get("/api/v1/discussions/old-slug/comments?sort=oldest");
    const byBody = (body: string) => list.body.items.find((c: { body: string }) => c.body === body);
    expect(byBody("A reply across them")?.parentId).toBe(byBody("On the old identifier")?.id);
    expect(await importFile(t, "disqus", xml)).toMatchObject({ threads: 0, comments: 0, unchanged: 3 });
  });

  it("two isso databases into one tenant keep every comment of both, their ids overlapping; each again changes nothing", async () => {
    const radiot = await readIsso(file("isso/isso-radiot-576.db"));
    const tests = await readIsso(file("isso/isso-tests-disqus.db"));
    // both number their comments from 1
    expect(tests.comments.map((c) => c.id).filter((id) => radiot.comments.some((o) => o.id === id)).length).toBeGreaterThan(0);
    const t = await createTestTenant(server);
    expect(await importFile(t, "isso", file("isso/isso-radiot-576.db"))).toMatchObject({ state: "succeeded", comments: 57, errors: [] });
    expect(await importFile(t, "isso", file("isso/isso-tests-disqus.db"))).toMatchObject({
      state: "succeeded",
      comments: 4,
      unchanged: 0,
      errors: [],
    });
    await expectComments(server, t, "isso", [...radiot.expected, ...tests.expected]);
    expect(await importFile(t, "isso", file("isso/isso-radiot-576.db"))).toMatchObject({ comments: 0, unchanged: 57 });
    expect(await importFile(t, "isso", file("isso/isso-tests-disqus.db"))).toMatchObject({ comments: 0, unchanged: 4 });
    await expectComments(server, t, "isso", [...radiot.expected, ...tests.expected]);
  });

  it("one isso database for two sites (the same pages' paths, the same ids) keeps both, each thread at its own site's page", async () => {
    const bytes = file("isso/isso-radiot-576.db");
    const radiot = await readIsso(bytes);
    const t = await createTestTenant(server);
    const other = "https://other.example";
    expect(await importFile(t, "isso", bytes)).toMatchObject({ state: "succeeded", comments: 57, errors: [] });
    expect(await importFile(t, "isso", bytes, `&site=${encodeURIComponent(other)}`)).toMatchObject({
      state: "succeeded",
      comments: 57,
      skipped: 1,
      errors: [],
    });
    expect(await server.app.runtime.services.prisma.comment.count({ where: { tenantId: t.tenantId } })).toBe(114);
    // each page of each site: its own discussion, holding its thread's comments
    const path = radiot.threads[0].uri as string;
    const here = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(new URL(path, TEST_SITE).href)}`);
    const there = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(new URL(path, other).href)}`);
    expect([here.status, there.status]).toEqual([200, 200]);
    expect(there.body.id).not.toBe(here.body.id);
    expect(there.body.commentCount).toBe(here.body.commentCount);
    expect(here.body.commentCount).toBeGreaterThan(0);
    // and each again changes nothing
    expect(await importFile(t, "isso", bytes, `&site=${encodeURIComponent(other)}`)).toMatchObject({ comments: 0, unchanged: 57 });
    expect(await importFile(t, "isso", bytes)).toMatchObject({ comments: 0, unchanged: 57 });
  });

  it("a record whose id is another source's comment is an error listed for it, never written over", async () => {
    const t = await createTestTenant(server);
    expect(await importFile(t, "isso", file("isso/isso-radiot-576.db"))).toMatchObject({ comments: 57 });
    // the same page and comment ids, another database: its comment 2 written at another time
    const SQL = await initSqlJs();
    const db = new SQL.Database(file("isso/isso-radiot-576.db"));
    db.run("UPDATE comments SET created = created + 3600, text = 'Another site, another comment' WHERE id = 2");
    const other = db.export();
    db.close();
    const done = await importFile(t, "isso", other);
    expect(done).toMatchObject({ state: "succeeded", comments: 0, unchanged: 56, skipped: 2 });
    expect(done.errors).toEqual([{ position: "comments id 2", message: expect.stringContaining("another source's comment") }]);
    const radiot = await readIsso(file("isso/isso-radiot-576.db"));
    await expectComments(server, t, "isso", radiot.expected); // the first one's comment 2 as it was
  });

  it("a comment an earlier version imported (its id without its discussion) is found again, not doubled", async () => {
    const bytes = file("isso/isso-radiot-576.db");
    const r = await readIsso(bytes);
    const t = await createTestTenant(server);
    expect(await importFile(t, "isso", bytes)).toMatchObject({ comments: 57 });
    // the rows as an earlier version named them: tenant, format and source id
    const ids = r.expected.map((e) => [
      commentIdOf(t.tenantId, "isso", e.sourceId, e.discussionId),
      commentIdOf(t.tenantId, "isso", e.sourceId),
    ]);
    await server.app.runtime.services.sql.query(
      `UPDATE comments c SET id = m.old, parent_id = p.old
         FROM unnest($2::text[], $3::text[]) AS m(new, old)
         LEFT JOIN comments x ON x.tenant_id = $1 AND x.id = m.new
         LEFT JOIN unnest($2::text[], $3::text[]) AS p(new, old) ON p.new = x.parent_id
        WHERE c.tenant_id = $1 AND c.id = m.new`,
      [t.tenantId, ids.map(([n]) => n), ids.map(([, o]) => o)],
    );
    expect(await importFile(t, "isso", bytes)).toMatchObject({ state: "succeeded", comments: 0, unchanged: 57, errors: [] });
    const rows = await server.app.runtime.services.prisma.comment.findMany({ where: { tenantId: t.tenantId } });
    expect(rows).toHaveLength(57);
    expect(new Set(rows.map((x) => x.id))).toEqual(new Set(ids.map(([, o]) => o)));
  });

  it("a cut database fails at the byte where it ends and writes nothing; what is not SQLite is refused; another format is named", async () => {
    const t = await createTestTenant(server);
    const done = await importFile(t, "isso", file("isso/truncated-isso-radiot-576.db"));
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toBe(
      "byte 34816: the database file ends at byte 34816, but its header says it holds 69632 bytes: it is truncated",
    );
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
    const res = await post(t, "isso", file("remark42/radiot-576.r42"));
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].message).toBe("is a remark42 backup, not isso");
    const plain = await post(t, "isso", "hello");
    expect((await plain.json()).errors[0].message).toBe("is not an SQLite database (isso's comments.db)");
    const wrong = await post(t, "remark42", file("isso/isso-radiot-576.db"));
    expect((await wrong.json()).errors[0].message).toBe("is an SQLite database (isso's), not remark42");
    // gunzipSync is used by the readings; a gzipped database is read too
    expect(gunzipSync(gzipSync(file("isso/isso-tests-disqus.db"))).equals(file("isso/isso-tests-disqus.db"))).toBe(true);
  });
});
