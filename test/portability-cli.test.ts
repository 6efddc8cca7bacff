// `engagement import` and `engagement export` (contract section 16): a Disqus file imported with a
// JSON summary (and a stop on a bad record exiting 1), the tenant exported as NDJSON on standard
// output and imported back into a fresh tenant; the import is visible at GET /api/v1/imports/{id}.
// Run in the test's process (test/support/cli-in-process.ts); one run of the real bin reads a file
// from standard input.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { disqusXml } from "./support/import-files.js";

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
  for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
  return env;
}
const cli = (...args: string[]) => runCliInProcess(args, cliEnv());

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer();
  dir = mkdtempSync(join(tmpdir(), "import-cli-"));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const THREADS = [{ id: "t1", identifier: "cli-article", link: "https://cli.example/a", title: "CLI article" }];
const POSTS = [
  { id: "c2", thread: "t1", parent: "c1", message: "reply", author: { name: "Bo", username: "bo" } },
  { id: "c1", thread: "t1", message: "top", author: { name: "Al", username: "al", email: "al@cli.example" } },
];

describe("engagement import / export", { timeout: 120_000 }, () => {
  it("import --json prints one summary object; the import is a resource of the API; a re-run changes nothing", async () => {
    const t = await createTestTenant(server);
    const file = join(dir, "disqus.xml");
    writeFileSync(file, disqusXml(THREADS, POSTS));
    const r = await cli("import", "--tenant", t.tenantId, "--format", "disqus", "--keep-emails", "--json", file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ state: "succeeded", threads: 1, comments: 2, readers: 2, skipped: 0, errors: [], failure: null });
    expect(summary.importId).toMatch(/^imp_/);
    const job = await t.api.get(`/api/v1/imports/${summary.importId}`);
    expect(job.body).toMatchObject({ state: "succeeded", comments: 2, format: "disqus", keepEmails: true, bytesRead: job.body.bytesTotal });
    const al = await server.app.runtime.services.prisma.reader.findFirst({ where: { tenantId: t.tenantId, id: "disqus:al" } });
    expect(al?.email).toBe("al@cli.example");
    expect((await t.api.get("/api/v1/discussions/cli-article")).body.commentCount).toBe(2);

    const again = await cli("import", "--tenant", t.tenantId, "--format", "disqus", file);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/succeeded .*: 0 threads, 0 comments, 0 readers, 0 reactions created; 2 already there; 0 skipped/);
  });

  it("--on-error stop exits 1 at the bad record's position; bad arguments are refused", async () => {
    const t = await createTestTenant(server);
    const file = join(dir, "bad.xml");
    writeFileSync(file, disqusXml(THREADS, [...POSTS, { id: "c3", thread: "t1", message: "", author: { name: "X", username: "x" } }]));
    const r = await cli("import", "--tenant", t.tenantId, "--format", "disqus", "--on-error", "stop", "--json", file);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: "failed", comments: 2, skipped: 1 });
    expect(r.stderr).toMatch(/stopped at line \d+, column \d+: .*<message> is empty/);
    expect((await cli("import", "--tenant", t.tenantId, "--format", "rss", file)).stderr).toMatch(
      /--format must be one of disqus, wordpress, ndjson/,
    );
    expect((await cli("import", "--tenant", "ten_nope", "--format", "disqus", file)).stderr).toMatch(/No tenant with id ten_nope/);
  });

  it("a --format that does not match the file exits 1 naming the format found, writing nothing; a broken file exits 1 at its position; --id-from path", async () => {
    const t = await createTestTenant(server);
    const file = join(dir, "wrong.xml");
    writeFileSync(file, disqusXml(THREADS, POSTS));
    const r = await cli("import", "--tenant", t.tenantId, "--format", "wordpress", "--json", file);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: "failed", comments: 0, failure: "this file is a Disqus export, not wordpress" });
    expect(r.stderr).toMatch(/failed: this file is a Disqus export, not wordpress/);
    const broken = join(dir, "broken.xml");
    writeFileSync(broken, disqusXml(THREADS, POSTS).replace("<name>Al</name>", "<name>Al & Co</name>"));
    const b = await cli("import", "--tenant", t.tenantId, "--format", "disqus", "--json", broken);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/stopped at line \d+, column \d+: not well-formed XML: a bare &/);
    expect(await server.app.runtime.services.prisma.comment.count({ where: { tenantId: t.tenantId } })).toBe(0);
    const p = await cli("import", "--tenant", t.tenantId, "--format", "disqus", "--id-from", "path", "--json", file);
    expect(p.code, p.stderr).toBe(0);
    expect((await t.api.get("/api/v1/discussions/a")).body).toMatchObject({ title: "CLI article", commentCount: 2 });
  });

  it("export writes NDJSON on stdout that imports into a fresh tenant (from standard input, with the real bin)", async () => {
    const a = await createTestTenant(server);
    const ann = await a.reader("ann", { name: "Ann" });
    const root = (await ann.post("/api/v1/discussions/cli-x/comments", { body: "hello" })).body;
    await ann.post("/api/v1/discussions/cli-x/comments", { body: "again", parentId: root.id });
    const out = await cli("export", "--tenant", a.tenantId);
    expect(out.code, out.stderr).toBe(0);
    const records = out.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ type: "export", version: 2, tenantId: a.tenantId });
    expect(records.filter((r) => r.type === "comment").map((r) => r.body)).toEqual(["hello", "again"]);

    const b = await createTestTenant(server);
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["bin/engagement.js", "import", "--tenant", b.tenantId, "--format", "ndjson", "--json", "-"], {
        env: cliEnv(),
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(out.stdout);
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: "succeeded", threads: 1, comments: 2, readers: 1 });
    const d = await b.api.get("/api/v1/discussions/cli-x");
    expect(d.body.commentCount).toBe(2);
  });
});
