// Helpers for the console's browser tests: a page signed in to the console (openConsole), a sign-in
// link from the CLI, axe-core on what the page shows, waiting for the page's own requests, and screenshots (docs/console with UPDATE_SCREENSHOTS=1, else a scratch folder, so
// a test run leaves the checkout as it was).
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { expect, inject } from "vitest";
import { launchChromium, screenshot } from "./chromium.js";
import { runCliInProcess } from "./cli-in-process.js";
import type { TestTenant } from "./fixtures.js";
import { TEST_ADMIN_SECRET, type TestServer } from "./server.js";
import { createOperator, signConsoleLink, type OperatorRole } from "../../src/modules/console/engine/operators.js";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("../../docs/console/", import.meta.url)
    : pathToFileURL(join(tmpdir(), "engagement-console-shots/"));

export const prepareShots = () => mkdir(SHOTS, { recursive: true });

let axeSource: string | undefined;

/** No serious or critical axe-core violation on what the page shows now. */
export async function expectAccessible(p: Page, screen: string): Promise<void> {
  // evaluated through the DevTools protocol, which the page's CSP does not govern; once per document
  // (the console is one page, its screens keep it): a second copy of its 650 KB would change nothing
  if (!(await p.evaluate(() => "axe" in window))) await p.evaluate((axeSource ??= readFileSync(AXE, "utf8")));
  const violations = await p.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(" ")).join(", ")})`);
  });
  expect(violations, `axe on ${screen}`).toEqual([]);
}

/**
 * The screen's data has arrived: no request of the page's own is in flight (streams aside). A screen's
 * loads start in its effects, which run after the frame that first drew it (its heading already
 * there): one frame and a task are let pass first, so a count of 0 is not read before they began.
 */
export async function settled(p: Page): Promise<void> {
  await p.evaluate(() => new Promise<void>((done) => requestAnimationFrame(() => setTimeout(done, 0))));
  await p.waitForFunction(() => (window as any).__inflight === 0, undefined, { timeout: 10_000 });
}

export async function shoot(p: Page, name: string): Promise<void> {
  await screenshot(p, { path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

/** What sticks out of the page at its width (a wide table scrolls inside its own region): [0] when nothing. */
export function overflow(p: Page): Promise<unknown[]> {
  return p.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll("body *")].filter(
      (el) => !el.parentElement?.closest(".table-wrap") && el.getBoundingClientRect().right > width + 1,
    );
    return [
      document.documentElement.scrollWidth - width,
      ...wide.slice(0, 6).map((el) => `${el.tagName}.${el.className}:${Math.round(el.getBoundingClientRect().right)}`),
    ];
  });
}

/** A single-use sign-in link to the console on `serverUrl` from the CLI's command, as an operator gets one (run in this process). */
export async function consoleLink(serverUrl: string, tenantId: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: inject("databaseUrl"),
    ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
    PUBLIC_URL: serverUrl,
  };
  for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete env[k];
  const r = await runCliInProcess(["console-link", "--tenant", tenantId], env);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim().split("\n").at(-1)!;
}

/** A sign-in link for the operator `email` of `tenantId`, signed as `engagement console-link` signs one. */
export const operatorLink = (server: TestServer, tenantId: string, email: string): string =>
  signConsoleLink({ secret: server.app.runtime.services.adminJwtSecret, tenantId, email, now: new Date(), baseUrl: server.url }).url;

/** Who signs in to the console, and in what page. */
export interface ConsoleSignIn {
  /** an operator of the tenant, made here, following their sign-in link; or "cli": the link of `engagement console-link` */
  as: { email: string; role: OperatorRole } | "cli";
  /** other operators of the tenant, made here too (email → role) */
  operators?: Record<string, OperatorRole>;
  /** the browser to open the page in (default: the file's own, launchChromium) */
  browser?: Browser;
  /** the page's context past its 1280×900 viewport */
  context?: BrowserContextOptions;
  /** called with the page before it loads (its listeners) */
  onPage?(page: Page): void;
}

/**
 * The console of `t` on `server` in a page of its own (its own browser context), signed in as
 * `o.as`, the screen it lands on settled; the screenshots' folder made. Closing the browser closes the
 * page (a failed sign-in closes it here).
 */
export async function openConsole(
  server: TestServer,
  t: TestTenant,
  o: ConsoleSignIn,
): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  await prepareShots();
  const operators = o.as === "cli" ? [] : [[o.as.email, o.as.role] as const];
  for (const [email, role] of [...operators, ...Object.entries(o.operators ?? {})]) {
    await createOperator(server.app.runtime.services, { tenantId: t.tenantId, email, role });
  }
  const browser = o.browser ?? (await launchChromium());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...o.context });
  try {
    const page = await context.newPage();
    o.onPage?.(page);
    await page.goto(o.as === "cli" ? await consoleLink(server.url, t.tenantId) : operatorLink(server, t.tenantId, o.as.email));
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await settled(page);
    return { browser, context, page };
  } catch (err) {
    await context.close(); // the caller has no browser to close yet
    throw err;
  }
}
