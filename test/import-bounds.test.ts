// Imports bounded, through the real server: hostile files (elements nested millions deep, a
// message of `<a href="` repeated) end as designed while the server's other requests keep being
// answered; a body longer than the tenant's maxBodyLength is a bad record in every format; an
// NDJSON file's avatar and discussion urls follow the API's http(s) rule; upload files a crashed
// process left in the temporary directory are removed when a server starts, live ones kept.
import { stat, utimes, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { importFinished, postImport } from "./support/imports.js";
import { disqusXml, wxr } from "./support/import-files.js";
import { XML_LIMITS } from "../src/modules/portability/xml-reader.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const post = (t: TestTenant, format: string, body: string | Buffer, query = "") => postImport(server, t, format, body, query);
const finished = importFinished;

async function importFile(t: TestTenant, format: string, body: string, query = "") {
  return finished(t, await post(t, format, body, query));
}

const ndjson = (tenantId: string, records: object[]) =>
  [{ type: "export", version: 1, tenantId, exportedAt: "2024-01-01T00:00:00Z" }, ...records].map((r) => JSON.stringify(r)).join("\n") +
  "\n";

describe("hostile files", () => {
  it('nesting millions deep and a message of `<a href="` repeated end as designed while every other request is answered', async () => {
    const t = await createTestTenant(server);
    await t.api.put("/api/v1/discussions/calm", { title: "Calm" });

    // 3,000,000 levels (9 MB): the whole tree in memory took the server past its heap
    const head = disqusXml([{ id: "t1", identifier: "deep-1", link: "https://x.example/deep", title: "Deep" }], []).replace(
      "</disqus>\n",
      "",
    );
    const opening = `${head}  <post dsq:id="d1">\n    <message>`;
    const deep = Buffer.concat([
      Buffer.from(opening),
      Buffer.alloc(3 * 3_000_000, "<b>"),
      Buffer.from("</message>\n  </post>\n</disqus>\n"),
    ]);
    // 25 KB of `<a href="` (a backtracking regex took tens of seconds on it) between two plain posts
    const hrefs = disqusXml(
      [{ id: "t1", identifier: "href-1", link: "https://x.example/href", title: "Hrefs" }],
      [
        { id: "h1", thread: "t1", message: "<p>before</p>", author: { name: "A", username: "a" } },
        { id: "h2", thread: "t1", message: '<a href="'.repeat(2_800), author: { name: "B", username: "b" } },
        { id: "h3", thread: "t1", message: "after", author: { name: "C", username: "c" } },
      ],
    );

    // ordinary requests, one after the other, for as long as the imports run
    const slowest: number[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        const started = Date.now();
        const [health, discussion] = await Promise.all([
          fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) }),
          t.api.get("/api/v1/discussions/calm"),
        ]);
        expect(health.status).toBe(200);
        expect(discussion.status).toBe(200);
        slowest.push(Date.now() - started);
        await new Promise((ok) => setTimeout(ok, 20));
      }
    })();
    try {
      const [deepId, hrefId] = await Promise.all([post(t, "disqus", deep), post(t, "disqus", hrefs)]);
      const [deepDone, hrefDone] = await Promise.all([finished(t, deepId), finished(t, hrefId)]);

      expect(deepDone).toMatchObject({ state: "failed", comments: 0, skipped: 1 });
      expect(deepDone.failure).toMatch(
        new RegExp(`^line ${opening.split("\n").length}, column \\d+: elements nested deeper than ${XML_LIMITS.depth}$`),
      );
      expect(deepDone.bytesRead).toBeLessThan(deep.length);

      // the markup is an unfinished tag: no text is left, so the post is a bad record
      expect(hrefDone).toMatchObject({ state: "succeeded", comments: 2, skipped: 1 });
      expect(hrefDone.errors).toEqual([
        { position: expect.stringMatching(/^line \d+, column \d+$/), message: '<post dsq:id="h2">: <message> is empty' },
      ]);
    } finally {
      running = false;
      await loop;
    }
    expect(slowest.length).toBeGreaterThan(0);
    expect(Math.max(...slowest)).toBeLessThan(2_000);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const page = await t.api.get("/api/v1/discussions/href-1/comments");
    expect(page.body.items.map((c: any) => c.body).sort()).toEqual(["after", "before"]);
  });
});

