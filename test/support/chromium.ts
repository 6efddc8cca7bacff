// Headless Chromium for browser tests: Debian's `chromium`, driven by playwright-core. Under CI a
// missing Chromium fails the run (see the describe block each browser test adds) instead of skipping.
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";

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

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });

/** Serves one HTML page on a loopback port of its own: a distinct browser origin. */
export async function servePage(html: string): Promise<{ url: string; origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, origin: new URL(url).origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
