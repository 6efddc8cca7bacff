// The console as a moderator reads it, in headless Chromium under its own CSP: comments shown as the
// service rendered them (bodyHtml: **data** a <strong>, a fence a <pre><code>, an XSS vector inert) in
// the queue, the Reported view and a discussion's page; names and titles first, ids on hover or as a
// detail (the tenant, discussions, readers); the Moderation link's pending count, kept current; the
// search's filters folded until used; the votes, formatting and page reactions controls saving
// settings; Delivery & limits as its own settings view; a sign-in page that offers the link route
// (`npm run cli -- console-link --tenant <id>`) first. axe-core at 1280 and 390 px on each.
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const TENANT = "Riverside Gazette";
const MARKDOWN = "The **data** is wrong, see:\n\n```\nSELECT count(*) FROM budget;\n```\n\n> quoted line";
const XSS = [
  '<img src=x onerror="window.__xss=1">',
  "[click me](javascript:window.__xss=2)",
  "<script>window.__xss=3</script>",
  '<a href="#" onclick="window.__xss=4">raw link</a>',
  "![pic](javascript:window.__xss=5)",
].join("\n\n");

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
/** errors the page logs (a CSP violation among them) */
const consoleErrors: string[] = [];

async function post(discussion: string, name: string, body: string): Promise<string> {
  const who = t.as({ key: t.apiKey, identity: await t.identity(name.toLowerCase(), { name }) });
  const r = await who.post(`/api/v1/discussions/${discussion}/comments`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

const pendingCount = async () =>
  (await t.api.post("/graphql", { query: "{ pendingCommentCount }" })).body.data.pendingCommentCount as number;
const moderationLink = () => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Moderation", exact: true });
/** What the Moderation link shows of the count, and what it says of it to a screen reader (its description). */
const shownCount = async () => [
  await moderationLink().locator(".count").textContent(),
  await moderationLink().evaluate((a) => document.getElementById(a.getAttribute("aria-describedby") ?? "")?.textContent ?? null),
];

describe.skipIf(chromiumMissing)("the console a moderator reads", { timeout: 120_000 }, () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server, TENANT);
    await t.api.patch("/api/v1/settings", { moderation: "pre", safety: { reportThreshold: 1 } });
    await t.api.put("/api/v1/discussions/budget-2025", { title: "The council's budget" });
    ids.ann = await post("budget-2025", "Ann", MARKDOWN);
    ids.mal = await post("budget-2025", "Mallory", XSS);
    ids.bo = await post("budget-2025", "Bo", "Plain words, *nothing* else.");
    // Bo's, published and then reported: in the Reported view
    await t.api.post(`/api/v1/comments/${ids.bo}/approve`);
    const reported = await (await t.reader("cy")).post(`/api/v1/comments/${ids.bo}/reports`, { reason: "spam", note: "**not** bold here" });
    expect(reported.status, JSON.stringify(reported.body)).toBeLessThan(300);
    ({ browser, page } = await openConsole(server, t, {
      as: "cli",
      onPage: (p) =>
        p.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(`${m.text()} ${m.location().url}`);
        }),
    }));
    await page.goto(`${server.url}/console/#/moderation`);
    await page.getByRole("listitem", { name: /Comment by Mallory/ }).waitFor();
    await settled(page);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A card's body as the service rendered it. */
  const bodyOf = (card: Locator) => card.locator(".body.rendered");

  it("shows comments as the service rendered them in the queue; an XSS vector stays inert", async () => {
    const ann = page.getByRole("listitem", { name: "Comment by Ann in The council's budget" });
    const body = bodyOf(ann);
    expect(await body.locator("strong").textContent()).toBe("data");
    expect(await body.locator("pre > code").textContent()).toContain("SELECT count(*) FROM budget;");
    expect(await body.locator("blockquote").textContent()).toContain("quoted line");
    expect(await ann.textContent()).not.toContain("**data**");
    expect(await ann.textContent()).not.toContain("```");

    const mal = bodyOf(page.getByRole("listitem", { name: /Comment by Mallory/ }));
    // no element the service let through runs anything: no script, no handler attribute, no javascript: URL
    const live = await mal.evaluate((el) =>
      [...el.querySelectorAll("*")].flatMap((x) => [
        ...(x.tagName === "SCRIPT" || x.tagName === "IFRAME" ? [x.tagName] : []),
        ...[...x.attributes]
          .filter((a) => /^on/i.test(a.name) || /^\s*javascript:/i.test(a.value))
          .map((a) => `${x.tagName} ${a.name}=${a.value}`),
      ]),
    );
    expect(live).toEqual([]);
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
    expect(await mal.textContent()).toContain("<script>window.__xss=3</script>"); // raw HTML is shown as text
    // nothing the CSP refused (the browser's own favicon request aside)
    expect(consoleErrors.filter((e) => !e.includes("/favicon.ico"))).toEqual([]);
    await expectAccessible(page, "the queue with rendered bodies");
    await shoot(page, "moderation-rendered");
  });

  it("names the tenant, discussions and readers first, ids on hover or as a detail", async () => {
    const who = page.locator(".who");
    expect(await who.textContent()).toContain(TENANT);
    expect(await who.textContent()).not.toContain(t.tenantId);
    expect(await who.getAttribute("title")).toContain(t.tenantId);
    const card = page.getByRole("listitem", { name: "Comment by Ann in The council's budget" });
    const meta = (await card.locator(".meta").textContent())!;
    expect(meta).not.toContain("budget-2025");
    const discussion = card.getByRole("link", { name: "The council's budget" });
    expect(await discussion.getAttribute("title")).toBe("Discussion id: budget-2025");
    // the reader: the name first, the id a muted detail
    const reader = card.getByRole("link", { name: "Ann (reader ann)" });
    expect(await reader.locator("strong").textContent()).toBe("Ann");
    // the discussions list leads with the title, the id beside it
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Discussions" }).click();
    const row = page.getByRole("row", { name: /The council's budget/ });
    await row.getByRole("link", { name: "The council's budget" }).waitFor();
    expect(await row.getByRole("link").count()).toBe(1);
    await expectAccessible(page, "discussions by title");
    await shoot(page, "discussions-titles");
  });

  it("shows rendered bodies on a discussion's page and in the Reported view", async () => {
    await page.getByRole("link", { name: "The council's budget" }).click();
    const ann = page.getByRole("listitem", { name: "Comment by Ann, pending" });
    await ann.waitFor();
    expect(await bodyOf(ann).locator("strong").textContent()).toBe("data");
    expect(await bodyOf(ann).locator("pre > code").count()).toBe(1);
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
    await expectAccessible(page, "a discussion with rendered bodies");
    await shoot(page, "discussion-rendered");

    await page.goto(`${server.url}/console/#/moderation/reported`);
    const bo = page.getByRole("listitem", { name: /Reported comment by Bo/ });
    await bo.waitFor();
    expect(await bodyOf(bo).locator("em").textContent()).toBe("nothing");
    expect(await bo.textContent()).not.toContain("*nothing*");
    // a reporter's note is the reader's text, not Markdown
    expect(await bo.getByRole("list", { name: "Reporters' notes" }).textContent()).toContain("**not** bold here");
    await settled(page);
    await expectAccessible(page, "reported, rendered");
  });

  it("says how many comments are pending on the Moderation link, kept current", async () => {
    await page.goto(`${server.url}/console/#/moderation`);
    const n = await pendingCount();
    expect(n).toBeGreaterThanOrEqual(2);
    await expect.poll(shownCount).toEqual([` (${n})`, `${n} pending`]);
    // approved here: one fewer at once
    await page
      .getByRole("listitem", { name: "Comment by Ann in The council's budget" })
      .getByRole("button", { name: "Approve", exact: true })
      .click();
    await expect.poll(shownCount).toEqual([` (${n - 1})`, `${n - 1} pending`]);
    // a new comment arrives live: one more
    ids.dee = await post("budget-2025", "Dee", "A new one");
    await page.getByRole("listitem", { name: /Comment by Dee/ }).waitFor({ timeout: 15_000 });
    await expect.poll(shownCount, { timeout: 10_000 }).toEqual([` (${n})`, `${n} pending`]);
    expect(await pendingCount()).toBe(n);
  });

  it("folds the search's filters under the search box until used", async () => {
    const filters = page.getByRole("button", { name: /^Filters/ });
    expect(await filters.getAttribute("aria-expanded")).toBe("false");
    expect(await page.getByLabel("Reader id").isVisible()).toBe(false);
    // the queue starts near the top: its first card within the first screen
    const first = (await page.getByRole("list", { name: "Pending comments" }).getByRole("listitem").first().boundingBox())!;
    expect(first.y).toBeLessThan(600);
    await filters.click();
    expect(await filters.getAttribute("aria-expanded")).toBe("true");
    await page.getByLabel("Reader id").fill("dee");
    await expect.poll(() => filters.textContent()).toContain("Filters (1 set)");
    await expectAccessible(page, "search filters open");
    await page.getByLabel("Reader id").fill("");
    await filters.click();
    expect(await page.getByLabel("Reader id").isVisible()).toBe(false);
  });

  it("saves votes, formatting and page reactions from General, and delivery from its own view", async () => {
    await page.goto(`${server.url}/console/#/settings`);
    await page.getByLabel("Votes on comments").waitFor();
    expect(await page.getByLabel("Comments are Markdown").isChecked()).toBe(true);
    expect(await page.getByLabel("Show images in comments (https only)").isChecked()).toBe(false);
    expect(await page.getByLabel("Page reactions", { exact: true }).isChecked()).toBe(false);
    await page.getByLabel("Votes on comments").selectOption("updown");
    await page.getByLabel("Show images in comments (https only)").check();
    await page.getByLabel("Page reactions", { exact: true }).check();
    await page.getByLabel("Page reaction kinds (comma-separated)").fill("up, heart");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page
      .locator(".save-bar")
      .getByRole("status")
      .filter({ hasText: "Settings saved: pageReactionKinds, formatting.images, votes." })
      .waitFor();
    let stored = (await t.api.get("/api/v1/settings")).body;
    expect(stored).toMatchObject({ votes: "updown", formatting: { markdown: true, images: true }, pageReactionKinds: ["up", "heart"] });
    await expectAccessible(page, "General settings");
    await shoot(page, "settings-votes-formatting");
    // page reactions off again: no kinds
    await page.getByLabel("Page reactions", { exact: true }).uncheck();
    await page.getByLabel("Votes on comments").selectOption("up");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator(".save-bar").getByRole("status").filter({ hasText: "Settings saved: pageReactionKinds, votes." }).waitFor();
    stored = (await t.api.get("/api/v1/settings")).body;
    expect(stored).toMatchObject({ votes: "up", pageReactionKinds: [] });

    // General holds no delivery tunables; Delivery & limits does
    expect(await page.getByLabel("Heartbeat (seconds)").count()).toBe(0);
    await page.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Delivery & limits" }).click();
    await page.getByLabel("Heartbeat (seconds)").fill("20");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator(".save-bar").getByRole("status").filter({ hasText: "Settings saved: stream.heartbeatSeconds." }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.stream.heartbeatSeconds).toBe(20);
    expect(location(page)).toBe("#/settings/delivery");
  });

  it("is accessible and fits at 390 px", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["moderation", "moderation/reported", "discussions/budget-2025", "settings", "settings/delivery"]) {
      await page.goto(`${server.url}/console/#/${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await settled(page);
      await expectAccessible(page, `${path} at 390 px`);
      expect(await overflow(page), `${path} fits 390 px`).toEqual([0]);
    }
    await page.goto(`${server.url}/console/#/moderation`);
    await settled(page);
    await shoot(page, "moderation-rendered-390");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("offers the link route on the sign-in page, naming the CLI as the README does", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in with a link" }).waitFor();
    expect(await page.locator("main pre code").textContent()).toBe("npm run cli -- console-link --tenant <id>");
    // the link route comes first; the password form is the other way in
    const link = (await page.getByRole("heading", { name: "Sign in with a link" }).boundingBox())!;
    const password = (await page.getByRole("heading", { name: "Or sign in with a password" }).boundingBox())!;
    expect(link.y).toBeLessThan(password.y);
    // a link-only owner who tries a password is pointed at the link
    await page.getByLabel("Tenant").fill(t.tenantId);
    await page.getByLabel("Email").fill("owner@localhost");
    await page.getByLabel("Password").fill("not-a-password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "sign in with a link instead" }).waitFor();
    await expectAccessible(page, "sign-in");
    await shoot(page, "sign-in-link");
    await page.setViewportSize({ width: 390, height: 844 });
    await expectAccessible(page, "sign-in at 390 px");
    expect(await overflow(page)).toEqual([0]);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

const location = (p: Page) => new URL(p.url()).hash;
