// Import and export (contract section 16) through the real server: Disqus XML, WordPress WXR and our
// own NDJSON imported with POST /api/v1/imports and followed at GET /api/v1/imports/{id} — children
// before parents linked, statuses, readers namespaced by source (no email kept), a re-run changing
// nothing, a grown file adding what is new, a bad record skipped or stopping the import at its
// position, no event appended, counts right and a new post behaving normally afterwards — and
// GET /api/v1/export read back into a fresh tenant (the same threads, statuses, authors and counts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { disqusXml, wxr, type DisqusPost } from "./support/import-files.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const prisma = () => server.app.runtime.services.prisma;

/** POSTs a file and waits for the import to end; answers the 202's body and the finished import. */
async function importFile(t: TestTenant, format: string, body: string, query = "") {
  const res = await fetch(`${server.url}/api/v1/imports?format=${format}${query}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey, "content-type": format === "ndjson" ? "application/x-ndjson" : "application/xml" },
    body,
  });
  const accepted = (await res.json()) as any;
  expect(res.status, JSON.stringify(accepted)).toBe(202);
  expect(res.headers.get("location")).toBe(`/api/v1/imports/${accepted.id}`);
  for (let i = 0; i < 400; i++) {
    const r = await t.api.get(`/api/v1/imports/${accepted.id}`);
    expect(r.status).toBe(200);
    if (r.body.state !== "running") return { accepted, done: r.body };
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error("the import did not finish");
}

const POSTS: DisqusPost[] = [
  // a reply before its parent (Disqus exports are not ordered by thread)
  { id: "p3", thread: "t1", parent: "p1", message: "<p>I agree &amp; more</p>", author: { name: "Bob", username: "bob" } },
  {
    id: "p1",
    thread: "t1",
    message: "<p>First!</p><p>Second line<br>third</p>",
    author: { name: "Jane Doe", username: "jane", email: "jane@example.com" },
  },
  { id: "p2", thread: "t1", message: "spam here", spam: true, author: { name: "Spammer", username: "spammy" } },
  { id: "p4", thread: "t1", parent: "p3", message: "deeper", author: { name: "Jane Doe", username: "jane" } },
  { id: "p5", thread: "t2", message: "", deleted: true, author: { name: "Gone", username: "gone" } },
  { id: "p6", thread: "t2", message: "anonymous words", author: { name: "Anon", email: "anon@example.com", anonymous: true } },
];
const THREADS = [
  { id: "t1", identifier: "article-1", link: "https://news.example/a/1", title: "Article one" },
  { id: "t2", identifier: "", link: "https://news.example/a/2?x=1", title: "Article two", closed: true },
];

describe("Disqus import", () => {
  it("imports threads, posts and authors; links children that came before their parents; keeps counts right; appends no event", async () => {
    const t = await createTestTenant(server);
    const { accepted, done } = await importFile(t, "disqus", disqusXml(THREADS, POSTS));
    expect(accepted).toMatchObject({ format: "disqus", state: "running", idFrom: "identifier", onError: "skip" });
    expect(done).toMatchObject({
      state: "succeeded",
      threads: 2,
      comments: 6,
      readers: 5,
      skipped: 0,
      unchanged: 0,
      errors: [],
      failure: null,
    });
    expect(done.bytesRead).toBe(done.bytesTotal);

    // discussion ids: the identifier, else a slug of the link; closed → locked
    const d1 = await t.api.get("/api/v1/discussions/article-1");
    expect(d1.body).toMatchObject({
      id: "article-1",
      title: "Article one",
      url: "https://news.example/a/1",
      commentCount: 3,
      state: "open",
    });
    const d2 = await t.api.get("/api/v1/discussions/news.example-a-2-x-1");
    expect(d2.body).toMatchObject({ title: "Article two", commentCount: 1, state: "locked" });

    const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId }, orderBy: { createdAt: "asc" } });
    const byBody = (b: string) => rows.find((r) => r.body === b)!;
    const first = byBody("First!\n\nSecond line\nthird");
    const reply = byBody("I agree & more");
    const deeper = byBody("deeper");
    expect(first).toMatchObject({ parentId: null, depth: 0, authorId: "disqus:jane", status: "approved", replyCount: 1 });
    expect(reply).toMatchObject({ parentId: first.id, depth: 1, authorId: "disqus:bob", replyCount: 1 });
    expect(deeper).toMatchObject({ parentId: reply.id, depth: 2, replyCount: 0 });
    expect(byBody("spam here").status).toBe("rejected");
    const deleted = rows.find((r) => r.status === "deleted")!;
    expect(deleted).toMatchObject({ body: "", discussionId: "news.example-a-2-x-1" });
    expect(first.publishedAt?.toISOString()).toBe(first.createdAt.toISOString());

    // readers namespaced by source; an anonymous author by a hash; no email anywhere
    const readers = await prisma().reader.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } });
    expect(readers.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        "disqus:jane",
        "disqus:bob",
        "disqus:spammy",
        "disqus:gone",
        expect.stringMatching(/^disqus:anon-[0-9a-f]{16}$/),
      ]),
    );
    expect(readers.find((r) => r.id === "disqus:jane")!.name).toBe("Jane Doe");
    expect(JSON.stringify({ rows, readers })).not.toMatch(/example\.com/);

    // the API shows the thread as any other: the reply under its parent, the counts
    const list = await t.api.get("/api/v1/discussions/article-1/comments?sort=oldest");
    expect(list.body.items.map((c: any) => c.body)).toEqual(["I agree & more", "First!\n\nSecond line\nthird", "deeper"]);
    expect(list.body.items[1]).toMatchObject({ parentId: null, replyCount: 1, author: { id: "disqus:jane", name: "Jane Doe" } });

    // imported history appended no events: seq untouched
    expect(await prisma().event.count({ where: { tenantId: t.tenantId } })).toBe(0);
    expect((await prisma().discussion.findMany({ where: { tenantId: t.tenantId } })).map((d) => d.seq)).toEqual([0, 0]);

    // a new post afterwards behaves as any: seq 1, counts incremented, the parent's reply count too
    const reader = await t.reader("new-reader");
    const posted = await reader.post("/api/v1/discussions/article-1/comments", { body: "new after import", parentId: deeper.id });
    expect(posted.status).toBe(201);
    expect(posted.body.parentId).toBe(deeper.id);
    const events = await prisma().event.findMany({ where: { tenantId: t.tenantId } });
    expect(events.map((e) => [e.type, e.seq])).toEqual(expect.arrayContaining([["comment_created", 1]]));
    expect((await t.api.get("/api/v1/discussions/article-1")).body.commentCount).toBe(4);
    expect((await t.api.get(`/api/v1/comments/${deeper.id}`)).body.replyCount).toBe(1);
    expect((await prisma().comment.findUnique({ where: { id: posted.body.id } }))!.depth).toBe(3);
  });

  it("is idempotent: the same file again changes nothing; a grown file adds only what is new", async () => {
    const t = await createTestTenant(server);
    const file = disqusXml(THREADS, POSTS);
    await importFile(t, "disqus", file);
    const before = await prisma().comment.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } });

    const again = (await importFile(t, "disqus", file)).done;
    expect(again).toMatchObject({ state: "succeeded", threads: 0, comments: 0, readers: 0, unchanged: 6, skipped: 0 });
    expect(await prisma().comment.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } })).toEqual(before);

    // the file grew: a reply to the first post, and a post whose parent comes only in a later run
    const grown = [
      ...POSTS,
      { id: "p7", thread: "t1", parent: "p1", message: "a later reply", author: { name: "Carol", username: "carol" } },
      { id: "p9", thread: "t1", parent: "p8", message: "orphan for now", author: { name: "Carol", username: "carol" } },
    ];
    const g = (await importFile(t, "disqus", disqusXml(THREADS, grown))).done;
    expect(g).toMatchObject({ state: "succeeded", comments: 2, readers: 1, unchanged: 6 });
    expect(g.errors).toEqual([
      { position: expect.stringMatching(/^line \d+, column \d+$/), message: expect.stringContaining("not in this thread") },
    ]);
    const first = await prisma().comment.findFirst({ where: { tenantId: t.tenantId, body: "First!\n\nSecond line\nthird" } });
    expect(first!.replyCount).toBe(2);
    expect((await t.api.get("/api/v1/discussions/article-1")).body.commentCount).toBe(5);

    // the parent arrives: the orphan is linked to it on the next run
    const complete = [
      ...grown,
      { id: "p8", thread: "t1", parent: "p1", message: "the missing parent", author: { name: "Dan", username: "dan" } },
    ];
    const c = (await importFile(t, "disqus", disqusXml(THREADS, complete))).done;
    expect(c).toMatchObject({ state: "succeeded", comments: 1, errors: [] });
    const orphan = await prisma().comment.findFirst({ where: { tenantId: t.tenantId, body: "orphan for now" } });
    const parent = await prisma().comment.findFirst({ where: { tenantId: t.tenantId, body: "the missing parent" } });
    expect(orphan).toMatchObject({ parentId: parent!.id, depth: 2 });
    expect(parent!.replyCount).toBe(1);
    expect(await prisma().event.count({ where: { tenantId: t.tenantId } })).toBe(0);
  });

  it("reports a bad record with its position and skips it, or stops there with --on-error stop", async () => {
    const t = await createTestTenant(server);
    const posts: DisqusPost[] = [
      { id: "b1", thread: "t1", message: "good one", author: { name: "A", username: "a" } },
      { id: "b2", thread: "t1", message: "no date", createdAt: "", author: { name: "B", username: "b" } },
      { id: "b3", thread: "nope", message: "unknown thread", author: { name: "C", username: "c" } },
      { id: "b4", thread: "t1", message: "good two", author: { name: "D", username: "d" } },
    ];
    const file = disqusXml(THREADS.slice(0, 1), posts);
    const skip = (await importFile(t, "disqus", file)).done;
    expect(skip).toMatchObject({ state: "succeeded", comments: 2, skipped: 2 });
    expect(skip.errors).toEqual([
      { position: expect.stringMatching(/^line \d+, column \d+$/), message: expect.stringContaining("<createdAt>") },
      { position: expect.stringMatching(/^line \d+, column \d+$/), message: expect.stringContaining("thread nope") },
    ]);
    const line = Number(/^line (\d+)/.exec(skip.errors[0].position)![1]);
    expect(file.split("\n")[line - 1]).toContain('dsq:id="b2"');

    const t2 = await createTestTenant(server);
    const stop = (await importFile(t2, "disqus", file, "&onError=stop")).done;
    expect(stop).toMatchObject({ state: "failed", comments: 1, skipped: 1, onError: "stop" });
    expect(stop.failure).toMatch(/^line \d+, column \d+: .*<createdAt>/);
    // what came before the bad record is there, with its counts
    expect((await t2.api.get("/api/v1/discussions/article-1")).body.commentCount).toBe(1);
  });

  it("writes many discussions a bucket at a time: a source id twice keeps its first (the second an error), a parent in another thread is not linked, depths and reply counts are right, and the staging is emptied (a crashed import's too)", async () => {
    const t = await createTestTenant(server);
    const sql = server.app.runtime.services.sql;
    // what a crashed import left two days ago, and what a running one has staged now
    const stage = (run: string, at: string) =>
      sql.query(
        `INSERT INTO import_staged_comments (run, ord, tenant_id, bucket, id, discussion_id, author_id, body, status, pinned, created_at, position, staged_at)
         VALUES ($1, 0, $2, 0, 'cmt_stale', 'd', 'a', 'b', 'approved', false, now(), 'line 1', $3::timestamptz)`,
        [run, t.tenantId, at],
      );
    await stage("crashed-run", new Date(Date.now() - 2 * 86_400_000).toISOString());
    await stage("running-run", new Date().toISOString());
    // 150 threads (three buckets), each a chain of four replies; posts listed newest first, so every
    // reply comes before its parent
    const threads = Array.from({ length: 150 }, (_, i) => ({
      id: `bt${i}`,
      identifier: `bulk-${i}`,
      link: `https://b.example/${i}`,
      title: `Bulk ${i}`,
    }));
    const posts: DisqusPost[] = [];
    for (let i = 0; i < 150; i++) {
      for (let k = 4; k >= 0; k--) {
        posts.push({
          id: `b${i}-${k}`,
          thread: `bt${i}`,
          ...(k > 0 ? { parent: `b${i}-${k - 1}` } : {}),
          message: `thread ${i} level ${k}`,
          author: { name: `Author ${k}`, username: `author-${k}` },
        });
      }
    }
    posts.push({ id: "b0-0", thread: "bt0", message: "the same id again", author: { name: "Dup", username: "dup" } });
    posts.push({ id: "cross", thread: "bt1", parent: "b0-0", message: "replies across threads", author: { name: "X", username: "x" } });
    const done = (await importFile(t, "disqus", disqusXml(threads, posts))).done;
    expect(done).toMatchObject({ state: "succeeded", threads: 150, comments: 751, unchanged: 0, skipped: 1 });
    expect(done.errors).toEqual([
      {
        position: expect.any(String),
        message: expect.stringMatching(/^the comment id is already in this file \(at line \d+, column \d+\): skipped$/),
      },
      { position: expect.any(String), message: "the parent b0-0 is not in this thread: kept as a top-level comment" },
    ]);

    const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId } });
    const byBody = new Map(rows.map((r) => [r.body, r]));
    for (const i of [0, 74, 149]) {
      for (let k = 0; k <= 4; k++) {
        const row = byBody.get(`thread ${i} level ${k}`)!;
        expect(row).toMatchObject({ discussionId: `bulk-${i}`, depth: k, replyCount: k < 4 ? 1 : 0 });
        expect(row.parentId).toBe(k === 0 ? null : byBody.get(`thread ${i} level ${k - 1}`)!.id);
      }
    }
    expect(byBody.has("the same id again")).toBe(false);
    expect(byBody.get("replies across threads")).toMatchObject({ discussionId: "bulk-1", parentId: null, depth: 0 });
    expect((await t.api.get("/api/v1/discussions/bulk-1")).body.commentCount).toBe(6);
    // this import's staging is gone, and the crashed one's; the running one's stays
    const left = await sql.query<{ run: string }>("SELECT run FROM import_staged_comments WHERE tenant_id = $1", [t.tenantId]);
    expect(left.map((r) => r.run)).toEqual(["running-run"]);
  });

  it("keeps authors' email addresses only with keepEmails=true, and never replaces one a reader has", async () => {
    const t = await createTestTenant(server);
    const kept = await importFile(t, "disqus", disqusXml(THREADS, POSTS), "&keepEmails=true");
    expect(kept.accepted.keepEmails).toBe(true);
    expect(kept.done).toMatchObject({ state: "succeeded", keepEmails: true, readers: 5 });
    const emails = async () =>
      Object.fromEntries(
        (await prisma().reader.findMany({ where: { tenantId: t.tenantId } })).map((r) => [
          r.id.startsWith("disqus:anon-") ? "anon" : r.id,
          r.email,
        ]),
      );
    // jane's address (given in her first post), the anonymous author's; the others gave none
    expect(await emails()).toEqual({
      "disqus:jane": "jane@example.com",
      "disqus:bob": null,
      "disqus:spammy": null,
      "disqus:gone": null,
      anon: "anon@example.com",
    });
    // an address the reader has is kept; one without gains the file's
    await prisma().reader.update({
      where: { tenantId_id: { tenantId: t.tenantId, id: "disqus:jane" } },
      data: { email: "jane@new.example" },
    });
    const withBob = POSTS.map((p) => (p.author.username === "bob" ? { ...p, author: { ...p.author, email: "Bob@Example.com" } } : p));
    const again = (await importFile(t, "disqus", disqusXml(THREADS, withBob), "&keepEmails=true")).done;
    expect(again).toMatchObject({ state: "succeeded", readers: 0, comments: 0 });
    expect(await emails()).toMatchObject({ "disqus:jane": "jane@new.example", "disqus:bob": "bob@example.com" });

    // without it, nothing is stored
    const other = await createTestTenant(server);
    const plain = await importFile(other, "disqus", disqusXml(THREADS, withBob));
    expect(plain.done.keepEmails).toBe(false);
    const readers = await prisma().reader.findMany({ where: { tenantId: other.tenantId } });
    expect(readers.map((r) => r.email)).toEqual(readers.map(() => null));
    // a value other than true or false is a 400
    const bad = await fetch(`${server.url}/api/v1/imports?format=disqus&keepEmails=yes`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey },
      body: disqusXml(THREADS, POSTS),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "invalid_parameter", errors: [{ path: "keepEmails" }] });
  });

  it("takes discussion ids from the URL with idFrom=url", async () => {
    const t = await createTestTenant(server);
    const { done } = await importFile(t, "disqus", disqusXml(THREADS, POSTS), "&idFrom=url");
    expect(done).toMatchObject({ state: "succeeded", idFrom: "url" });
    const ids = (await prisma().discussion.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } })).map((d) => d.id);
    expect(ids).toEqual(["news.example-a-1", "news.example-a-2-x-1"]);
  });
});

