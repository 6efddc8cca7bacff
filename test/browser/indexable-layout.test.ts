// No layout shift whatever the host page's style (contract section 27, beside section 23): the
// fragment is included in a page that is unstyled (no stylesheet at all), dense (14 px sans-serif,
// line-height 1.3) or roomy (20 px serif, line-height 1.8), each at 1000 and 390 px wide, with a thread
// of a few comments (a reply, and a longer comment that wraps at 390 px). The element's height is
// measured before thread.js runs (the script held back, the parser waiting at it) and once the
// upgraded thread has settled (its own comments drawn, its stream live): within 10 %, and the page
// below it moves as little. Screenshots of both, for each case, in /tmp/layout-shots/ (looked at, not kept).
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

const SHOTS = join(tmpdir(), "layout-shots");

/** The host pages' own stylesheets (none for the unstyled one). */
const STYLES = {
  unstyled: null,
  dense: "body{font:14px/1.3 sans-serif}",
  roomy: "body{font:20px/1.8 serif}",
} as const;
type Style = keyof typeof STYLES;
const WIDTHS = [1000, 390] as const;

const LONG =
  "I spent a summer measuring the river below the old mill, and the numbers surprised everyone in the village. " +
  "After every heavy rain the water carried so much silt that the gauge was buried within a week, and we had to dig it out by hand.\n\n" +
  "The delta grows by a few metres each year, faster than the maps can be redrawn; the fishermen say the channel they used as children is a meadow now.";

let server: TestServer;
let t: TestTenant;
let key: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  key = (await t.admin.post("/api/v1/publishable-keys", { label: "layout" })).body.key as string;
});
afterAll(() => server?.stop());

/** A page that includes the fragment server-side, in one of the three styles, under a strict CSP (no inline style). */
async function hostPages(serviceUrl: string): Promise<{ origin: string; url(style: Style): string; close(): Promise<void> }> {
  const host: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://host");
      const style = (url.searchParams.get("style") ?? "unstyled") as Style;
      if (url.pathname === "/site.css") {
        res.writeHead(200, { "content-type": "text/css" });
        res.end(STYLES[style] ?? "");
        return;
      }
      const fragment = await (await fetch(`${serviceUrl}/embed/v1/discussions/layout-1.html?key=${key}`)).text();
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'none'; script-src 'self' ${serviceUrl}; connect-src ${serviceUrl}; style-src 'self'; img-src data:`,
      });
      const sheet = STYLES[style] ? `<link rel="stylesheet" href="/site.css?style=${style}">` : "";
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>The river below the mill</title>${sheet}</head><body><h1>The river below the mill</h1>
<p>An article a site renders on its server, with its comments in its own HTML.</p>
${fragment}<p id="after">The page goes on below the comments.</p>
<script src="${serviceUrl}/embed/v1/thread.js"></script></body></html>`);
    })();
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  return {
    origin,
    url: (style) => `${origin}/?style=${style}`,
    close: () => new Promise<void>((resolve) => host.close(() => resolve())),
  };
}

describe.skipIf(chromiumMissing)("an indexable thread's height before and after it upgrades, on any host page", () => {
  let browser: Browser | undefined;
  let host: Awaited<ReturnType<typeof hostPages>>;
  const violations: string[] = [];
  const measured: string[] = [];

  beforeAll(async () => {
    host = await hostPages(server.url);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/layout-1", { title: "The river", url: host.url("unstyled") })).status).toBe(201);
    const [ann, bob, cleo] = await Promise.all(["Ann Avery", "Bob Brook", "Cleo Lake"].map((name, i) => t.reader(`l${i}`, { name })));
    const post = async (who: typeof ann, body: string, parentId?: string) =>
      (await who!.post("/api/v1/discussions/layout-1/comments", { body, ...(parentId ? { parentId } : {}) })).body.id as string;
    const first = await post(ann, "Lovely piece. The photographs of the estuary at low tide are the best part.");
    await post(bob, "Is there a source for the figure in the second paragraph?", first);
    await post(cleo, LONG);
    await post(bob, "I grew up by a lake, and every spring it **cracked** like thunder.");
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    if (measured.length) console.log(`heights before → after the upgrade:\n${measured.join("\n")}`);
    expect(violations).toEqual([]);
  });

  const height = (p: Page) => p.evaluate(() => document.querySelector("engagement-thread")!.getBoundingClientRect().height);
  const belowTop = (p: Page) => p.evaluate(() => document.getElementById("after")!.getBoundingClientRect().top);

  const cases = Object.keys(STYLES).flatMap((style) => WIDTHS.map((width) => ({ style: style as Style, width })));
  it.each(cases)("$style page, $width px wide: the upgraded thread within 10 % of the fragment's height", async ({ style, width }) => {
    const p = await browser!.newPage({ viewport: { width, height: 900 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    // hold thread.js back: the parser waits at it, the fragment before it parsed and laid out
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route(`${server.url}/embed/v1/thread.js`, async (route) => {
      await held;
      await route.continue();
    });
    await p.goto(host.url(style), { waitUntil: "commit" });
    await p.locator("#after").waitFor({ state: "attached" });
    // and the page's stylesheet applied (a layout read before it loads would be the unstyled page's)
    await p.waitForFunction(() => [...document.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")].every((l) => l.sheet));
    const before = await height(p);
    const belowBefore = await belowTop(p);
    await screenshot(p, { path: join(SHOTS, `${style}-${width}-before.png`), fullPage: true });
    release();
    // upgraded and settled: its own comments drawn, its stream live (no "Reconnecting…" line)
    await p.waitForFunction(() => {
      const root = document.querySelector("engagement-thread")?.shadowRoot;
      return !!root?.querySelector("ol[part=comments] article") && !root.querySelector("[part=status]");
    });
    await p.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await p.locator("engagement-thread ol[part=comments] article").count()).toBe(4);
    const after = await height(p);
    const belowAfter = await belowTop(p);
    await screenshot(p, { path: join(SHOTS, `${style}-${width}-after.png`), fullPage: true });
    const change = (after - before) / before;
    measured.push(`  ${style} ${width} px: ${before.toFixed(0)} → ${after.toFixed(0)} (${(change * 100).toFixed(1)} %)`);
    expect(Math.abs(change), `height ${before} → ${after}`).toBeLessThanOrEqual(0.1);
    expect(Math.abs(belowAfter - belowBefore) / before, `below ${belowBefore} → ${belowAfter}`).toBeLessThanOrEqual(0.1);

    // its composer: one line until the reader moves into it, then whole
    const thread = p.locator("engagement-thread");
    expect(await thread.getByRole("button", { name: "Post comment" }).isVisible()).toBe(false);
    await thread.getByRole("textbox", { name: "Write a comment" }).focus();
    await thread.getByRole("button", { name: "Post comment" }).waitFor();
    expect(await thread.getByRole("tab", { name: "Preview" }).isVisible()).toBe(true);
    await screenshot(p, { path: join(SHOTS, `${style}-${width}-writing.png`), fullPage: true });
    await p.close();
  });
});
