// <engagement-thread publishable-key> without discussion-id (contract section 27) in headless Chromium,
// on host pages of another origin with a strict CSP: it shows the discussion whose url is the page's
// (its <link rel="canonical">, else its address without the fragment; compared normalized), and on a
// page that has none yet an empty thread whose first comment creates the discussion with the page's
// URL and title, found by that URL afterwards. Screenshot in a scratch folder.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";

const SHOTS = join(tmpdir(), "engagement-embed-shots");
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("<engagement-thread> without discussion-id", () => {
  let browser: Browser | undefined;
  let host: Server;
  let origin = "";
  let key = "";
  const violations: string[] = [];

  beforeAll(async () => {
    key = (await t.admin.post("/api/v1/publishable-keys", { label: "pages" })).body.key as string;
    // a page per path: `?canonical=` puts that <link rel="canonical"> in its head
    host = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://host");
      const canonical = url.searchParams.get("canonical");
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'none'; script-src 'self' ${server.url}; connect-src ${server.url}; style-src 'self'; img-src data:`,
      });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${url.pathname}</title>
${canonical ? `<link rel="canonical" href="${canonical}">` : ""}</head><body><main><h1>Page ${url.pathname}</h1>
<engagement-thread publishable-key="${key}"></engagement-thread></main>
<script src="${server.url}/embed/v1/thread.js"></script></body></html>`);
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [origin] })).status).toBe(200);
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (host ? host.close(() => resolve()) : resolve()));
    expect(violations).toEqual([]);
  });

  async function open(path: string): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 900 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await p.goto(`${origin}${path}`);
    await p
      .locator("engagement-thread")
      .getByRole("heading", { name: /Comments/ })
      .waitFor();
    await p.locator("engagement-thread ol[part=comments]").waitFor({ state: "attached" });
    return p;
  }
  const thread = (p: Page) => p.locator("engagement-thread");
  const idOf = (p: Page) =>
    p.evaluate(() => (document.querySelector("engagement-thread") as HTMLElement & { discussionId: string | null }).discussionId);

  it("shows the discussion whose url is the page's canonical address", async () => {
    expect((await t.api.put("/api/v1/discussions/known-page", { title: "Known", url: `${origin}/posts/known` })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    expect((await ann.post("/api/v1/discussions/known-page/comments", { body: "Hello from the known page" })).status).toBe(201);
    // the page's own address differs (a query, a fragment); its canonical link names the page, written otherwise
    const p = await open(`/some/other/path?utm=x&canonical=${encodeURIComponent(`${origin}/posts/known/`)}#top`);
    await thread(p).getByText("Hello from the known page").waitFor();
    expect(await idOf(p)).toBe("known-page");
    await p.close();
  });

  it("without a canonical link, uses its address without the fragment; on a new page the first comment creates the discussion", async () => {
    const p = await open("/posts/brand-new?page=1#comments");
    await thread(p)
      .getByText(/No comments yet/)
      .waitFor();
    const id = await idOf(p);
    expect(id).toMatch(/^page:[0-9a-f]{16}$/);
    await p.evaluate(
      (tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      },
      await t.identity("bo", { name: "Bo" }),
    );
    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("First on a new page");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    await thread(p).locator("article", { hasText: "First on a new page" }).waitFor();
    await screenshot(p, { path: join(SHOTS, "thread-by-page-url.png"), fullPage: true });
    await p.close();

    const found = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent(`${origin}/posts/brand-new?page=1`)}`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ id, url: `${origin}/posts/brand-new?page=1`, title: "Page /posts/brand-new", commentCount: 1 });
    // another reader of the page, later, is shown it
    const again = await open("/posts/brand-new/?page=1");
    await thread(again).getByText("First on a new page").waitFor();
    expect(await idOf(again)).toBe(id);
    await again.close();
  });

  it("a tab opened before the page's first comment goes live when another tab writes it: no reload", async () => {
    const early = await open("/posts/before-anyone");
    await thread(early)
      .getByText(/No comments yet/)
      .waitFor();
    const writer = await open("/posts/before-anyone");
    await writer.evaluate(
      (tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      },
      await t.identity("cy", { name: "Cy" }),
    );
    await thread(writer).getByRole("textbox", { name: "Write a comment" }).fill("The very first word");
    await thread(writer).getByRole("button", { name: "Post comment" }).click();
    await thread(writer).locator("article", { hasText: "The very first word" }).waitFor();
    // the early tab's stream opens once the discussion exists, replaying it from its start
    let reloaded = false;
    early.on("framenavigated", () => (reloaded = true));
    const shown = thread(early).locator("article", { hasText: "The very first word" });
    const button = thread(early).getByRole("button", { name: "Show 1 new comment" });
    await Promise.race([shown.waitFor({ timeout: 20_000 }), button.waitFor({ timeout: 20_000 })]);
    if (await button.isVisible()) await button.click();
    await shown.waitFor();
    expect(reloaded).toBe(false);
    await screenshot(early, { path: join(SHOTS, "thread-live-before-first-comment.png"), fullPage: true });
    await early.close();
    await writer.close();
  });
});
