// Import fidelity (contract sections 16 and 22) through the real server: each imported comment
// shows the author name its source gives it though readers are merged by email (REST, GraphQL, the
// moderation queue, a moderation event's comment, the export and its re-import), and erasure takes
// that name too; a file that is not well-formed fails at its first error's line and column and
// writes nothing (truncated, a control character, a bare `&`, a mismatched tag), and the fixed file
// imports whole; whitespace and a BOM before `<?xml` are fine; a file of another format fails naming
// it; a source comment id twice is an error for the second; WordPress post dates fall back to
// post_date; a Disqus thread marked deleted is skipped and counted; idFrom=path; WXR 1.0–1.2 with
// replies ten deep, pingbacks and trackbacks left out; Cyrillic.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { disqusXml, wxr, type DisqusPost, type WxrItem } from "./support/import-files.js";
import { TestCommentsDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const prisma = () => server.app.runtime.services.prisma;

async function importFile(t: TestTenant, format: string, body: string | Uint8Array<ArrayBuffer>, query = "") {
  const res = await fetch(`${server.url}/api/v1/imports?format=${format}${query}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey, "content-type": "application/octet-stream" },
    body,
  });
  const accepted = (await res.json()) as any;
  expect(res.status, JSON.stringify(accepted)).toBe(202);
  for (let i = 0; i < 400; i++) {
    const r = await t.api.get(`/api/v1/imports/${accepted.id}`);
    if (r.body.state !== "running") return r.body;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error("the import did not finish");
}

/** what the tenant holds: discussions, readers and comments */
async function holdings(t: TestTenant) {
  const where = { tenantId: t.tenantId };
  const [discussions, readers, comments] = await Promise.all([
    prisma().discussion.count({ where }),
    prisma().reader.count({ where }),
    prisma().comment.count({ where }),
  ]);
  return { discussions, readers, comments };
}

/** every comment of a discussion as REST lists it (all statuses a moderator sees) */
async function namesOf(t: TestTenant, discussion: string) {
  const names = new Map<string, string>();
  for (const status of ["approved", "pending", "rejected"]) {
    const res = await t.api.get(`/api/v1/discussions/${discussion}/comments?status=${status}&limit=100`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const c of res.body.items) names.set(c.body, c.author.name);
  }
  return names;
}

// WordPress's theme test data: nine people writing from one address
const SHARED = "shared@example.org";
const PEOPLE = ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan"];

describe("author names", () => {
  it("each imported comment shows its source's author name though its reader is merged by email: REST, GraphQL, moderation, events, export and re-import", async () => {
    const t = await createTestTenant(server);
    const items: WxrItem[] = [
      {
        postId: "10",
        name: "shared-names",
        link: "https://wp.example/shared-names/",
        title: "Shared names",
        comments: PEOPLE.map((name, i) => ({
          id: String(100 + i),
          author: name,
          email: SHARED,
          content: `words of ${name}`,
          approved: i === 8 ? "0" : "1",
        })),
      },
    ];
    const done = await importFile(t, "wordpress", wxr(items));
    expect(done).toMatchObject({ state: "succeeded", comments: 9, readers: 1 });
    const names = await namesOf(t, "shared-names");
    for (const name of PEOPLE) expect(names.get(`words of ${name}`)).toBe(name);

    // GraphQL
    const gql = await t.api.gql(TestCommentsDocument, { discussionId: "shared-names", limit: 100 });
    for (const c of gql.data!.comments.items) expect(c.author.name).toBe(c.body.replace("words of ", ""));
    // authorName: the comment's own, for clients that cache the one reader by id (author.name would collapse there)
    const named = await t.api.post("/graphql", {
      query: `{ comments(discussionId: "shared-names", limit: 100) { items { body authorName author { id } } } }`,
    });
    const shown = named.body.data.comments.items as { body: string; authorName: string; author: { id: string } }[];
    expect(new Set(shown.map((c) => c.author.id)).size).toBe(1);
    for (const c of shown) expect(c.authorName).toBe(c.body.replace("words of ", ""));

    // the moderation queue, and the event a moderation appends
    const queue = await t.api.get("/api/v1/comments?status=pending");
    expect(queue.body.items.map((c: any) => [c.body, c.author.name])).toEqual([["words of Ivan", "Ivan"]]);
    const ivan = queue.body.items[0];
    expect((await t.api.post(`/api/v1/comments/${ivan.id}/approve`, {})).status).toBe(200);
    const events = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, discussionId: "shared-names" } });
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect((e.payload as any).data.comment.author.name).toBe("Ivan");
    const one = await t.api.get(`/api/v1/comments/${ivan.id}`);
    expect(one.body.author).toEqual((events[0]!.payload as any).data.comment.author);

    // comments an import wrote before names were kept gain them when the file is imported again
    await prisma().comment.updateMany({ where: { tenantId: t.tenantId }, data: { authorName: null } });
    expect(new Set((await namesOf(t, "shared-names")).values()).size).toBe(1);
    expect(await importFile(t, "wordpress", wxr(items))).toMatchObject({ state: "succeeded", comments: 0, unchanged: 9 });
    const renamed = await namesOf(t, "shared-names");
    for (const name of PEOPLE) expect(renamed.get(`words of ${name}`)).toBe(name);

    // export, and its re-import into a fresh tenant
    const exported = await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": t.apiKey } });
    const ndjson = await exported.text();
    const fresh = await createTestTenant(server);
    expect(await importFile(fresh, "ndjson", ndjson)).toMatchObject({ state: "succeeded", comments: 9 });
    const again = await namesOf(fresh, "shared-names");
    for (const name of PEOPLE) expect(again.get(`words of ${name}`)).toBe(name);
  });

  it("Disqus guests sharing an anonymous address keep their own names (the reader's privacy export holds them); erasing their reader takes the names too", async () => {
    const t = await createTestTenant(server);
    const guests: DisqusPost[] = ["Гость Иван", "Guest Mary", "Guest Tom"].map((name, i) => ({
      id: `g${i}`,
      thread: "t1",
      message: `<p>сообщение ${i}</p>`,
      author: { name, email: "guest@disqus.example", anonymous: true },
    }));
    const file = disqusXml([{ id: "t1", identifier: "guests", link: "https://d.example/guests", title: "Гости" }], guests);
    expect(await importFile(t, "disqus", file)).toMatchObject({ state: "succeeded", comments: 3, readers: 1 });
    const names = await namesOf(t, "guests");
    expect([...names.entries()].sort()).toEqual([
      ["сообщение 0", "Гость Иван"],
      ["сообщение 1", "Guest Mary"],
      ["сообщение 2", "Guest Tom"],
    ]);
    expect((await t.api.get("/api/v1/discussions/guests")).body.title).toBe("Гости");

    const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId } });
    const reader = rows[0]!.authorId;
    expect(new Set(rows.map((r) => r.authorId))).toEqual(new Set([reader]));
    // the reader's own export holds the names written on their comments
    const mine = await t.api.get(`/api/v1/readers/${encodeURIComponent(reader)}/export`);
    expect(mine.status).toBe(200);
    const profileName = mine.body.profile.name;
    expect(mine.body.comments.map((c: any) => c.authorName ?? profileName).sort()).toEqual(["Guest Mary", "Guest Tom", "Гость Иван"]);
    expect((await t.api.del(`/api/v1/readers/${encodeURIComponent(reader)}`)).status).toBe(204);
    const after = await prisma().comment.findMany({ where: { tenantId: t.tenantId } });
    expect(after.map((r) => [r.authorId, r.authorName])).toEqual([
      ["", null],
      ["", null],
      ["", null],
    ]);
    const shown = await t.api.get("/api/v1/discussions/guests/comments?limit=100");
    expect(shown.body.items.map((c: any) => c.author.name)).toEqual(["[erased]", "[erased]", "[erased]"]);
  });
});

const THREAD = { id: "t1", identifier: "broken", link: "https://d.example/broken", title: "Broken" };
const GOOD_POSTS: DisqusPost[] = Array.from({ length: 5 }, (_, i) => ({
  id: `b${i}`,
  thread: "t1",
  message: `fine ${i}`,
  author: { name: `N${i}`, username: `u${i}` },
}));
const GOOD = disqusXml([THREAD], GOOD_POSTS);
/** the 1-based line of the first line of `text` holding `needle` */
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("files that are not well-formed", () => {
  const cases: { name: string; file: string; line: number; column?: number; message: RegExp }[] = [
    (() => {
      const file = GOOD.slice(0, GOOD.indexOf("fine 3"));
      return { name: "truncated", file, line: file.split("\n").length, message: /not well-formed XML/ };
    })(),
    (() => {
      const file = GOOD.replace("fine 2", "fi\u0001ne 2");
      return { name: "a control character", file, line: lineOf(file, "fi\u0001ne"), message: /disallowed character/ };
    })(),
    (() => {
      const file = GOOD.replace("<name>N2</name>", "<name>N2 & co</name>");
      const line = lineOf(file, "N2 & co");
      return { name: "a bare &", file, line, column: file.split("\n")[line - 1]!.indexOf("&") + 1, message: /bare &/ };
    })(),
    (() => {
      const file = GOOD.replace("<name>N2</name>", "<name>N2</nam>");
      return { name: "a mismatched close tag", file, line: lineOf(file, "</nam>"), message: /unexpected close tag/ };
    })(),
  ];
  for (const c of cases) {
    it(`${c.name}: fails at its line and column with that one error, writes nothing; the fixed file imports whole`, async () => {
      const t = await createTestTenant(server);
      const done = await importFile(t, "disqus", c.file);
      expect(done.state).toBe("failed");
      expect(done.errors).toHaveLength(1);
      expect(done.errors[0].message).toMatch(c.message);
      expect(done.errors[0].position).toMatch(new RegExp(`^line ${c.line}, column ${c.column ?? "\\d+"}$`));
      expect(done.failure).toBe(`${done.errors[0].position}: ${done.errors[0].message}`);
      expect(done).toMatchObject({ threads: 0, comments: 0, readers: 0 });
      expect(await holdings(t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
      expect(await importFile(t, "disqus", GOOD)).toMatchObject({ state: "succeeded", threads: 1, comments: 5, readers: 5 });
    });
  }

  it("an error past the first read chunk (256 KiB) writes nothing either, and is reported where it stands", async () => {
    const t = await createTestTenant(server);
    const posts: DisqusPost[] = Array.from({ length: 600 }, (_, i) => ({
      id: `m${i}`,
      thread: "t1",
      message: `message ${i} ${"x".repeat(600)}`,
      author: { name: `M${i}`, username: `m${i}` },
    }));
    const good = disqusXml([THREAD], posts);
    const file = good.replace("<name>M500</name>", "<name>M500 & sons</name>");
    expect(file.indexOf("M500 &")).toBeGreaterThan(256 * 1024);
    const done = await importFile(t, "disqus", file);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.errors[0].position).toMatch(new RegExp(`^line ${lineOf(file, "M500 &")}, column \\d+$`));
    expect(await holdings(t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });

  it("whitespace and a byte order mark before <?xml are fine; positions still count them", async () => {
    const t = await createTestTenant(server);
    const bom = new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`\n\n  ${GOOD}`)]));
    expect(await importFile(t, "disqus", bom)).toMatchObject({ state: "succeeded", comments: 5, errors: [] });
    const bad = `\n\n${GOOD.replace("<name>N1</name>", "<name>N1 & co</name>")}`;
    const done = await importFile(t, "disqus", bad);
    expect(done.errors[0].position).toMatch(new RegExp(`^line ${lineOf(bad, "N1 & co")}, column \\d+$`));
  });
});

describe("formats, ids and dates", () => {
  it("a file of another format is refused naming the format it is (422), and writes nothing", async () => {
    const t = await createTestTenant(server);
    const wp = wxr([{ postId: "1", name: "p", link: "https://wp.example/p/", title: "P", comments: [] }]);
    const post = (format: string, body: string) => t.api.raw("POST", `/api/v1/imports?format=${format}`, body);
    const cases: [string, string, string][] = [
      ["disqus", wp, "is a WordPress export (WXR), not disqus"],
      ["wordpress", GOOD, "is a Disqus export, not wordpress"],
      ["disqus", '{"type":"export"}\n', "is an NDJSON export of this service, not disqus"],
    ];
    for (const [format, body, message] of cases) {
      const r = await post(format, body);
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual([{ path: "body", message }]);
    }
    expect(await holdings(t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });

  it("a source comment id twice in one file is an error listed for the second", async () => {
    const t = await createTestTenant(server);
    const file = disqusXml(
      [THREAD],
      [...GOOD_POSTS, { id: "b1", thread: "t1", message: "the same id", author: { name: "Dup", username: "dup" } }],
    );
    const done = await importFile(t, "disqus", file);
    expect(done).toMatchObject({ state: "succeeded", comments: 5, skipped: 1 });
    const lines = file.split("\n");
    const [first, second] = lines.flatMap((l, i) => (l.includes('<post dsq:id="b1">') ? [i + 1] : []));
    expect(done.errors).toEqual([
      {
        position: expect.stringMatching(new RegExp(`^line ${second}, column \\d+$`)),
        message: expect.stringMatching(new RegExp(`^the comment id is already in this file \\(at line ${first}, column \\d+\\): skipped$`)),
      },
    ]);
    // the first is the one kept
    expect(await prisma().comment.count({ where: { tenantId: t.tenantId, body: "the same id" } })).toBe(0);
  });

  it("WXR 1.0, 1.1 and 1.2: replies ten deep, pingbacks and trackbacks left out, pending and spam; post dates fall back to post_date", async () => {
    for (const version of ["1.0", "1.1", "1.2"]) {
      const t = await createTestTenant(server);
      const chain = Array.from({ length: 11 }, (_, i) => ({
        id: String(i + 1),
        ...(i > 0 ? { parent: String(i) } : {}),
        author: `Пишущий ${i}`,
        email: `w${i}@wp.example`,
        content: `<p>уровень ${i}</p>`,
        approved: "1",
      }));
      const items: WxrItem[] = [
        {
          postId: "7",
          name: "deep",
          link: "https://wp.example/deep/",
          title: "Глубоко",
          postDateGmt: "0000-00-00 00:00:00",
          postDate: "2020-05-06 07:08:09",
          comments: [
            ...chain,
            { id: "50", author: "Pinger", content: "a ping", approved: "1", type: "pingback" },
            { id: "51", author: "Tracker", content: "a track", approved: "1", type: "trackback" },
            { id: "52", author: "Waiting", content: "pending words", approved: "0" },
            { id: "53", author: "Spammer", content: "spam words", approved: "spam" },
          ],
        },
      ];
      const done = await importFile(t, "wordpress", wxr(items, version));
      expect(done, version).toMatchObject({ state: "succeeded", threads: 1, comments: 13, skipped: 0, errors: [] });
      const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId }, orderBy: { depth: "asc" } });
      expect(rows.filter((r) => r.body.startsWith("уровень")).map((r) => r.depth)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(rows.find((r) => r.body === "pending words")?.status).toBe("pending");
      expect(rows.find((r) => r.body === "spam words")?.status).toBe("rejected");
      expect(rows.some((r) => r.body === "a ping" || r.body === "a track")).toBe(false);
      const d = await prisma().discussion.findFirst({ where: { tenantId: t.tenantId, id: "deep" } });
      expect(d?.createdAt.toISOString()).toBe("2020-05-06T07:08:09.000Z");
      expect(d?.title).toBe("Глубоко");
    }
  });

  it("a Disqus thread marked deleted is not imported: its comments are skipped and counted; closed threads are locked; deleted and spam posts", async () => {
    const t = await createTestTenant(server);
    const threads = [
      { id: "t1", identifier: "live", link: "https://d.example/live", title: "Live" },
      { id: "t2", identifier: "gone", link: "https://d.example/gone", title: "Gone", deleted: true },
      { id: "t3", identifier: "closed", link: "https://d.example/closed", title: "Closed", closed: true },
    ];
    const posts: DisqusPost[] = [
      { id: "a", thread: "t1", message: "alive", author: { name: "A", username: "a" } },
      { id: "b", thread: "t2", message: "in a deleted thread", author: { name: "B", username: "b" } },
      { id: "c", thread: "t2", message: "also there", author: { name: "C", username: "c" } },
      { id: "d", thread: "t3", message: "closed words", author: { name: "D", username: "d" } },
      { id: "e", thread: "t3", message: "", deleted: true, author: { name: "E", username: "e" } },
      { id: "f", thread: "t1", message: "buy now", spam: true, author: { name: "F", username: "f" } },
    ];
    const done = await importFile(t, "disqus", disqusXml(threads, posts));
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 4, skipped: 2, errors: [] });
    expect((await t.api.get("/api/v1/discussions/gone")).status).toBe(404);
    expect((await t.api.get("/api/v1/discussions/closed")).body.state).toBe("locked");
    const rows = await prisma().comment.findMany({ where: { tenantId: t.tenantId } });
    expect(rows.map((r) => [r.body, r.status]).sort()).toEqual([
      ["", "deleted"],
      ["alive", "approved"],
      ["buy now", "rejected"],
      ["closed words", "approved"],
    ]);
  });

  it("idFrom=path takes discussion ids from the URL's path", async () => {
    const t = await createTestTenant(server);
    const file = disqusXml(
      [
        { id: "t1", identifier: "ident-1", link: "https://blog.example/2024/01/hello-world/?utm=x", title: "Hello" },
        { id: "t2", identifier: "ident-2", link: "https://blog.example/", title: "Home" },
      ],
      [
        { id: "p1", thread: "t1", message: "hi", author: { name: "A", username: "a" } },
        { id: "p2", thread: "t2", message: "home", author: { name: "A", username: "a" } },
      ],
    );
    expect(await importFile(t, "disqus", file, "&idFrom=path")).toMatchObject({ state: "succeeded", threads: 2, comments: 2 });
    expect((await t.api.get("/api/v1/discussions/2024-01-hello-world")).body.title).toBe("Hello");
    // a URL without a path falls back to the identifier
    expect((await t.api.get("/api/v1/discussions/ident-2")).body.title).toBe("Home");
  });
});
