// Votes in <engagement-thread> (contract section 18), in headless Chromium on a host page of another
// origin with a strict CSP: each comment's score with ▲ (and ▼ under votes "updown"), pressed for the
// reader's own vote and pressed again to take it back, none on the reader's own comments; the Best and
// Score sorts in the menu only while votes are on; another reader's vote arrives live; axe-core finds
// nothing serious. Screenshot: docs/embed/votes.png with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, servePage, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("votes in <engagement-thread>", () => {
  let browser: Browser | undefined;
  let key: string;
  const pages: { close(): Promise<void> }[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all(pages.map((p) => p.close()));
    expect(violations).toEqual([]);
  });

  /** A host page for the discussion (scripts and connections to the service only, no inline styles), opened as `identity`. */
  async function open(d: string, identity: string | null, width = 900): Promise<Page> {
    const page = await servePage(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${server.url}; connect-src ${server.url}; style-src 'self'; img-src data:">
<title>An article</title></head><body><main><h1>An article</h1>
<engagement-thread discussion-id="${d}" publishable-key="${key}"></engagement-thread></main>
<script src="${server.url}/embed/v1/thread.js"></script></body></html>`);
    pages.push(page);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [page.origin] })).status).toBe(200);
    const p = await browser!.newPage({ viewport: { width, height: 700 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await p.goto(page.url);
    if (identity)
      await p.evaluate((tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      }, identity);
    await p.locator("engagement-thread ol[part=comments] article").first().waitFor();
    return p;
  }

  const thread = (p: Page) => p.locator("engagement-thread");
  const comment = (p: Page, text: string) => thread(p).locator("article", { has: p.locator(".body", { hasText: text }) });
  const score = (p: Page, text: string) => comment(p, text).locator("[part=score]").textContent();
  const bodies = (p: Page) => thread(p).locator("ol[part=comments] > li > article .body").allTextContents();
  const sorts = (p: Page) => thread(p).getByRole("combobox", { name: "Sort comments" }).locator("option").allTextContents();

  it("shows scores, votes up and down and back, sorts by Best and Score, and follows others' votes live", async () => {
    expect((await t.api.patch("/api/v1/settings", { votes: "updown" })).status).toBe(200);
    const d = "votes-1";
    const zed = await t.reader("zed", { name: "Zed" });
    const ids: Record<string, string> = {};
    for (const body of ["Plain take", "Popular take", "Contested take"]) {
      ids[body] = (await zed.post(`/api/v1/discussions/${d}/comments`, { body })).body.id as string;
    }
    const voters = await Promise.all(["v1", "v2", "v3", "v4"].map((s) => t.reader(s)));
    for (const [i, v] of voters.entries()) {
      await v.put(`/api/v1/comments/${ids["Popular take"]}/vote`, { value: 1 });
      await v.put(`/api/v1/comments/${ids["Contested take"]}/vote`, { value: i < 2 ? 1 : -1 });
    }
    const me = await t.identity("me", { name: "Mia" });
    const p = await open(d, me);
    await expect.poll(() => bodies(p)).toEqual(["Contested take", "Popular take", "Plain take"]);
    expect(await sorts(p)).toEqual(["Newest", "Oldest", "Top", "Best", "Score"]);
    expect(await score(p, "Popular take")).toContain("4");
    expect(await score(p, "Contested take")).toContain("0");

    // up, then down, then taken back: the arrow pressed is the reader's vote, the score follows
    const plain = comment(p, "Plain take");
    const up = plain.getByRole("button", { name: "Upvote" });
    const down = plain.getByRole("button", { name: "Downvote" });
    await up.click();
    await expect.poll(() => up.getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => score(p, "Plain take")).toMatch(/1$/);
    await down.click();
    await expect.poll(() => down.getAttribute("aria-pressed")).toBe("true");
    expect(await up.getAttribute("aria-pressed")).toBe("false");
    await expect.poll(() => score(p, "Plain take")).toMatch(/-1$/);
    expect((await t.api.get(`/api/v1/comments/${ids["Plain take"]}`)).body).toMatchObject({ score: -1, upvotes: 0, downvotes: 1 });
    await down.click();
    await expect.poll(() => down.getAttribute("aria-pressed")).toBe("false");
    await expect.poll(() => score(p, "Plain take")).toMatch(/0$/);
    await up.click();
    await expect.poll(() => score(p, "Plain take")).toMatch(/1$/);

    // the sorts by votes, as the API orders them
    const select = thread(p).getByRole("combobox", { name: "Sort comments" });
    await select.selectOption("best");
    await expect.poll(() => bodies(p)).toEqual(["Popular take", "Plain take", "Contested take"]);
    await select.selectOption("score");
    await expect.poll(() => bodies(p)).toEqual(["Popular take", "Plain take", "Contested take"]);
    expect(await comment(p, "Plain take").getByRole("button", { name: "Upvote" }).getAttribute("aria-pressed")).toBe("true");

    // another reader's vote arrives live
    await voters[0]!.put(`/api/v1/comments/${ids["Contested take"]}/vote`, { value: -1 });
    await expect.poll(() => score(p, "Contested take")).toMatch(/-2$/);

    // the reader's own comment shows its score, with nothing to press
    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("My own take");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    await comment(p, "My own take").waitFor();
    expect(
      await comment(p, "My own take")
        .getByRole("button", { name: /Upvote|Downvote/ })
        .count(),
    ).toBe(0);
    expect(await score(p, "My own take")).toMatch(/0$/);

    await expectAccessible(p, "embed thread with votes");
    await screenshot(p, { path: join(SHOTS, "votes.png"), fullPage: true });
    await p.close();
  });

  it('offers ▲ alone under votes "up", and neither arrows nor vote sorts when votes are off', async () => {
    const d = "votes-2";
    const zed = await t.reader("zed", { name: "Zed" });
    await zed.post(`/api/v1/discussions/${d}/comments`, { body: "Upvote me" });
    expect((await t.api.patch("/api/v1/settings", { votes: "up" })).status).toBe(200);
    const me = await t.identity("me2", { name: "Max" });
    const p = await open(d, me, 390);
    const c = comment(p, "Upvote me");
    await c.getByRole("button", { name: "Upvote" }).click();
    await expect.poll(() => score(p, "Upvote me")).toMatch(/1$/);
    expect(await c.getByRole("button", { name: "Downvote" }).count()).toBe(0);
    await p.close();

    expect((await t.api.patch("/api/v1/settings", { votes: "off" })).status).toBe(200);
    const q = await open(d, me);
    expect(await sorts(q)).toEqual(["Newest", "Oldest", "Top"]);
    expect(await thread(q).locator("[part~=votes]").count()).toBe(0);
    await q.close();
  });
});
