// Indexable threads in headless Chromium (contract section 23): a host page on an origin of its own
// (strict CSP: scripts and connections to the service only, no inline style) includes the service's
// fragment in its HTML, as a site's server or build would. With JavaScript off the comments' text,
// names and dates are on the page. With thread.js the element takes the server-rendered thread over:
// no request for the first page (the network log), the rendered height within 10 % before and after,
// then live as ever: a comment written after the fragment was cached arrives from the stream (it
// resumes after the fragment's seq), and a reader posts and replies. The bodies the element shows are
// the articles' own (the island does not carry them again).
// Screenshots: docs/seo/ with UPDATE_SCREENSHOTS=1, else a scratch folder (the one before the upgrade always there).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";

const SCRATCH = join(tmpdir(), "engagement-seo-shots");
const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "seo") : SCRATCH;

let server: TestServer;
let t: TestTenant;
let key: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
});
afterAll(() => server?.stop());

/** An article page that includes the fragment server-side: fetched fresh, or the copy it fetched first (`cached=1`, as a CDN or a static build keeps it). */
async function articlePages(
  serviceUrl: string,
): Promise<{ origin: string; url(d: string, cached?: boolean): string; close(): Promise<void> }> {
  const kept = new Map<string, string>();
  const host: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://host");
      if (url.pathname === "/site.css") {
        res.writeHead(200, { "content-type": "text/css" });
        res.end(
          "body{font:17px/1.6 Georgia,serif;max-width:720px;margin:24px auto;padding:0 16px;color:#1d2430;background:#fbfaf7}" +
            "h1{font-size:2em;line-height:1.2}",
        );
        return;
      }
      const d = url.searchParams.get("d") ?? "";
      let fragment = url.searchParams.get("cached") === "1" ? kept.get(d) : undefined;
      if (!fragment) {
        fragment = await (await fetch(`${serviceUrl}/embed/v1/discussions/${encodeURIComponent(d)}.html?key=${key}`)).text();
        kept.set(d, fragment);
      }
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'none'; script-src 'self' ${serviceUrl}; connect-src ${serviceUrl}; style-src 'self'; img-src data:`,
      });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rivers and lakes</title><link rel="stylesheet" href="/site.css"></head><body><main><article><h1>Rivers and lakes</h1>
<p>The article's text: a page a site renders on its server, with its comments in its own HTML.</p></article>
${fragment}</main><p id="after">The page goes on below the comments.</p>
<script src="${serviceUrl}/embed/v1/thread.js"></script></body></html>`);
    })();
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  return {
    origin,
    url: (d, cached = false) => `${origin}/?d=${encodeURIComponent(d)}${cached ? "&cached=1" : ""}`,
    close: () => new Promise<void>((resolve) => host.close(() => resolve())),
  };
}

const BODIES = [
  "Rivers carry more sediment than most people think. After the spring floods the delta grows by metres.",
  "I grew up by a lake.\n\nEvery winter it froze thick enough to walk across, and every spring it **cracked** like thunder.",
  "Is there a source for the figure in the second paragraph?",
  "Lovely piece. The photographs of the estuary at low tide are the best part.",
];

