// GET /: a newcomer who opens the service's address is pointed at the console, the OpenAPI document,
// GraphQL (and GraphiQL where it is on) and the health checks — as JSON for clients, as a page of
// links in a browser (looked at in headless Chromium).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { chromiumMissing, chromiumRequired, launchChromium } from "./support/chromium.js";

let plain: TestServer;
let withGraphiql: TestServer;

beforeAll(async () => {
  [plain, withGraphiql] = await Promise.all([startServer(), startServer({ GRAPHIQL: "1" })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), withGraphiql?.stop()]);
});

describe("GET /", () => {
  it("answers JSON links to the console, OpenAPI, GraphQL and health checks", async () => {
    const res = await fetch(`${plain.url}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { links: Record<string, string | null> };
    expect(body.links).toMatchObject({
      console: `${plain.url}/console/`,
      openapi: `${plain.url}/api/v1/openapi.json`,
      graphql: `${plain.url}/graphql`,
      graphiql: null,
      health: `${plain.url}/healthz`,
    });
    // the links work
    expect((await fetch(body.links.openapi!)).status).toBe(200);
    expect((await fetch(body.links.console!)).status).toBe(200);
    const on = (await (await fetch(`${withGraphiql.url}/`)).json()) as { links: Record<string, string | null> };
    expect(on.links.graphiql).toBe(`${withGraphiql.url}/graphql`);
  });

  it.skipIf(chromiumMissing && !chromiumRequired)("shows a browser a page of those links", async () => {
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
