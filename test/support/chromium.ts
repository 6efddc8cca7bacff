// Headless Chromium for browser tests: Debian's `chromium`, driven by playwright-core. Under CI a
// missing Chromium fails the run (see the describe block each browser test adds) instead of skipping.
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Locator,
  type LocatorScreenshotOptions,
  type Page,
  type PageScreenshotOptions,
} from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const chromiumMissing = !existsSync(CHROMIUM);
/** Under CI the browser tests must run. */
export const chromiumRequired = process.env.CI === "true" || process.env.CI === "1";
if (chromiumMissing && !chromiumRequired) {
  console.warn(`browser test skipped: ${CHROMIUM} is missing (install it with: apt-get install -y chromium)`);
}

const launch = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
let shared: Promise<Browser> | undefined;

/**
 * Headless Chromium for a test file. One browser process serves every file its vitest worker runs (a
 * worker keeps its module cache from file to file: isolate: false), instead of a launch per file
 * (about 1.5 s of CPU and 2 s each). A file's pages are its own all the same: `newPage` opens each
 * page in a browser context of its own (cookies, storage and cache apart), as Playwright's own
 * browser.newPage does, and `close` closes the contexts the file opened, not the browser, which
 * ends with the worker (Playwright closes it when the process exits).
 */
export async function launchChromium(): Promise<Browser> {
  shared ??= launch().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  let browser = await shared;
  if (!browser.isConnected()) browser = await (shared = launch());
  const contexts = new Set<BrowserContext>();
  const newContext = async (options?: BrowserContextOptions) => {
    const context = await browser.newContext(options);
    contexts.add(context);
    return context;
  };
  const own: Partial<Browser> = {
    newContext,
    newPage: async (options?: BrowserContextOptions) => (await newContext(options)).newPage(),
    close: async () => {
      await Promise.all([...contexts].map((c) => c.close()));
      contexts.clear();
    },
  };
  return new Proxy(browser, {
    get(target, prop) {
      if (prop in own) return own[prop as keyof Browser];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Serves one HTML page on a loopback port of its own: a distinct browser origin. */
export async function servePage(html: string): Promise<{ url: string; origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, origin: new URL(url).origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * A screenshot of a page or an element (for a person to look at), asked again when Chromium refuses
 * one capture with "Unable to capture screenshot": a transient refusal of the compositor under load
 * (seen in CI on a page whose parser was held at a script), which takes the same picture a frame
 * later. Any other error, or the third refusal in a row, fails as before.
 */
export async function screenshot(target: Page | Locator, options: PageScreenshotOptions & LocatorScreenshotOptions): Promise<Buffer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await target.screenshot(options);
    } catch (err) {
      if (attempt >= 3 || !/Unable to capture screenshot/.test(String(err))) throw err;
      const page = "page" in target ? target.page() : target;
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    }
  }
}
