// Switching in (contract section 25) from GitHub-backed comments (utterances, giscus) and from the
// generic JSON format: GitHub's REST JSON as `gh api --paginate` saves it (../shared/fixtures/
// import-more/github, SOURCES.txt) checked record by record against pages read here (the "]["
// between pages split where both halves parse); issues listed first name their threads by title
// and page, a locked one locked; reactions as votes and reaction counts; a cut file or one nested
// 100,000 deep fails at its byte and writes nothing. The generic format: a file valid against
// docs/import.schema.json in any order (a comment before its discussion and reader), statuses,
// pinned, votes, reactions, a deleted comment skipped; an empty array imports nothing; a cut one
// fails at its position; a bad record is skipped at its position. And one run of the CLI.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import {
  commentIdOf,
  discussionIdOfText,
  expectComments,
  holdings,
  importFile as importInto,
  MORE,
  pagesOf,
  type Expected,
} from "./support/import-readings.js";

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer();
  dir = mkdtempSync(join(tmpdir(), "import-more-"));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const importFile = (t: TestTenant, format: string, body: Uint8Array | string, query = "") => importInto(server, t, format, body, query);
const text = (name: string) => readFileSync(`${MORE}${name}`, "utf8");
const KINDS = ["laugh", "hooray", "confused", "heart", "rocket", "eyes"];

/** GitHub's comments read here (REST "issue comments" / "discussion comments" objects) */
function expectedOf(comments: any[]): Expected[] {
  return comments.map((c) => {
    const thread = (c.html_url as string).split("#")[0]!;
    const created = new Date(c.created_at);
    const updated = new Date(c.updated_at);
    const reactions = c.reactions ?? {};
    return {
      sourceId: String(c.id),
      discussionId: discussionIdOfText(thread.replace("https://github.com/", "")),
      parentSourceId: c.parent_id ? String(c.parent_id) : null,
      body: c.body.trim(),
      authorId: `github:${c.user.id}`,
      authorName: c.user.login,
      status: "approved",
      createdAt: created,
      editedAt: updated > created ? updated : null,
      upvotes: reactions["+1"] ?? 0,
      downvotes: reactions["-1"] ?? 0,
      reactionCounts: Object.fromEntries(KINDS.filter((k) => reactions[k] > 0).map((k) => [k, reactions[k]])),
    };
  });
}

