// Comment search on the console's moderation screen (contract section 21), in headless Chromium: the
// words and the filters find the comments, newest first, a result can be moderated where it is
// found, Clear brings the queue back; axe-core on the search and its results at 1280 and 390 px.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const MODERATOR = "search.moderator@newsroom.example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;

async function post(discussion: string, name: string, body: string): Promise<string> {
  const who = t.as({ key: t.apiKey, identity: await t.identity(name.toLowerCase(), { name }) });
  const r = await who.post(`/api/v1/discussions/${discussion}/comments`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

describe.skipIf(chromiumMissing)("comment search in the console", { timeout: 120_000 }, () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server);
    await t.api.put("/api/v1/discussions/budget", { title: "The council's budget" });
    ids.ann = await post("budget", "Ann", "The Café on Main Street should stay open.");
    ids.bo = await post("budget", "Bo", "Cheap watches at https://spam.example");
    ids.cy = await post("parks", "Cy", "The cafe in the park closes too early.");
    ids.dee = await post("parks", "Dee", "Nothing about coffee here.");
    await t.api.patch("/api/v1/settings", { moderation: "pre" });
    ids.eve = await post("parks", "Eve", "A pending word about the café.");
    ({ browser, page } = await openConsole(server, t, { as: { email: MODERATOR, role: "moderator" } }));
    await page.goto(`${server.url}/console/#/moderation`);
    await page.getByRole("listitem", { name: /Comment by Eve/ }).waitFor(); // the queue first
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const results = () => page.getByRole("list", { name: "Search results" }).getByRole("listitem");
  const names = async () => (await results().evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")))) as string[];
  const search = async () => {
    await page.getByRole("search", { name: "Search comments" }).getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("list", { name: "Search results" }).waitFor();
    await settled(page);
  };

  it("finds comments by their words, accents and case aside, newest first, and hides the queue meanwhile", async () => {
    await page.getByRole("searchbox", { name: "Search comments" }).fill("CAFE");
    await search();
    expect(await names()).toEqual(["Comment by Eve in parks", "Comment by Cy in parks", "Comment by Ann in The council's budget"]);
    expect(await page.getByRole("list", { name: "Pending comments" }).count()).toBe(0);
    await expectAccessible(page, "comment search results");
    await shoot(page, "moderation-search");
  });

  it("narrows by the filters, folded under the search box until opened", async () => {
    const filters = page.getByRole("button", { name: /^Filters/ });
    expect(await filters.getAttribute("aria-expanded")).toBe("false");
    expect(await page.getByLabel("Status").isVisible()).toBe(false);
    await filters.click();
    expect(await filters.getAttribute("aria-expanded")).toBe("true");
    await page.getByRole("searchbox", { name: "Search comments" }).fill("cafe -early");
    await page.getByLabel("Status").selectOption("approved");
    await search();
    expect(await names()).toEqual(["Comment by Ann in The council's budget"]);
    await page.getByRole("searchbox", { name: "Search comments" }).fill("");
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Links").selectOption("yes");
    await search();
    expect(await names()).toEqual(["Comment by Bo in The council's budget"]);
    await page.getByLabel("Links").selectOption("");
    await page.getByLabel("Reader id").fill("dee");
    await search();
    expect(await names()).toEqual(["Comment by Dee in parks"]);
    await page.getByLabel("Reader id").fill("");
    await page.getByLabel("Discussion id").fill("budget");
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel("From (UTC day)").fill(today);
    await page.getByLabel("To (UTC day, included)").fill(today);
    await search();
    expect(await names()).toEqual(["Comment by Bo in The council's budget", "Comment by Ann in The council's budget"]);
    await page.getByLabel("From (UTC day)").fill("2000-01-01");
    await page.getByLabel("To (UTC day, included)").fill("2000-01-02");
    await page.getByRole("search", { name: "Search comments" }).getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText("No comments match.").waitFor();
    expect(await results().count()).toBe(0);
  });

  it("moderates a result where it is found, says what a bad query lacks, and Clear brings the queue back", async () => {
    await page.getByLabel("Discussion id").fill("");
    await page.getByLabel("From (UTC day)").fill("");
    await page.getByLabel("To (UTC day, included)").fill("");
    await page.getByRole("searchbox", { name: "Search comments" }).fill("pending");
    await search();
    const eve = results().filter({ hasText: "A pending word" });
    await eve.getByRole("button", { name: "Approve", exact: true }).click();
    await page.getByText("Approved the comment by Eve.").waitFor();
    expect((await t.api.get(`/api/v1/comments/${ids.eve}`)).body.status).toBe("approved");

    await page.getByRole("searchbox", { name: "Search comments" }).fill("-cafe");
    await page.getByRole("search", { name: "Search comments" }).getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText(/not only -excluded ones/).waitFor();

    await page.getByRole("button", { name: "Clear search" }).click();
    await page.getByRole("list", { name: "Pending comments" }).waitFor();
    expect(await page.getByRole("list", { name: "Search results" }).count()).toBe(0);
  });

  it("fits a 390 px screen and stays accessible there", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("searchbox", { name: "Search comments" }).fill("cafe");
    await search();
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "comment search at 390 px");
    await shoot(page, "moderation-search-narrow");
  });
});
