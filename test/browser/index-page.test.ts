// GET / in a browser (headless Chromium): a page of links to the console, the OpenAPI document and
// GraphiQL (the JSON a client gets: test/index-route.test.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { chromiumMissing, chromiumRequired, launchChromium } from "../support/chromium.js";

let withGraphiql: TestServer;

beforeAll(async () => {
  withGraphiql = await startServer({ GRAPHIQL: "1" });
});
afterAll(() => withGraphiql?.stop());

describe("GET / in a browser", () => {
  it.skipIf(chromiumMissing && !chromiumRequired)("shows a page of links to the console, the OpenAPI document and GraphiQL", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      await page.goto(`${withGraphiql.url}/`);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toMatch(/Engagement service/);
      expect(await page.getByRole("link", { name: "Admin console" }).getAttribute("href")).toBe(`${withGraphiql.url}/console/`);
      expect(await page.getByRole("link", { name: "OpenAPI document (REST /api/v1)" }).getAttribute("href")).toBe(
        `${withGraphiql.url}/api/v1/openapi.json`,
      );
      expect(await page.getByRole("link", { name: "GraphiQL" }).count()).toBe(1);
      const dir = process.env.UPDATE_SCREENSHOTS ? "docs" : join("node_modules", ".cache", "screens");
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, "index-page.png") });
    } finally {
      await browser.close();
    }
  });
});