describe("GitHub", () => {
  it("pages of a repository's issue comments: one discussion per issue, record by record; again: nothing changes", async () => {
    const raw = text("github/piotrmurach-github-paginated.json");
    const pages = pagesOf(raw);
    expect(pages).toHaveLength(2);
    const comments = pages.flat() as any[];
    expect(comments).toHaveLength(37);
    const issues = new Set(comments.map((c) => c.issue_url));
    expect(issues.size).toBe(14);
    const t = await createTestTenant(server);
    const done = await importFile(t, "github", raw);
    expect(done).toMatchObject({ format: "github", state: "succeeded", threads: 14, comments: 37, skipped: 0, errors: [] });
    await expectComments(server, t, "github", expectedOf(comments));
    const d = await t.api.get("/api/v1/discussions/piotrmurach-github-issues-61");
    expect(d.body).toMatchObject({
      url: "https://github.com/piotrmurach/github/issues/61",
      commentCount: 7 + comments.filter((c) => c.issue_url.endsWith("/61")).length - 7,
    });
    expect(await importFile(t, "github", raw)).toMatchObject({ comments: 0, threads: 0, unchanged: 37 });
  });

  it("webhook-era comments: an issue comment's reactions become votes and reaction counts; a discussion comment's reply is threaded", async () => {
    const issue = JSON.parse(text("github/octokit-webhooks-issue-comment.json")) as any[];
    const discussion = JSON.parse(text("github/octokit-webhooks-discussion-comment.json")) as any[];
    // reactions as GitHub counts them (the recorded payload has none): made here
    issue[0].reactions = { ...issue[0].reactions, total_count: 7, "+1": 3, "-1": 1, heart: 2, rocket: 1 };
    const reply = {
      ...discussion[0],
      id: discussion[0].id + 1,
      parent_id: discussion[0].id,
      body: "a reply",
      html_url: `${discussion[0].html_url}1`,
    };
    const all = [...issue, ...discussion, reply];
    const t = await createTestTenant(server);
    const done = await importFile(t, "github", `${JSON.stringify(issue)}${JSON.stringify([...discussion, reply])}`);
    expect(done).toMatchObject({ state: "succeeded", threads: 2, comments: 3, errors: [] });
    await expectComments(server, t, "github", expectedOf(all));
    const row = await t.api.get(`/api/v1/comments/${commentIdOf(t.tenantId, "github", String(issue[0].id))}`);
    expect(row.body).toMatchObject({ upvotes: 3, downvotes: 1, score: 2 });
  });

  it("issues listed before their comments name the threads: the title (utterances' page path) is the id, the body's URL the page, a locked issue locked", async () => {
    const comments = JSON.parse(text("github/piotrmurach-github-issue-61-comments.json")) as any[];
    const issue = {
      url: comments[0].issue_url,
      html_url: "https://github.com/piotrmurach/github/issues/61",
      number: 61,
      title: "posts/hello-world/",
      body: "# Hello world\n\n[https://blog.example/posts/hello-world/](https://blog.example/posts/hello-world/)\n\n<!-- utterances -->",
      locked: true,
      created_at: "2012-11-13T10:00:00Z",
    };
    const t = await createTestTenant(server);
    const done = await importFile(t, "github", `[${JSON.stringify(issue)}]\n${JSON.stringify(comments)}`);
    expect(done).toMatchObject({ state: "succeeded", threads: 1, comments: 7 });
    await expectComments(
      server,
      t,
      "github",
      expectedOf(comments).map((e) => ({ ...e, discussionId: "posts-hello-world" })),
    );
    const d = await t.api.get("/api/v1/discussions/posts-hello-world");
    expect(d.body).toMatchObject({ title: "posts/hello-world/", url: "https://blog.example/posts/hello-world/", state: "locked" });
  });

  it("a cut file fails at its byte, JSON nested 100,000 deep at the depth, an object that is not a list at once; none writes anything", async () => {
    const t = await createTestTenant(server);
    const cut = text("github/truncated-piotrmurach-github-issue-61-comments.json");
    const done = await importFile(t, "github", cut);
    expect(done).toMatchObject({ state: "failed", comments: 0 });
    expect(done.failure).toBe(
      `line 1, column ${Buffer.byteLength(cut) + 1} (byte 4895): the file ends inside a JSON value: it is truncated`,
    );
    const deep = await importFile(t, "github", `${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(deep.failure).toBe("line 1, column 65 (byte 64): not read: JSON nested deeper than 64");
    const fine = JSON.parse(text("github/octokit-webhooks-issue-comment.json"))[0];
    const object = await importFile(t, "github", `[${JSON.stringify(fine)}]{"message":"Not Found"}`);
    expect(object).toMatchObject({ state: "failed" });
    expect(object.failure).toMatch(/^line 1, column \d+ \(byte \d+\): not a list/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
  });
});

const GENERIC = [
  {
    type: "comment",
    id: "c2",
    discussionId: "hello-world",
    parentId: "c1",
    authorId: "u2",
    body: "a *reply*",
    createdAt: "2021-01-02T10:00:00Z",
    upvotes: 2,
    downvotes: 1,
  },
  {
    type: "comment",
    id: "c1",
    discussionId: "hello-world",
    authorId: "u1",
    authorName: "Ann (guest)",
    body: "first",
    createdAt: "2021-01-01T10:00:00.123Z",
    pinned: true,
    reactions: { like: 3, love: 1 },
  },
  {
    type: "discussion",
    id: "hello-world",
    title: "Hello, world",
    url: "https://blog.example/hello-world/",
    state: "locked",
    createdAt: "2021-01-01T00:00:00Z",
  },
  { type: "reader", id: "u1", name: "Ann", email: "Ann@Example.org" },
  { type: "reader", id: "u2", name: "Bo", avatarUrl: "javascript:alert(1)" },
  {
    type: "comment",
    id: "c3",
    discussionId: "hello-world",
    parentId: "c4",
    authorId: "u2",
    body: "to a deleted one",
    createdAt: "2021-01-03T10:00:00Z",
    status: "pending",
  },
  {
    type: "comment",
    id: "c4",
    discussionId: "hello-world",
    parentId: "c1",
    authorId: "u3",
    authorName: "Gone",
    body: "x",
    createdAt: "2021-01-02T11:00:00Z",
    status: "deleted",
  },
  {
    type: "comment",
    id: "c5",
    discussionId: "no record/here",
    authorId: "u3",
    authorName: "Cy",
    body: "spam",
    createdAt: "2021-01-04T10:00:00Z",
    status: "rejected",
    editedAt: "2021-01-05T10:00:00Z",
  },
];

describe("the generic JSON format", () => {
  it("a file valid against docs/import.schema.json imports in any order: names, threading, statuses, pinned, votes, reactions, a deleted one skipped; again: nothing changes", async () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(new URL("../docs/import.schema.json", import.meta.url), "utf8")));
    expect(validate(GENERIC), JSON.stringify(validate.errors)).toBe(true);
    expect(validate([{ type: "comment", id: "x" }])).toBe(false);

    const t = await createTestTenant(server);
    const done = await importFile(t, "json", JSON.stringify(GENERIC, null, 2), "&keepEmails=true");
    expect(done).toMatchObject({ format: "json", state: "succeeded", threads: 2, comments: 4, readers: 3, skipped: 1, errors: [] });
    const rows = await expectComments(server, t, "json", [
      {
        sourceId: "c1",
        discussionId: "hello-world",
        parentSourceId: null,
        body: "first",
        authorId: "u1",
        authorName: "Ann (guest)",
        status: "approved",
        createdAt: new Date("2021-01-01T10:00:00.123Z"),
        pinned: true,
        upvotes: 0,
        reactionCounts: { like: 3, love: 1 },
      },
      {
        sourceId: "c2",
        discussionId: "hello-world",
        parentSourceId: "c1",
        body: "a *reply*",
        authorId: "u2",
        authorName: "Bo",
        status: "approved",
        createdAt: new Date("2021-01-02T10:00:00Z"),
        upvotes: 2,
        downvotes: 1,
      },
      // its parent c4 is deleted: it hangs from c4's parent
      {
        sourceId: "c3",
        discussionId: "hello-world",
        parentSourceId: "c1",
        body: "to a deleted one",
        authorName: "Bo",
        status: "pending",
        createdAt: new Date("2021-01-03T10:00:00Z"),
      },
      {
        sourceId: "c5",
        discussionId: "no-record-here",
        parentSourceId: null,
        body: "spam",
        authorId: "u3",
        authorName: "Cy",
        status: "rejected",
        createdAt: new Date("2021-01-04T10:00:00Z"),
        editedAt: new Date("2021-01-05T10:00:00Z"),
      },
    ]);
    expect(rows.find((r) => r.body === "first")?.reactionTotal).toBe(4);
    const prisma = server.app.runtime.services.prisma;
    const readers = await prisma.reader.findMany({ where: { tenantId: t.tenantId }, orderBy: { id: "asc" } });
    expect(readers.map((r) => [r.id, r.name, r.email, r.avatarUrl])).toEqual([
      ["u1", "Ann", "ann@example.org", null],
      ["u2", "Bo", null, null],
      ["u3", "Cy", null, null],
    ]);
    expect((await t.api.get("/api/v1/discussions/hello-world")).body).toMatchObject({
      title: "Hello, world",
      state: "locked",
      url: "https://blog.example/hello-world/",
    });
    expect(await importFile(t, "json", JSON.stringify(GENERIC))).toMatchObject({
      threads: 0,
      comments: 0,
      readers: 0,
      unchanged: 4,
      skipped: 1,
    });
  });

  it("an empty array imports nothing; a cut array fails at its position and writes nothing; a bad record is skipped at its position", async () => {
    const t = await createTestTenant(server);
    expect(await importFile(t, "json", "[]")).toMatchObject({ state: "succeeded", threads: 0, comments: 0, skipped: 0, errors: [] });
    const whole = JSON.stringify(GENERIC, null, 1);
    const cut = await importFile(t, "json", whole.slice(0, whole.length / 2));
    expect(cut).toMatchObject({ state: "failed", comments: 0 });
    expect(cut.failure).toMatch(/^line \d+, column \d+ \(byte \d+\): the file ends inside a JSON value: it is truncated$/);
    expect(await holdings(server, t)).toEqual({ discussions: 0, readers: 0, comments: 0 });
    const bad = [GENERIC[2], { ...GENERIC[1], body: undefined }, GENERIC[0]];
    const lines = JSON.stringify(bad, null, 1).split("\n");
    const done = await importFile(t, "json", lines.join("\n"));
    const second = lines.findIndex((l, i) => l === " {" && i > 1 && lines.slice(0, i).filter((x) => x === " {").length === 1);
    expect(done).toMatchObject({ state: "succeeded", comments: 1, skipped: 1 });
    // the bad record, then the reply whose parent was that record
    expect(done.errors).toEqual([
      {
        position: `line ${second + 1}, column 2 (byte ${lines.slice(0, second).join("\n").length + 2})`,
        message: expect.stringMatching(/^body: /),
      },
      {
        position: expect.stringMatching(/^line \d+, column 2 /),
        message: "the parent c1 is not in this thread: kept as a top-level comment",
      },
    ]);
  });
});

describe("engagement import --format …", { timeout: 60_000 }, () => {
  it("the CLI imports an isso database and a remark42 backup, and the import's status names the format", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
    const t = await createTestTenant(server);
    const r = await runCliInProcess(
      [
        "import",
        "--tenant",
        t.tenantId,
        "--format",
        "isso",
        "--site",
        "https://tests.example",
        "--json",
        `${MORE}isso/isso-tests-disqus.db`,
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ state: "succeeded", threads: 2, comments: 4, skipped: 1 });
    expect((await t.api.get(`/api/v1/imports/${summary.importId}`)).body).toMatchObject({ format: "isso", state: "succeeded" });
    const cut = await runCliInProcess(
      ["import", "--tenant", t.tenantId, "--format", "remark42", `${MORE}remark42/truncated-radiot-576.r42.gz`],
      env,
    );
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/stopped at line 42 \(byte 5779 of the gzip file\): the gzip file ends early/);
    const file = join(dir, "wrong.json");
    writeFileSync(file, "[]");
    const wrong = await runCliInProcess(["import", "--tenant", t.tenantId, "--format", "yaml", file], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--format must be one of disqus, wordpress, ndjson, remark42, commento, isso, github, json/);
  });
});
