// The embed's scripts as a page's browser fetches them (contract section 14): served to any origin,
// an ETag of their content, a 304 on revalidation, and within their gzip budget; and the host pages
// the browser tests put <engagement-thread> in, with Chromium and the CSP violations its pages report.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { expect } from "vitest";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { launchChromium } from "./chromium.js";
import type { TestTenant } from "./fixtures.js";

export async function expectServedScript(serviceUrl: string, name: string, element: string, gzipBudget: number): Promise<void> {
  const res = await fetch(`${serviceUrl}/embed/v1/${name}`, { headers: { origin: "https://blog.example" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  expect(res.headers.get("cache-control")).toMatch(/public, max-age=\d+/);
  const etag = res.headers.get("etag");
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  const body = Buffer.from(await res.arrayBuffer());
  expect(body.toString()).toContain(element);
  expect(gzipSync(body).length).toBeLessThanOrEqual(gzipBudget);
  expect((await fetch(`${serviceUrl}/embed/v1/${name}`, { headers: { "if-none-match": etag! } })).status).toBe(304);
}

export interface HostPage {
  origin: string;
  /** the page for a discussion, with the element's extra attributes (and an <engagement-count> for it) */
  url(discussionId: string, attrs?: string, withCount?: boolean, belowTheFold?: boolean): string;
  close(): Promise<void>;
}

/** Host pages on an origin of their own, with a strict CSP: scripts and connections to the service only, no inline styles. */
export async function hostPages(serviceUrl: string, key: string): Promise<HostPage> {
  const host: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://host");
    if (url.pathname === "/site.css") {
      // the host page's own stylesheet ('self'): a page that follows the reader's colour scheme
      res.writeHead(200, { "content-type": "text/css" });
      res.end(
        "body{font-family:Georgia,serif;max-width:760px;margin:24px auto;padding:0 16px}" +
          ".fold{height:4000px}" +
          "@media (prefers-color-scheme: dark){body{background:#15191f;color:#e6e9ee}}",
      );
      return;
    }
    const id = url.searchParams.get("d") ?? "";
    const attrs = url.searchParams.get("attrs") ?? "";
    const count =
      url.searchParams.get("count") === "1"
        ? `<p><engagement-count discussion-id="${id}" publishable-key="${key}"></engagement-count></p><script src="${serviceUrl}/embed/v1/count.js"></script>`
        : "";
    // a tall page: the element far below the fold
    const fold = url.searchParams.get("fold") === "1" ? `<div class="fold"></div>` : "";
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": `default-src 'none'; script-src 'self' ${serviceUrl}; connect-src ${serviceUrl}; style-src 'self'; img-src data:`,
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>An article</title><link rel="stylesheet" href="/site.css"></head><body><main><h1>An article</h1>${count}<p>The article's text.</p>${fold}
<engagement-thread discussion-id="${id}" publishable-key="${key}" ${attrs}></engagement-thread></main>
<script src="${serviceUrl}/embed/v1/thread.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  return {
    origin,
    url: (d, attrs = "", withCount = false, belowTheFold = false) =>
      `${origin}/?d=${encodeURIComponent(d)}&attrs=${encodeURIComponent(attrs)}${withCount ? "&count=1" : ""}${belowTheFold ? "&fold=1" : ""}`,
    close: () => new Promise<void>((resolve) => host.close(() => resolve())),
  };
}

/** A tenant's host pages in Chromium: the pages' origin allowed, every Content Security Policy violation they report kept. */
export interface EmbedBrowser {
  host: HostPage;
  browser: Browser;
  /** what the pages reported breaking the CSP: a test's afterAll expects none */
  violations: string[];
  /** a new page of `viewport` (or the options') whose CSP violations are kept */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

export async function embedBrowser(serviceUrl: string, t: TestTenant, viewport = { width: 700, height: 600 }): Promise<EmbedBrowser> {
  const key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
  const host = await hostPages(serviceUrl, key);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
  const browser = await launchChromium();
  const violations: string[] = [];
  return {
    host,
    browser,
    violations,
    async newPage(options = {}) {
      const p = await browser.newPage({ viewport, ...options });
      p.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      return p;
    },
    async close() {
      await browser.close();
      await host.close();
    },
  };
}