describe.skipIf(chromiumMissing)("an indexable thread in headless Chromium", () => {
  let browser: Browser | undefined;
  let host: Awaited<ReturnType<typeof articlePages>>;
  const violations: string[] = [];
  const names = ["Ann Avery", "Bob Brook", "Cleo Lake", "Dan Ford"];

  beforeAll(async () => {
    host = await articlePages(server.url);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/seo-1", { title: "Rivers and lakes", url: `${host.origin}/?d=seo-1` })).status).toBe(201);
    const readers = await Promise.all(names.map((name, i) => t.reader(`r${i}`, { name })));
    // 22 top-level comments (a second page), every third with a reply and one reply to a reply
    for (let i = 0; i < 22; i++) {
      const top = (await readers[i % 4]!.post("/api/v1/discussions/seo-1/comments", { body: BODIES[i % 4] })).body.id as string;
      if (i % 3 === 0) {
        const reply = (
          await readers[(i + 1) % 4]!.post("/api/v1/discussions/seo-1/comments", { body: `Reply ${i}: fair point.`, parentId: top })
        ).body.id as string;
        if (i === 21) await readers[0]!.post("/api/v1/discussions/seo-1/comments", { body: "And a reply to the reply.", parentId: reply });
      }
    }
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
    await mkdir(SCRATCH, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    expect(violations).toEqual([]);
  });

  async function newPage(javaScriptEnabled = true): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 1000 }, javaScriptEnabled });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return p;
  }

  const threadHeight = (p: Page) => p.evaluate(() => document.querySelector("engagement-thread")!.getBoundingClientRect().height);

  it("shows the comments' text, names and dates with JavaScript off", async () => {
    const p = await newPage(false);
    await p.goto(host.url("seo-1"));
    const light = p.locator("engagement-thread > ol.comments");
    await expect(light.locator("article.h-entry").first().isVisible()).resolves.toBe(true);
    // the newest first: the 22nd comment (i = 21) is by Bob Brook, with its reply and a reply to that
    const first = light.locator("> li > article").first();
    await expect(first.locator(".p-author").first().innerText()).resolves.toBe("Bob Brook");
    await expect(first.locator(".e-content").first().innerText()).resolves.toContain("I grew up by a lake.");
    const date = first.locator("time.dt-published").first();
    expect(await date.isVisible()).toBe(true);
    expect(await date.innerText()).toMatch(/\d{4}/);
    await expect(first.locator("article .e-content").first().innerText()).resolves.toBe("Reply 21: fair point.");
    const text = await p.locator("engagement-thread").innerText();
    for (const name of names) expect(text).toContain(name);
    expect(text).toContain("Comments (31 comments)");
    expect(await p.locator("engagement-thread a[rel=next]").isVisible()).toBe(true);
    expect(await light.locator("article.h-entry").count()).toBe(20 + 7 + 1);
    // and where to comment: the page itself, where the thread works
    const onPage = p.locator("engagement-thread a", { hasText: "Comment on the page itself, with JavaScript on" });
    expect(await onPage.isVisible()).toBe(true);
    expect(await onPage.getAttribute("href")).toBe(host.url("seo-1"));
    await screenshot(p, { path: join(SHOTS, "thread-no-javascript.png"), fullPage: true });
    await p.close();
  });

  it("upgrades in place: no request for the first page, the same height, then live", async () => {
    const p = await newPage();
    const requests: Request[] = [];
    p.on("request", (r) => requests.push(r));
    // hold thread.js back until the server-rendered thread has been measured
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route(`${server.url}/embed/v1/thread.js`, async (route) => {
      await held;
      await route.continue();
    });
    // the parser waits at the held script, everything before it parsed and laid out
    await p.goto(host.url("seo-1"), { waitUntil: "commit" });
    await p.locator("#after").waitFor({ state: "attached" });
    // and the page's stylesheet applied (a layout read before it loads would be the unstyled page's)
    await p.waitForFunction(() => [...document.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")].every((l) => l.sheet));
    const before = await threadHeight(p);
    const afterTop = await p.evaluate(() => document.getElementById("after")!.getBoundingClientRect().top);
    // the same as the page with JavaScript off: looked at, not kept in docs/
    await screenshot(p, { path: join(SCRATCH, "thread-before-upgrade.png"), fullPage: true });
    release();
    // upgraded: its own shadow DOM shows the comments
    const shadowComments = p.locator("engagement-thread ol[part=comments] > li > article");
    await shadowComments.first().waitFor();
    await p.waitForFunction(() => !!document.querySelector("engagement-thread")?.shadowRoot?.querySelector("[part=comments]"));
    expect(await shadowComments.count()).toBe(20);
    // the island carries no bodies: each is the one in the article beside it, as its HTML (Markdown's strong kept)
    const bodies = await p.evaluate(() =>
      [...document.querySelector("engagement-thread")!.shadowRoot!.querySelectorAll("article[data-comment-id]")].map((a) => ({
        id: a.getAttribute("data-comment-id")!,
        html: a.querySelector(":scope .body.rich")?.innerHTML ?? null,
        light:
          document.getElementById(`comment-${a.getAttribute("data-comment-id")}`)?.querySelector(":scope > .e-content")?.innerHTML ?? null,
      })),
    );
    expect(bodies.length).toBeGreaterThanOrEqual(20);
    for (const b of bodies) {
      expect(b.light, b.id).not.toBeNull();
      expect(b.html?.replace(/<!--[^>]*-->/g, ""), b.id).toBe(b.light);
    }
    expect(bodies.some((b) => b.html?.includes("<strong>cracked</strong>"))).toBe(true);
    const after = await threadHeight(p);
    await screenshot(p, { path: join(SHOTS, "thread-upgraded.png"), fullPage: true });
    expect(Math.abs(after - before) / before, `height ${before} → ${after}`).toBeLessThanOrEqual(0.1);
    const afterTopNow = await p.evaluate(() => document.getElementById("after")!.getBoundingClientRect().top);
    expect(Math.abs(afterTopNow - afterTop) / before).toBeLessThanOrEqual(0.1);

    // the network log: the words, the stream's ticket and the stream; never the first page
    const graphql = requests.filter((r) => r.url().startsWith(`${server.url}/graphql`));
    expect(graphql.map((r) => r.postData() ?? "").filter((q) => /EmbedThread|EmbedBasics|comments\(/.test(q))).toEqual([]);
    expect(requests.some((r) => r.url().startsWith(`${server.url}/api/v1/stream/seo-1`))).toBe(true);

    // live: a reply by someone else arrives on the stream
    const ann = await t.reader("r0", { name: "Ann Avery" });
    const topId = (await p.locator("engagement-thread ol[part=comments] > li > article").first().getAttribute("data-comment-id"))!;
    await ann.post("/api/v1/discussions/seo-1/comments", { body: "Live reply after the upgrade.", parentId: topId });
    await p.locator("engagement-thread ol[part=comments] article", { hasText: "Live reply after the upgrade." }).waitFor();

    // Load more reads the second page from the cursor the island gave
    await p.locator("engagement-thread").getByRole("button", { name: "Load more comments" }).click();
    await expect.poll(() => shadowComments.count()).toBe(22);
    await p.close();
  });

  it("a fragment kept since before a comment was written: the stream brings the comment; a reader writes as ever", async () => {
    expect((await t.api.put("/api/v1/discussions/seo-2", { title: "Kept" })).status).toBe(201);
    const bob = await t.reader("r1", { name: "Bob Brook" });
    await bob.post("/api/v1/discussions/seo-2/comments", { body: "The first comment." });
    // the host page keeps the fragment it fetched first (a CDN or a build would)
    const warm = await newPage(false);
    await warm.goto(host.url("seo-2"));
    await warm.close();
    await bob.post("/api/v1/discussions/seo-2/comments", { body: "Written after the fragment was kept." });

    const p = await newPage();
    const requests: Request[] = [];
    p.on("request", (r) => requests.push(r));
    await p.goto(host.url("seo-2", true));
    const thread = p.locator("engagement-thread");
    await thread.locator("ol[part=comments] article", { hasText: "The first comment." }).waitFor();
    // the newer top-level comment by someone else waits behind the thread's button, as live ones do
    await thread.getByRole("button", { name: "Show 1 new comment" }).click();
    await thread.locator("ol[part=comments] article", { hasText: "Written after the fragment was kept." }).waitFor();
    expect(requests.filter((r) => /EmbedThread/.test(r.postData() ?? ""))).toEqual([]);

    // a reader the page signs in: loaded as usual, and posts
    await p.evaluate(
      (tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      },
      await t.identity("wanda", { name: "Wanda" }),
    );
    await thread.getByRole("textbox", { name: "Write a comment" }).fill("Hello from Wanda");
    await thread.getByRole("button", { name: "Post comment" }).click();
    await thread.locator("ol[part=comments] article", { hasText: "Hello from Wanda" }).waitFor();
    await p.close();
  });
});
