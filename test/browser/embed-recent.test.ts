// Recent comments on a page (contract section 19): /embed/v1/recent.js as served (cache headers, CORS,
// count.js's size budget), and <engagement-recent> in headless Chromium on a host page of another
// origin with a strict CSP: the latest comments with their discussions, linked to their permalinks,
// their text as text, a limit and a filter by discussions.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";
import { expectServedScript } from "../support/embed.js";

/** recent.js's size budget: count.js's */
const RECENT_JS_GZIP_BUDGET = 3 * 1024;

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe("/embed/v1/recent.js", () => {
  it("is served to any origin, cached with its content hash as ETag, and within 3 KB gzipped", () =>
    expectServedScript(server.url, "recent.js", "engagement-recent", RECENT_JS_GZIP_BUDGET));
});

describe.skipIf(chromiumMissing)("<engagement-recent> in headless Chromium", () => {
  let browser: Browser | undefined;
  let host: Server;
  let hostOrigin: string;
  let key: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    host = createServer((req, res) => {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'none'; script-src 'self' ${server.url}; connect-src ${server.url}; style-src 'self'`,
      });
      const attrs = req.url?.includes("filtered") ? ' discussion-ids="rv-2"' : ' limit="3"';
      res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>home</title></head><body><h1>Home</h1>` +
          `<engagement-recent${attrs}></engagement-recent>` +
          `<script src="${server.url}/embed/v1/recent.js" data-publishable-key="${key}"></script></body></html>`,
      );
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [hostOrigin] })).status).toBe(200);
    key = (await t.admin.post("/api/v1/publishable-keys", { label: "home" })).body.key as string;
    expect((await t.api.put("/api/v1/discussions/rv-1", { title: "Rivers", url: "https://news.example/rivers" })).status).toBe(201);
    expect((await t.api.put("/api/v1/discussions/rv-2", { title: "Lakes" })).status).toBe(201);
    const post = async (sub: string, d: string, body: string) =>
      (await (await t.reader(sub, { name: sub.toUpperCase() })).post(`/api/v1/discussions/${d}/comments`, { body })).body.id as string;
    ids.old = await post("ann", "rv-1", "the oldest, not among the last three");
    ids.lake = await post("bo", "rv-2", "A **lake** comment");
    ids.xss = await post("cy", "rv-1", '<img src=x onerror="window.pwned=1"> and **bold** text');
    ids.last = await post("dee", "rv-1", "x".repeat(300));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => host?.close(resolve));
  });

  it("lists the latest comments, newest first, each linked to its permalink, its text as text", async () => {
    const p = await browser!.newPage();
    const errors: string[] = [];
    p.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await p.goto(hostOrigin);
    const list = p.getByRole("list", { name: "Recent comments" });
    await p.waitForFunction(() => document.querySelector("engagement-recent")?.getAttribute("count") === "3");
    const items = list.getByRole("listitem");
    expect(await items.count()).toBe(3);
    expect(await items.nth(0).locator("[part=author]").textContent()).toBe("DEE");
    const links = await list.getByRole("link").evaluateAll((as) => as.map((a) => [a.textContent, (a as HTMLAnchorElement).href]));
    expect(links).toEqual([
      ["Rivers", `https://news.example/rivers#comment-${ids.last}`],
      ["Rivers", `https://news.example/rivers#comment-${ids.xss}`],
    ]);
    // a discussion without a page: its title, not a link
    expect(
      await items
        .nth(2)
        .locator("[part=discussion]")
        .evaluate((e) => e.tagName),
    ).toBe("SPAN");
    expect(await items.nth(2).locator("[part=excerpt]").textContent()).toBe("A lake comment");
    // the excerpt is text: the comment's markup is not run, not even parsed into the page
    expect(await items.nth(1).locator("[part=excerpt]").textContent()).toBe('<img src=x onerror="window.pwned=1"> and bold text');
    expect(await p.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect((await items.nth(0).locator("[part=excerpt]").textContent())!.length).toBe(140);
    await screenshot(p, { path: "/tmp/engagement-embed-shots/recent.png" });
    expect(errors).toEqual([]);
    await p.close();
  });

  it("shows only the named discussions' comments", async () => {
    const p = await browser!.newPage();
    await p.goto(`${hostOrigin}/filtered`);
    await p.waitForFunction(() => document.querySelector("engagement-recent")?.hasAttribute("count"));
    const texts = await p.locator("engagement-recent [part=excerpt]").allTextContents();
    expect(texts).toEqual(["A lake comment"]);
    await p.close();
  });
});
