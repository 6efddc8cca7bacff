// A reader's badge (contract section 21) in <engagement-thread> in headless Chromium on a host page
// of another origin with a strict CSP: a small pill after the author's name (part "badge
// reader-badge"), the tenant's own text as is, none for a reader without one; a moderator's badge
// shows instead of the claim's. axe-core finds nothing. Screenshot: docs/embed/ with
// UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";
import { embedBrowser, type EmbedBrowser } from "../support/embed.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("a reader's badge in <engagement-thread>", () => {
  let embed: EmbedBrowser | undefined;

  beforeAll(async () => {
    embed = await embedBrowser(server.url, t);
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await embed?.close();
    expect(embed?.violations).toEqual([]);
  });

  async function open(discussionId: string): Promise<Page> {
    const p = await embed!.newPage();
    await p.goto(embed!.host.url(discussionId));
    await p
      .locator("engagement-thread")
      .getByRole("heading", { name: /Comments/ })
      .waitFor();
    await p.locator("engagement-thread ol[part=comments]").waitFor({ state: "attached" });
    return p;
  }

  const article = (p: Page, text: string) => p.locator("engagement-thread article", { has: p.locator(".body", { hasText: text }) });

  it("shows the badge as a pill after the name; none without one; a moderator's instead of the claim's", async () => {
    const d = "badges-1";
    await t.api.put(`/api/v1/discussions/${d}`, { title: "Badges" });
    const ann = await t.reader("ann", { name: "Ann", badge: "Staff" });
    const bob = await t.reader("bob", { name: "Bob" });
    const cat = await t.reader("cat", { name: "Cat", badge: "Subscriber" });
    await bob.post(`/api/v1/discussions/${d}/comments`, { body: "No badge here" });
    await ann.post(`/api/v1/discussions/${d}/comments`, { body: "Posted by staff" });
    await cat.post(`/api/v1/discussions/${d}/comments`, { body: "A moderator's pick" });
    const mod = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    expect((await mod.patch("/api/v1/readers/cat", { badge: "Top fan ★" })).status).toBe(200);

    const p = await open(d);
    const annPill = article(p, "Posted by staff").locator("[part~=badge][part~=reader-badge]");
    await annPill.waitFor();
    await expect(annPill.textContent()).resolves.toBe("Staff");
    // right after the author's name
    await expect(article(p, "Posted by staff").locator("[part=author] + [part~=reader-badge]").count()).resolves.toBe(1);
    await expect(article(p, "No badge here").locator("[part~=reader-badge]").count()).resolves.toBe(0);
    await expect(article(p, "A moderator's pick").locator("[part~=reader-badge]").textContent()).resolves.toBe("Top fan ★");
    // a pill: rounded, with a border
    const style = await annPill.evaluate((el) => {
      const s = getComputedStyle(el);
      return { radius: parseFloat(s.borderTopLeftRadius), border: s.borderTopStyle };
    });
    expect(style.radius).toBeGreaterThan(4);
    expect(style.border).toBe("solid");
    await expectAccessible(p, "engagement-thread");
    await screenshot(p.locator("engagement-thread"), { path: join(SHOTS, "thread-badges.png") });
    await p.close();
  });

  it("shows a deleted comment with replies as a tombstone naming no one: no name, badge, avatar or initial", async () => {
    const d = "badges-deleted";
    await t.api.put(`/api/v1/discussions/${d}`, { title: "Deleted" });
    const dee = await t.reader("dee", { name: "Dee Secret", badge: "Staff", avatarUrl: "https://img.example/dee.png" });
    const eve = await t.reader("eve", { name: "Eve" });
    const gone = await dee.post(`/api/v1/discussions/${d}/comments`, { body: "Soon gone" });
    await eve.post(`/api/v1/discussions/${d}/comments`, { body: "A reply that stays", parentId: gone.body.id });
    expect((await dee.del(`/api/v1/comments/${gone.body.id}`)).status).toBeLessThan(300);

    const p = await open(d);
    const tombstone = p.locator("engagement-thread article", { has: p.locator(".tombstone") });
    await tombstone.waitFor();
    await p.locator("engagement-thread article .body", { hasText: "A reply that stays" }).waitFor();
    const text = (await tombstone.first().textContent()) ?? "";
    expect(text).not.toMatch(/Dee|Secret|Staff/);
    await expect(tombstone.first().locator("img").count()).resolves.toBe(0);
    await expect(tombstone.first().locator(".avatar").textContent()).resolves.toMatch(/^\s*$/);
    await expectAccessible(p, "engagement-thread");
    await screenshot(p.locator("engagement-thread"), { path: join(SHOTS, "thread-deleted.png") });
    await p.close();
  });
});
