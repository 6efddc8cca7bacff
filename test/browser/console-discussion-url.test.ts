// The console shows a discussion's url as a link only when it is http(s) (a url stored before the
// rule existed is shown as text); the API's side of the rule is in test/discussions.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium } from "../support/chromium.js";
import { consoleLink } from "../support/console-page.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("the console renders a discussion's url", { timeout: 90_000 }, () => {
  it("as a link only when it is http(s): a javascript: url stored before the rule is shown as text", async () => {
    // stored behind the API's back, as a discussion saved before the url rule existed would be
    const prisma = server.app.runtime.services.prisma;
    const bad = "javascript:document.title='pwned'";
    await prisma.discussion.create({ data: { tenantId: t.tenantId, id: "console-bad-url", title: "Bad url", url: bad } });
    await prisma.discussion.create({
      data: { tenantId: t.tenantId, id: "console-good-url", title: "Good url", url: "https://news.example/a" },
    });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(await consoleLink(server.url, t.tenantId));
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      const hrefs = async (id: string, text: string) => {
        await page.goto(new URL(`#/discussions/${id}`, page.url()).href);
        await page.getByText(text).first().waitFor();
        return page.evaluate(() => [...document.querySelectorAll("main a[href]")].map((a) => a.getAttribute("href")));
      };
      const good = await hrefs("console-good-url", "https://news.example/a");
      expect(good).toContain("https://news.example/a");
      const shown = await hrefs("console-bad-url", bad);
      expect(
        shown.filter((h) => !h!.startsWith("#") && !h!.startsWith("http")),
        JSON.stringify(shown),
      ).toEqual([]);
      expect(await page.getByRole("link", { name: bad }).count()).toBe(0);
      expect(await page.title()).not.toBe("pwned");
    } finally {
      await browser.close();
    }
  });
});
