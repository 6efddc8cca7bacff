// GET / in a browser (headless Chromium): a page of links to the console, the OpenAPI document and
// GraphQL, whose link opens GraphiQL (on outside production) with X-API-Key waiting in its headers
// pane; in production, where GraphiQL is off, the GraphQL link says how to use it (the JSON a client
// gets: test/index-route.test.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { chromiumMissing, chromiumRequired, launchChromium, screenshot } from "../support/chromium.js";

let dev: TestServer;
let production: TestServer;

beforeAll(async () => {
  [dev, production] = await Promise.all([startServer(), startServer({ NODE_ENV: "production" })]);
});
afterAll(() => Promise.all([dev?.stop(), production?.stop()]));

const dir = process.env.UPDATE_SCREENSHOTS ? "docs" : join("node_modules", ".cache", "screens");

describe.skipIf(chromiumMissing && !chromiumRequired)("GET / in a browser", () => {
  it("shows a page of links to the console, the OpenAPI document and GraphQL; the GraphQL link opens GraphiQL with X-API-Key to fill in", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      await page.goto(`${dev.url}/`);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toMatch(/Engagement service/);
      expect(await page.getByRole("link", { name: "Admin console" }).getAttribute("href")).toBe(`${dev.url}/console/`);
      expect(await page.getByRole("link", { name: "OpenAPI document (REST /api/v1)" }).getAttribute("href")).toBe(
        `${dev.url}/api/v1/openapi.json`,
      );
      expect(await page.getByRole("link", { name: /GraphQL/ }).count()).toBe(1);
      mkdirSync(dir, { recursive: true });
      await screenshot(page, { path: join(dir, "index-page.png") });

      await page.getByRole("link", { name: "GraphQL in GraphiQL" }).click();
      await page.waitForURL(`${dev.url}/graphql`);
      await page.getByRole("button", { name: "Show Documentation Explorer" }).waitFor();
      // the headers pane is open with X-API-Key to fill in; the first query says which key goes there
      const headers = page.locator(".graphiql-editor-tool .graphiql-editor").last();
      await expect.poll(() => headers.textContent(), { timeout: 10_000 }).toMatch(/"X-API-Key":\s*""/);
      await expect.poll(() => page.locator(".graphiql-query-editor").textContent()).toMatch(/Headers\s+\(below\)\s+as\s+\{\s+"X-API-Key"/);
      await screenshot(page, { path: join(dir, "graphiql.png") });

      // in production GraphiQL is off: the one GraphQL link is the endpoint, with how to use it
      await page.goto(`${production.url}/`);
      await page.getByRole("link", { name: "GraphQL endpoint" }).waitFor();
      expect(await page.getByRole("link", { name: /GraphiQL/ }).count()).toBe(0);
      expect(await page.getByRole("listitem").filter({ hasText: "GraphQL endpoint" }).textContent()).toContain("GRAPHIQL=1");
    } finally {
      await browser.close();
    }
  });
});