describe("WordPress import", () => {
  it("imports items with comments: statuses 1/0/spam/trash, comment_parent, pingbacks left out, readers by email hash", async () => {
    const t = await createTestTenant(server);
    const file = wxr([
      {
        postId: "10",
        name: "hello-world",
        link: "https://blog.example/hello-world/",
        title: "Hello world",
        comments: [
          { id: "3", parent: "1", author: "Ann", email: "ann@blog.example", content: "a reply", approved: "1" },
          {
            id: "1",
            author: "Ann",
            email: "ANN@blog.example",
            content: '<p>first <a href="https://x.example">link</a></p>',
            approved: "1",
          },
          { id: "2", author: "Sp", email: "sp@blog.example", content: "buy", approved: "spam" },
          { id: "4", author: "Pending Pat", content: "wait for me", approved: "0" },
          { id: "5", author: "Trashed", content: "gone", approved: "trash" },
          { id: "6", author: "Other blog", content: "pingback", approved: "1", type: "pingback" },
        ],
      },
      { postId: "11", name: "no-comments", link: "https://blog.example/quiet/", title: "Quiet", comments: [] },
    ]);
    const { done } = await importFile(t, "wordpress", file);
    expect(done).toMatchObject({ state: "succeeded", threads: 1, comments: 5, skipped: 0 });
    const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId, discussionId: "hello-world" } });
    const by = (b: string) => rows.find((r) => r.body === b)!;
    expect(by("first link (https://x.example)")).toMatchObject({
      status: "approved",
      replyCount: 1,
      authorId: expect.stringMatching(/^wp:[0-9a-f]{16}$/),
    });
    expect(by("a reply")).toMatchObject({ parentId: by("first link (https://x.example)").id, depth: 1 });
    expect(by("a reply").authorId).toBe(by("first link (https://x.example)").authorId); // the same email, any case
    expect(by("buy").status).toBe("rejected");
    expect(by("wait for me")).toMatchObject({ status: "pending", authorId: expect.stringMatching(/^wp:name-[0-9a-f]{16}$/) });
    expect(rows.find((r) => r.status === "deleted")).toMatchObject({ body: "" });
    expect(rows.some((r) => r.body === "pingback")).toBe(false);
    expect((await t.api.get("/api/v1/discussions/hello-world")).body).toMatchObject({ title: "Hello world", commentCount: 2 });
    expect(JSON.stringify(await prisma().reader.findMany({ where: { tenantId: t.tenantId } }))).not.toMatch(/blog\.example/);
  });

  it("a comment_approved it does not know is a bad record at its position", async () => {
    const t = await createTestTenant(server);
    const file = wxr([
      {
        postId: "1",
        name: "p",
        link: "https://b.example/p",
        title: "P",
        comments: [{ id: "1", author: "A", content: "x", approved: "maybe" }],
      },
    ]);
    const { done } = await importFile(t, "wordpress", file);
    expect(done).toMatchObject({ state: "succeeded", comments: 0, skipped: 1 });
    expect(done.errors[0]).toEqual({
      position: expect.stringMatching(/^line \d+, column \d+$/),
      message: expect.stringContaining('"maybe"'),
    });
  });
});

