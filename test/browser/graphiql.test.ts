// GraphiQL at /graphql (headless Chromium): a small page whose assets all load (src/http/graphql/graphiql.ts),
// and its documentation explorer loads our schema through the standard introspection query without
// an error (the query itself: test/graphql-introspection.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { chromiumMissing, chromiumRequired, launchChromium } from "../support/chromium.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ NODE_ENV: "production", GRAPHQL_INTROSPECTION: "1", GRAPHIQL: "1" });
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing && !chromiumRequired)("GraphiQL (headless Chromium)", () => {
  it("opens /graphql and its documentation explorer loads the schema without an error", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const introspections: { status: number; body: string }[] = [];
      page.on("response", async (res) => {
        if (res.url().startsWith(`${server.url}/graphql`) && res.request().method() === "POST") {
          const body = await res.text().catch(() => "");
          if (body.includes("__schema")) introspections.push({ status: res.status(), body });
        }
      });
      const failed: string[] = [];
      page.on("requestfailed", (req) => failed.push(req.url()));
      page.on("response", (res) => void (res.status() >= 400 && failed.push(`${res.status()} ${res.url()}`)));
      const document = await page.goto(`${server.url}/graphql`);
      // the page itself is small: GraphiQL's script, styles and workers are files of their own, cached
      expect((await document!.body()).length).toBeLessThan(16_384);
      await page.getByRole("button", { name: "Show Documentation Explorer" }).click();
      const explorer = page.locator(".graphiql-doc-explorer");
      await explorer.getByText("Query", { exact: true }).first().click({ timeout: 15_000 });
      await expect.poll(() => explorer.getByText("discussions", { exact: true }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await page.locator(".graphiql-doc-explorer-error").count()).toBe(0);
      expect(introspections.length).toBeGreaterThan(0);
      expect(failed).toEqual([]);
      for (const r of introspections) {
        expect(r.status, r.body.slice(0, 300)).toBe(200);
        expect(JSON.parse(r.body).errors, r.body.slice(0, 300)).toBeUndefined();
      }
    } finally {
      await browser.close();
    }
  });
});