describe("body length", () => {
  it("a body longer than the tenant's maxBodyLength is an error listed for its record, which is skipped, in every format", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { maxBodyLength: 50 })).status).toBe(200);
    const fits = "f".repeat(50);
    const long = "l".repeat(51);
    const tooLong = `its body is 51 characters, longer than maxBodyLength (50)`;

    const dq = await importFile(
      t,
      "disqus",
      disqusXml(
        [{ id: "t1", identifier: "len-dq", link: "https://x.example/dq", title: "DQ" }],
        [
          { id: "p1", thread: "t1", message: fits, author: { name: "A", username: "a" } },
          { id: "p2", thread: "t1", message: `<p>${long}</p>`, author: { name: "A", username: "a" } },
        ],
      ),
    );
    expect(dq).toMatchObject({ state: "succeeded", comments: 1, skipped: 1 });
    expect(dq.errors).toEqual([{ position: expect.stringMatching(/^line \d+, column \d+$/), message: tooLong }]);

    const wp = await importFile(
      t,
      "wordpress",
      wxr([
        {
          postId: "1",
          name: "len-wp",
          link: "https://x.example/wp",
          title: "WP",
          comments: [
            { id: "1", author: "A", content: fits, approved: "1" },
            { id: "2", author: "A", content: long, approved: "1" },
          ],
        },
      ]),
    );
    expect(wp).toMatchObject({ state: "succeeded", comments: 1, skipped: 1 });
    expect(wp.errors).toEqual([{ position: expect.stringMatching(/^line \d+, column \d+$/), message: tooLong }]);

    const comment = (id: string, body: string) => ({
      type: "comment",
      id,
      discussionId: "len-nd",
      author: { id: "r1", name: "R" },
      body,
      status: "approved",
      createdAt: "2024-01-01T00:00:00Z",
    });
    const nd = await importFile(
      t,
      "ndjson",
      ndjson("another-tenant", [
        { type: "discussion", id: "len-nd", createdAt: "2024-01-01T00:00:00Z" },
        comment("c1", fits),
        comment("c2", long),
        comment("c3", "x".repeat(3_900_000)),
      ]),
    );
    expect(nd).toMatchObject({ state: "succeeded", comments: 1, skipped: 2 });
    expect(nd.errors).toEqual([
      { position: "line 4", message: tooLong },
      { position: "line 5", message: "its body is 3900000 characters, longer than maxBodyLength (50)" },
    ]);

    for (const d of ["len-dq", "len-wp", "len-nd"]) {
      const page = await t.api.get(`/api/v1/discussions/${d}/comments`);
      expect(page.body.items.map((c: any) => c.body)).toEqual([fits]);
    }

    const stop = await importFile(t, "ndjson", ndjson("another-tenant", [comment("c4", long), comment("c5", fits)]), "&onError=stop");
    expect(stop).toMatchObject({ state: "failed", failure: `line 2: ${tooLong}`, comments: 0 });
  });
});

describe("NDJSON urls", () => {
  it("an avatar or discussion url the API would refuse (not http(s)) is dropped to null; the record is kept", async () => {
    const t = await createTestTenant(server);
    const result = await importFile(
      t,
      "ndjson",
      ndjson("another-tenant", [
        { type: "discussion", id: "u-bad", url: "javascript:alert(1)", createdAt: "2024-01-01T00:00:00Z" },
        { type: "discussion", id: "u-good", url: "https://x.example/good", createdAt: "2024-01-01T00:00:00Z" },
        { type: "reader", id: "r-bad", name: "Bad", avatarUrl: "javascript:alert(2)", createdAt: "2024-01-01T00:00:00Z" },
        { type: "reader", id: "r-good", name: "Good", avatarUrl: "https://x.example/a.png", createdAt: "2024-01-01T00:00:00Z" },
        ...[
          ["c1", "u-bad", "r-bad", "data:image/svg+xml,<svg onload=alert(3)>"],
          ["c2", "u-good", "r-good", "https://x.example/a.png"],
          ["c3", "u-good", "r-other", `https://x.example/${"a".repeat(2_100)}`],
        ].map(([id, discussionId, author, avatarUrl]) => ({
          type: "comment",
          id,
          discussionId,
          author: { id: author, name: author, avatarUrl },
          body: `body ${id}`,
          status: "approved",
          createdAt: "2024-01-01T00:00:00Z",
        })),
      ]),
    );
    expect(result).toMatchObject({ state: "succeeded", threads: 2, comments: 3, skipped: 0, errors: [] });
    expect((await t.api.get("/api/v1/discussions/u-bad")).body.url).toBeNull();
    expect((await t.api.get("/api/v1/discussions/u-good")).body.url).toBe("https://x.example/good");
    const authors = async (d: string) =>
      Object.fromEntries(
        (await t.api.get(`/api/v1/discussions/${d}/comments`)).body.items.map((c: any) => [c.author.id, c.author.avatarUrl]),
      );
    expect(await authors("u-bad")).toEqual({ "r-bad": null });
    expect(await authors("u-good")).toEqual({ "r-good": "https://x.example/a.png", "r-other": null });
  });
});

describe("upload files left behind", () => {
  it("a server that starts removes the import files untouched for a minute, and keeps fresh ones", async () => {
    const stale = join(tmpdir(), `engagement-import-${randomUUID()}`);
    const fresh = join(tmpdir(), `engagement-import-${randomUUID()}`);
    const other = join(tmpdir(), `engagement-other-${randomUUID()}`);
    for (const f of [stale, fresh, other]) await writeFile(f, "<disqus/>");
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(stale, old, old);
    await utimes(other, old, old);
    const second = await startServer();
    try {
      await expect(stat(stale)).rejects.toMatchObject({ code: "ENOENT" });
      expect((await stat(fresh)).isFile()).toBe(true);
      expect((await stat(other)).isFile()).toBe(true);
    } finally {
      await second.stop();
      for (const f of [stale, fresh, other]) await rm(f, { force: true });
    }
  });
});