describe("export → import round trip", () => {
  it("GET /api/v1/export streams NDJSON that imports into a fresh tenant as the same threads, statuses, authors and counts", async () => {
    const a = await createTestTenant(server);
    await a.api.put("/api/v1/discussions/rt-1", { title: "Round trip", url: "https://rt.example/1" });
    const ann = await a.reader("ann", { name: "Ann" });
    const bob = await a.reader("bob", { name: "Bob" });
    const root = (await ann.post("/api/v1/discussions/rt-1/comments", { body: "root" })).body;
    const r1 = (await bob.post("/api/v1/discussions/rt-1/comments", { body: "reply 1", parentId: root.id })).body;
    await ann.post("/api/v1/discussions/rt-1/comments", { body: "reply 2", parentId: r1.id });
    const gone = (await bob.post("/api/v1/discussions/rt-1/comments", { body: "to delete" })).body;
    expect((await bob.del(`/api/v1/comments/${gone.id}`)).status).toBe(204);
    const rejected = (await bob.post("/api/v1/discussions/rt-2/comments", { body: "to reject" })).body;
    expect((await a.api.post(`/api/v1/comments/${rejected.id}/reject`)).status).toBe(200);
    expect((await a.api.post(`/api/v1/comments/${root.id}/pin`)).status).toBe(200);
    expect((await bob.post(`/api/v1/comments/${root.id}/reactions`, { kind: "like" })).status).toBe(200);
    expect((await ann.post(`/api/v1/comments/${r1.id}/reactions`, { kind: "love" })).status).toBe(200);
    expect((await bob.post(`/api/v1/comments/${r1.id}/reactions`, { kind: "love" })).status).toBe(200);
    await a.api.post("/api/v1/discussions/rt-2/lock");

    const res = await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": a.apiKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const text = await res.text();
    const records = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ type: "export", version: 2, tenantId: a.tenantId });
    expect(records.at(-1)).toEqual({
      type: "end",
      counts: { discussions: 2, readers: 2, comments: 5, reactions: 3, votes: 0, pageReactions: 0 },
    });
    expect(records.map((r) => r.type)).toEqual([
      "export",
      "discussion",
      "discussion",
      "reader",
      "reader",
      "comment",
      "comment",
      "comment",
      "comment",
      "comment",
      "reaction",
      "reaction",
      "reaction",
      "end",
    ]);
    expect(records.find((r) => r.type === "comment" && r.id === root.id)).toMatchObject({
      discussionId: "rt-1",
      parentId: null,
      author: { id: "ann", name: "Ann" },
      body: "root",
      status: "approved",
      pinned: true,
      editedAt: null,
    });

    const b = await createTestTenant(server);
    const { done } = await importFile(b, "ndjson", text);
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 5, readers: 2, reactions: 3, skipped: 0 });

    const shape = async (t: TestTenant) => {
      const discussions = await prisma().discussion.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } });
      const comments = await prisma().comment.findMany({
        where: { tenantId: t.tenantId },
        orderBy: [{ createdAt: "asc" }, { body: "asc" }],
      });
      const bodyOf = new Map(comments.map((c) => [c.id, c.body]));
      return {
        discussions: discussions.map((d) => ({ id: d.id, title: d.title, url: d.url, state: d.state, commentCount: d.commentCount })),
        comments: comments.map((c) => ({
          discussionId: c.discussionId,
          parent: c.parentId ? bodyOf.get(c.parentId) : null,
          depth: c.depth,
          body: c.body,
          status: c.status,
          pinned: c.pinned,
          authorId: c.authorId,
          replyCount: c.replyCount,
          reactionCounts: c.reactionCounts,
          reactionTotal: c.reactionTotal,
          createdAt: c.createdAt.toISOString(),
        })),
        readers: (await prisma().reader.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } })).map((r) => [r.id, r.name]),
      };
    };
    const [sa, sb] = [await shape(a), await shape(b)];
    expect(sb).toEqual(sa);
    expect(sb.comments.find((c) => c.body === "reply 1")).toMatchObject({ reactionCounts: { love: 2 }, replyCount: 1, depth: 1 });

    // importing it again into the same fresh tenant changes nothing; into the tenant it came from neither
    expect((await importFile(b, "ndjson", text)).done).toMatchObject({ comments: 0, threads: 0, readers: 0, reactions: 0, unchanged: 8 });
    expect((await importFile(a, "ndjson", text)).done).toMatchObject({ comments: 0, threads: 0, readers: 0, reactions: 0 });
    expect(await shape(a)).toEqual(sa);
  });

  it("exports a discussion past one batch: every comment once, the pinned ones first", async () => {
    const t = await createTestTenant(server);
    const at = Date.parse("2024-05-01T00:00:00Z");
    const lines = [JSON.stringify({ type: "export", version: 1, tenantId: "elsewhere", exportedAt: new Date().toISOString() })];
    for (let i = 0; i < 2_100; i++) {
      lines.push(
        JSON.stringify({
          type: "comment",
          id: `big-${i}`,
          discussionId: "big",
          parentId: i % 3 === 0 || i < 3 ? null : `big-${i - 1}`,
          author: { id: `r${i % 7}`, name: `R${i % 7}` },
          body: `comment ${i}`,
          status: "approved",
          pinned: i % 1000 === 500,
          createdAt: new Date(at + i * 1000).toISOString(),
        }),
      );
    }
    expect((await importFile(t, "ndjson", lines.join("\n"))).done).toMatchObject({ state: "succeeded", comments: 2_100 });
    const text = await (await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": t.apiKey } })).text();
    const comments = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((r) => r.type === "comment");
    expect(comments).toHaveLength(2_100);
    expect(new Set(comments.map((c) => c.id)).size).toBe(2_100);
    expect(comments.slice(0, 3).map((c) => [c.body, c.pinned])).toEqual([
      ["comment 500", true],
      ["comment 1500", true],
      ["comment 0", false],
    ]);
    expect((await t.api.get("/api/v1/discussions/big")).body.commentCount).toBe(2_100);
  });

  it("export ?since= holds what changed since then, and bad since is a 400", async () => {
    const a = await createTestTenant(server);
    const ann = await a.reader("ann");
    await ann.post("/api/v1/discussions/s-1/comments", { body: "old" });
    await new Promise((ok) => setTimeout(ok, 20));
    const since = new Date().toISOString();
    await ann.post("/api/v1/discussions/s-2/comments", { body: "new" });
    const res = await fetch(`${server.url}/api/v1/export?since=${encodeURIComponent(since)}`, { headers: { "x-api-key": a.apiKey } });
    const records = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.filter((r) => r.type === "comment").map((r) => r.body)).toEqual(["new"]);
    expect(records.filter((r) => r.type === "discussion").map((r) => r.id)).toEqual(["s-2"]);
    expect(records[0].since).toBe(since);
    const bad = await a.api.get("/api/v1/export?since=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "invalid_parameter", errors: [{ path: "since" }] });
  });
});

