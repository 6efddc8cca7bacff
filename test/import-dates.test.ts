// Dates outside what an import takes (years 1 to 9999: JavaScript and PostgreSQL both read and
// write them alike; src/modules/portability/source.ts) in every format, through the real server: a
// year 0, a year past 9999 (+275760 is JavaScript's last), a Unix time of 1e20 seconds, a negative
// one. Each is a bad record at its position, named by the source's own field, and skipped; the
// rest of the file is imported (never "failed on our side").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import initSqlJs from "sql.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { importFinished, postImport } from "./support/imports.js";
import { disqusXml, wxr } from "./support/import-files.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const importFile = async (t: TestTenant, format: string, body: string | Uint8Array) =>
  importFinished(t, await postImport(server, t, format, body));

const OUTSIDE = "outside the dates an import takes (years 1 to 9999)";
const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split("\n").length;

describe("dates out of range are bad records at their position", () => {
  it("Disqus and WordPress", async () => {
    const t = await createTestTenant(server);
    const dq = disqusXml(
      [{ id: "t1", identifier: "dates-dq", link: "https://x.example/dq", title: "DQ" }],
      [
        { id: "p1", thread: "t1", message: "fine", author: { name: "A", username: "a" } },
        { id: "p2", thread: "t1", message: "late", createdAt: "+275760-09-13T00:00:00Z", author: { name: "B", username: "b" } },
        { id: "p3", thread: "t1", message: "early", createdAt: "0000-01-01T00:00:00Z", author: { name: "C", username: "c" } },
      ],
    );
    const dqDone = await importFile(t, "disqus", dq);
    expect(dqDone).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(dqDone.errors).toEqual([
      {
        position: expect.stringMatching(new RegExp(`^line ${lineOf(dq, '<post dsq:id="p2">')}, column \\d+$`)),
        message: `<post dsq:id="p2">: <createdAt> is +275760-09-13T00:00:00.000Z, ${OUTSIDE}`,
      },
      {
        position: expect.stringMatching(new RegExp(`^line ${lineOf(dq, '<post dsq:id="p3">')}, column \\d+$`)),
        message: `<post dsq:id="p3">: <createdAt> is 0000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      },
    ]);

    const comments = [
      { id: "1", author: "A", content: "fine", approved: "1" },
      { id: "2", author: "B", content: "early", approved: "1" },
    ];
    // comment 2 written in year 0
    const wp = wxr([{ postId: "5", name: "dates-wp", link: "https://x.example/wp", title: "WP", comments }]).replace(
      /(<wp:comment_id>2<\/wp:comment_id>[\s\S]*?<wp:comment_date><!\[CDATA\[)[^\]]*(\]\]><\/wp:comment_date>\s*<wp:comment_date_gmt><!\[CDATA\[)[^\]]*/,
      "$10000-03-01 10:00:00$20000-03-01 10:00:00",
    );
    const wpDone = await importFile(t, "wordpress", wp);
    expect(wpDone).toMatchObject({ state: "succeeded", comments: 1, skipped: 1 });
    expect(wpDone.errors).toEqual([
      {
        position: expect.stringMatching(/^line \d+, column \d+$/),
        message: `<wp:comment> 2: <wp:comment_date_gmt> is 0000-03-01T10:00:00.000Z, ${OUTSIDE}`,
      },
    ]);
  });

  it("remark42, Commento, GitHub and the generic JSON", async () => {
    const t = await createTestTenant(server);
    const r42comment = (id: string, time: string, edit?: string) =>
      JSON.stringify({
        id,
        pid: "",
        text: `<p>${id}</p>`,
        orig: id,
        user: { name: "A", id: "u1" },
        locator: { site: "s", url: "https://x.example/r42" },
        score: 0,
        votes: {},
        time,
        ...(edit ? { edit: { time: edit, summary: "" } } : {}),
      });
    const r42 = [
      JSON.stringify({ version: 1, users: [], posts: [] }),
      r42comment("c1", "2024-01-01T00:00:00Z"),
      r42comment("c2", "+020000-01-01T00:00:00Z"),
      r42comment("c3", "2024-01-01T00:00:00Z", "+275760-09-13T00:00:00Z"),
    ].join("\n");
    const r42Done = await importFile(t, "remark42", r42);
    expect(r42Done).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(r42Done.errors).toEqual([
      { position: "line 3", message: `comment c2: time is +020000-01-01T00:00:00.000Z, ${OUTSIDE}` },
      { position: "line 4", message: `comment c3: edit.time is +275760-09-13T00:00:00.000Z, ${OUTSIDE}` },
    ]);

    const commento = JSON.stringify({
      version: 1,
      comments: [
        {
          commentHex: "a1",
          domain: "x.example",
          url: "/cm",
          markdown: "fine",
          creationDate: "2024-01-01T00:00:00Z",
          commenterHex: "anonymous",
        },
        {
          commentHex: "a2",
          domain: "x.example",
          url: "/cm",
          markdown: "early",
          creationDate: "0000-01-01T00:00:00Z",
          commenterHex: "anonymous",
        },
      ],
      commenters: [{ commenterHex: "h1", name: "Ann", joinDate: "+100000-01-01T00:00:00Z" }],
    });
    const cmDone = await importFile(t, "commento", commento);
    expect(cmDone).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(cmDone.errors).toEqual([
      {
        position: expect.stringMatching(/^line 1, column \d+ \(byte \d+\)$/),
        message: `comment a2: creationDate is 0000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      },
      {
        position: expect.stringMatching(/^line 1, column \d+ \(byte \d+\)$/),
        message: `commenter h1: joinDate is +100000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      },
    ]);

    const gh = JSON.stringify([
      {
        id: 1,
        body: "fine",
        issue_url: "https://api.github.com/repos/o/r/issues/1",
        created_at: "2024-01-01T00:00:00Z",
        user: { id: 7, login: "a" },
      },
      {
        id: 2,
        body: "early",
        issue_url: "https://api.github.com/repos/o/r/issues/1",
        created_at: "0000-01-01T00:00:00Z",
        user: { id: 7, login: "a" },
      },
      {
        id: 3,
        body: "edited late",
        issue_url: "https://api.github.com/repos/o/r/issues/1",
        created_at: "2024-01-01T00:00:00Z",
        updated_at: "+200000-01-01T00:00:00Z",
        user: { id: 7, login: "a" },
      },
    ]);
    const ghDone = await importFile(t, "github", gh);
    expect(ghDone).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(ghDone.errors).toEqual([
      {
        position: expect.stringMatching(/^line 1, column \d+ \(byte \d+\)$/),
        message: `comment 2: created_at is 0000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      },
      {
        position: expect.stringMatching(/^line 1, column \d+ \(byte \d+\)$/),
        message: `comment 3: updated_at is +200000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      },
    ]);

    const json = JSON.stringify([
      { type: "discussion", id: "dates-json", title: "JSON", createdAt: "0000-12-31T00:00:00Z" },
      { type: "comment", id: "j1", discussionId: "dates-json-2", authorId: "u1", body: "fine", createdAt: "2024-01-01T00:00:00Z" },
      { type: "comment", id: "j2", discussionId: "dates-json-2", authorId: "u1", body: "early", createdAt: "0000-01-01T00:00:00Z" },
      {
        type: "comment",
        id: "j3",
        discussionId: "dates-json-2",
        authorId: "u1",
        body: "edited early",
        createdAt: "2024-01-01T00:00:00Z",
        editedAt: "0000-01-01T00:00:00Z",
      },
    ]);
    const jsonDone = await importFile(t, "json", json);
    expect(jsonDone).toMatchObject({ state: "succeeded", comments: 1, skipped: 3 });
    expect(jsonDone.errors.map((e: any) => e.message)).toEqual([
      `discussion dates-json: createdAt is 0000-12-31T00:00:00.000Z, ${OUTSIDE}`,
      `comment j2: createdAt is 0000-01-01T00:00:00.000Z, ${OUTSIDE}`,
      `comment j3: editedAt is 0000-01-01T00:00:00.000Z, ${OUTSIDE}`,
    ]);
    for (const e of jsonDone.errors) expect(e.position).toMatch(/^line 1, column \d+ \(byte \d+\)$/);
  });

  it("isso: a Unix time of 1e20 seconds, one before year 1, a modified time past 9999", async () => {
    const t = await createTestTenant(server);
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    db.run(`CREATE TABLE threads (id INTEGER PRIMARY KEY, uri VARCHAR(256) UNIQUE, title VARCHAR(256));
      CREATE TABLE comments (tid REFERENCES threads(id), id INTEGER PRIMARY KEY, parent INTEGER, created FLOAT NOT NULL,
        modified FLOAT, mode INTEGER, text VARCHAR NOT NULL, author VARCHAR, email VARCHAR, likes INTEGER DEFAULT 0, dislikes INTEGER DEFAULT 0);
      INSERT INTO threads VALUES (1, '/dates/', 'Dates');
      INSERT INTO comments (tid, id, created, modified, mode, text) VALUES
        (1, 1, 1700000000, NULL, 1, 'fine'),
        (1, 2, 1e20, NULL, 1, 'far'),
        (1, 3, -70000000000, NULL, 1, 'early'),
        (1, 4, 1700000000, 300000000000, 1, 'edited late');`);
    const bytes = db.export();
    db.close();
    const done = await importFile(t, "isso", bytes);
    expect(done).toMatchObject({ state: "succeeded", comments: 1, skipped: 3 });
    expect(done.errors).toEqual([
      { position: "comments id 2", message: `created is 100000000000000000000 seconds, ${OUTSIDE}` },
      { position: "comments id 3", message: `created is -70000000000 seconds, ${OUTSIDE}` },
      { position: "comments id 4", message: `modified is 300000000000 seconds, ${OUTSIDE}` },
    ]);
  });
});
