// After switching in (contract section 27), in headless Chromium: a page at a source thread's URL with
// nothing but the README's two lines (the script and `<engagement-thread publishable-key>`) shows that
// thread's imported comments — for a real file of each format whose threads name their page (Disqus,
// WordPress, remark42, Commento, isso with its site, Artalk, Twikoo, Cusdis). The browser is at the source's own address
// (Playwright answers for the site's origin; the thread's calls go to the service on loopback). And a
// page whose first comment came before the import shows both. Screenshots in a scratch folder.
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";
import { IMPORT_FIXTURES, MORE } from "../support/import-readings.js";
import { importFinished, postImport } from "../support/imports.js";
import { CUSDIS_ROWS, cusdisFile } from "../support/cusdis.js";

const SHOTS = join(tmpdir(), "engagement-embed-shots");
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** Each format's real file and a page of it (a thread with comments). */
const SOURCES = [
  { format: "disqus", file: `${IMPORT_FIXTURES}disqus-radiot-2017.xml`, page: "https://radio-t.com/p/2011/03/05/podcast-229/" },
  { format: "wordpress", file: `${IMPORT_FIXTURES}wp-remark42.xml`, page: "https://realmenweardress.es/2010/07/do-you-rp/" },
  { format: "remark42", file: `${MORE}remark42/radiot-576.r42.gz`, page: "https://radio-t.com/p/2017/12/16/podcast-576/" },
  { format: "commento", file: `${MORE}commento/remark42-migrator-commento.json`, page: "https://example.com/blog/post/1" },
  {
    format: "isso",
    file: `${MORE}isso/isso-radiot-576.db`,
    page: "https://radio-t.com/p/2017/12/16/podcast-576/",
    query: "&site=https://radio-t.com",
  },
  { format: "artalk", file: `${MORE}artalk/artalk-docs-artrans.json`, page: "https://artalk.js.org/guide/transfer.html" },
  { format: "twikoo", file: `${MORE}twikoo/artransfer-twikoo.json`, page: "https://xn--qpru0x.cn/post/1" },
  // Cusdis has no export: its own empty database with rows added through its schema (test/support/cusdis.ts)
  {
    format: "cusdis",
    bytes: () => cusdisFile(CUSDIS_ROWS),
    page: "https://blog.example/posts/hello/",
    query: "&site=https://blog.example",
  },
] as const;

describe.skipIf(chromiumMissing)("a source thread's page after an import", () => {
  let browser: Browser | undefined;

  beforeAll(async () => {
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(() => browser?.close());

  /** A tenant that allows the page's origin, its publishable key, the file imported. */
  async function switchedIn(
    format: string,
    file: string | Uint8Array,
    page: string,
    query = "",
    before?: (t: TestTenant) => Promise<void>,
  ) {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [new URL(page).origin] })).status).toBe(200);
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    await before?.(t);
    const done = await importFinished(t, await postImport(server, t, format, typeof file === "string" ? readFileSync(file) : file, query));
    expect(done, JSON.stringify(done.errors)).toMatchObject({ state: "succeeded" });
    return { t, key };
  }

  /** The page at its own address, holding the README's two lines and nothing else. */
  async function openPage(page: string, key: string): Promise<Page> {
    // the site is public, the service on loopback: Chromium asks the reader before such a call (Local
    // Network Access); a deployed service is not on the reader's loopback, so the test grants it
    const p = await browser!.newPage({ viewport: { width: 900, height: 1000 }, permissions: ["local-network-access"] });
    // traffic stays on loopback: the sources' avatars (Gravatar's) are not fetched
    await p.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
    await p.route(`${new URL(page).origin}/**`, (route) =>
      route.fulfill({
        contentType: "text/html; charset=utf-8",
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A page</title></head><body>
<script src="${server.url}/embed/v1/thread.js"></script>
<engagement-thread publishable-key="${key}"></engagement-thread>
</body></html>`,
      }),
    );
    await p.goto(page);
    return p;
  }

  /** The discussion the service holds for the page, and the first of its comments in the thread's own order. */
  async function holding(t: TestTenant, page: string) {
    const found = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(page)}`);
    expect(found.status).toBe(200);
    const list = await t.api.get(`/api/v1/discussions/${encodeURIComponent(found.body.id as string)}/comments`);
    expect(list.status).toBe(200);
    const first = (list.body.items as { body: string; status: string }[]).find((c) => c.body.trim().length > 0);
    expect(first).toBeDefined();
    return {
      id: found.body.id as string,
      count: found.body.commentCount as number,
      firstLine: first!.body.split("\n")[0]!.trim().slice(0, 40),
    };
  }

  for (const s of SOURCES) {
    it(`${s.format}: the page at ${s.page} shows its imported comments`, async () => {
      const { t, key } = await switchedIn(s.format, "file" in s ? s.file : s.bytes(), s.page, "query" in s ? s.query : "");
      const held = await holding(t, s.page);
      expect(held.count).toBeGreaterThan(0);
      const p = await openPage(s.page, key);
      const thread = p.locator("engagement-thread");
      await thread.locator("article").filter({ hasText: held.firstLine }).first().waitFor({ timeout: 20_000 });
      expect(
        await p.evaluate(() => (document.querySelector("engagement-thread") as HTMLElement & { discussionId: string | null }).discussionId),
      ).toBe(held.id);
      expect(await thread.locator("article").count()).toBeGreaterThan(0);
      await screenshot(p, { path: join(SHOTS, `import-page-${s.format}.png`) });
      await p.close();
    });
  }

  it("a page whose first comment came before the import shows it beside the imported ones", async () => {
    const page = "https://radio-t.com/p/2017/12/16/podcast-576/";
    const { t, key } = await switchedIn("isso", `${MORE}isso/isso-radiot-576.db`, page, "&site=https://radio-t.com", async (t) => {
      // the page's own discussion, as its first comment made it
      expect((await t.api.put("/api/v1/discussions/podcast-576", { url: page })).status).toBe(201);
      const early = await t.reader("early", { name: "Early Bird" });
      expect((await early.post("/api/v1/discussions/podcast-576/comments", { body: "Written before the switch" })).status).toBe(201);
    });
    const held = await holding(t, page);
    expect(held.id).toBe("podcast-576");
    const p = await openPage(page, key);
    const thread = p.locator("engagement-thread");
    await thread.locator("article").filter({ hasText: "Written before the switch" }).waitFor({ timeout: 20_000 });
    await thread.locator("article").filter({ hasText: held.firstLine }).first().waitFor();
    await screenshot(p, { path: join(SHOTS, "import-page-attached.png") });
    await p.close();
  });
});