describe("capabilities and bad input", () => {
  it("every route needs manage_settings (403 missing_capability) and credentials (401)", async () => {
    const t = await createTestTenant(server);
    const { done } = await importFile(t, "disqus", disqusXml(THREADS, POSTS));
    const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    for (const r of [
      await moderator.get("/api/v1/export"),
      await moderator.get(`/api/v1/imports/${done.id}`),
      await moderator.get("/api/v1/imports"),
      await moderator.raw("POST", "/api/v1/imports?format=disqus", "<disqus/>"),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: "missing_capability", required: "manage_settings" });
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    const manager = t.as({ key: (await keyWith(t, ["manage_settings"])).key });
    expect((await manager.get(`/api/v1/imports/${done.id}`)).status).toBe(200);
    expect((await t.admin.get(`/api/v1/imports/${done.id}`)).status).toBe(200);
    expect((await t.as({}).get("/api/v1/export")).status).toBe(401);
    // another tenant's import is not found
    const other = await createTestTenant(server);
    expect((await other.api.get(`/api/v1/imports/${done.id}`)).body).toMatchObject({ code: "not_found" });
  });

  it("bad input is a problem document, never a 500", async () => {
    const t = await createTestTenant(server);
    const post = (query: string, body: string) => t.api.raw("POST", `/api/v1/imports${query}`, body);
    const cases: [Promise<any>, number, string][] = [
      [post("", "<disqus/>"), 400, "invalid_parameter"],
      [post("?format=xml", "<disqus/>"), 400, "invalid_parameter"],
      [post("?format=disqus&onError=maybe", "<disqus/>"), 400, "invalid_parameter"],
      [post("?format=disqus", ""), 422, "validation_failed"],
      [post("?format=disqus", "hello"), 422, "validation_failed"],
      [post("?format=wordpress", "<disqus></disqus>"), 422, "validation_failed"],
      [post("?format=ndjson", '{"type":"comment"}\n'), 422, "validation_failed"],
      [t.api.get("/api/v1/imports/imp_nope"), 404, "not_found"],
    ];
    for (const [p, status, code] of cases) {
      const r = await p;
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.code).toBe(code);
    }
    // XML that breaks off part way: the import ends failed at the position, and nothing of it is written
    const broken = disqusXml(THREADS, POSTS).replace("</post>\n  <post", "</post>\n  <post <<");
    const { done } = await importFile(t, "disqus", broken);
    expect(done).toMatchObject({ state: "failed", skipped: 1 });
    expect(done.failure).toMatch(/^line \d+, column \d+: not well-formed XML/);
    // an NDJSON line that is not a record is skipped at its line
    const nd = [
      JSON.stringify({ type: "export", version: 1, tenantId: "elsewhere", exportedAt: new Date().toISOString() }),
      "not json",
      JSON.stringify({ type: "comment", id: "x" }),
      JSON.stringify({
        type: "comment",
        id: "c1",
        discussionId: "nd-1",
        parentId: null,
        author: { id: "z", name: "Z" },
        body: "fine",
        status: "approved",
        pinned: false,
        createdAt: new Date().toISOString(),
      }),
    ].join("\n");
    const n = (await importFile(t, "ndjson", nd)).done;
    expect(n).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(n.errors.map((e: any) => e.position)).toEqual(["line 2", "line 3"]);
  });

  it("GET /api/v1/imports lists the tenant's imports newest first, a page at a time; a lost one is answered failed", async () => {
    const t = await createTestTenant(server);
    const first = await importFile(t, "disqus", disqusXml(THREADS, POSTS));
    const second = await importFile(t, "disqus", disqusXml(THREADS, POSTS));
    const page = await t.api.get("/api/v1/imports?limit=1");
    expect(page.status).toBe(200);
    expect(page.body.items.map((i: { id: string }) => i.id)).toEqual([second.done.id]);
    const next = await t.api.get(`/api/v1/imports?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(next.body.items.map((i: { id: string }) => i.id)).toEqual([first.done.id]);
    expect((await (await createTestTenant(server)).api.get("/api/v1/imports")).body.items).toEqual([]);
    expect((await t.api.get("/api/v1/imports?limit=500")).status).toBe(422);

    // an import whose process died: running, and untouched for more than a minute
    const lost = await prisma().import.create({
      data: { id: "imp_lost", tenantId: t.tenantId, format: "disqus", updatedAt: new Date(Date.now() - 5 * 60_000) },
    });
    const alive = await prisma().import.create({
      data: { id: "imp_alive", tenantId: t.tenantId, format: "disqus", updatedAt: new Date() },
    });
    const l = await t.api.get(`/api/v1/imports/${lost.id}`);
    expect(l.body).toMatchObject({ state: "failed", failure: expect.stringMatching(/^interrupted: /) });
    expect(l.body.finishedAt).not.toBeNull();
    expect((await t.api.get(`/api/v1/imports/${alive.id}`)).body.state).toBe("running");
  });

  it("the OpenAPI document describes the routes", async () => {
    const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as any;
    expect(doc.paths["/api/v1/imports"].post.responses["202"]).toBeDefined();
    expect(doc.paths["/api/v1/imports"].get.responses["200"]).toBeDefined();
    expect(doc.paths["/api/v1/imports/{id}"].get.responses["200"]).toBeDefined();
    expect(Object.keys(doc.paths["/api/v1/export"].get.responses["200"].content)).toEqual(["application/x-ndjson"]);
  });
});
