// The admin console as a moderator sees it, in headless Chromium: the
// queue's shortcuts work on load; cards show the discussion's title, the comment replied to, the
// reader and why a safety rule held it; Approve, Reject, Pin look different and Pin is only on published comments; bulk approve;
// a discussion's page lists every comment with its status and actions, counted right; an owner's
// screen says why it is not shown; a link for an email that is no operator says so; the navigation
// keeps Sign out on its row at 1280 px; the live feed's repeat of comments already shown leaves the
// notice of an action alone. axe-core at 1280 and 390 px on each.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, operatorLink, overflow, settled, shoot } from "../support/console-page.js";

const MODERATOR = "a.rather.long.moderator.address@newsroom.example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
const link = (email: string) => operatorLink(server, t.tenantId, email);
const statusOf = async (id: string) => (await t.api.get(`/api/v1/comments/${id}`)).body;

/** Posts as a reader named `name` (id = name lowercased). */
async function post(discussion: string, name: string, body: string, parentId?: string): Promise<string> {
  const who = t.as({ key: t.apiKey, identity: await t.identity(name.toLowerCase(), { name }) });
  const r = await who.post(`/api/v1/discussions/${discussion}/comments`, { body, ...(parentId ? { parentId } : {}) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

describe.skipIf(chromiumMissing)("the admin console for a moderator", { timeout: 120_000 }, () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server);
    await t.api.patch("/api/v1/settings", { moderation: "pre", safety: { suspectWords: ["cheap"] } });
    await t.api.put("/api/v1/discussions/budget", { title: "The council's budget" });
    ids.ann = await post("budget", "Ann", "The library cuts are a mistake.");
    await t.api.post(`/api/v1/comments/${ids.ann}/approve`);
    ids.bo = await post("budget", "Bo", "You are an idiot and so is everyone who agrees.", ids.ann);
    ids.cy = await post("budget", "Cy", "The pool matters more than the library.");
    ids.dee = await post("budget", "Dee", "Buy cheap watches at spam.example");
    ids.eve = await post("budget", "Eve", "Could the council publish the line items?");
    ({ browser, page } = await openConsole(server, t, { as: { email: MODERATOR, role: "moderator" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("keeps Sign out on the navigation's row at 1280 px", async () => {
    const nav = (await page.getByRole("navigation", { name: "Main" }).boundingBox())!;
    const out = (await page.getByRole("button", { name: "Sign out" }).boundingBox())!;
    expect(out.y).toBeLessThan(nav.y + nav.height);
    expect(out.y + out.height).toBeGreaterThan(nav.y);
    expect(out.x).toBeGreaterThan(nav.x + nav.width);
  });

  it("shows each card's discussion, parent and reader; shortcuts work on load; Pin is not offered on pending comments", async () => {
    await page.goto(`${server.url}/console/#/moderation`);
    await page.reload(); // a fresh load: nothing clicked, nothing focused
    const bo = page.getByRole("listitem", { name: "Comment by Bo in The council's budget" });
    await bo.waitFor();
    await settled(page);
    const text = (await bo.textContent())!;
    expect(text).toContain("The council's budget");
    expect(text).toContain("In reply to Ann");
    expect(text).toContain("The library cuts are a mistake.");
    expect(text).toContain("(reader bo)");
    expect(text).not.toContain("Why:"); // held by the tenant's pre-moderation, no rule
    // a comment a safety rule held says which rule and words
    const dee = (await page.getByRole("listitem", { name: /Comment by Dee/ }).textContent())!;
    expect(dee).toContain("Why: suspect word: cheap (held by a rule)");
    expect(await bo.getByRole("button", { name: "Pin" }).count()).toBe(0);
    const approve = bo.getByRole("button", { name: "Approve", exact: true });
    const reject = bo.getByRole("button", { name: "Reject", exact: true });
    const colour = (l: typeof approve) => l.evaluate((b) => getComputedStyle(b).backgroundColor);
    expect(await colour(approve)).not.toBe(await colour(reject));
    await expectAccessible(page, "the queue of a moderator");
    await shoot(page, "moderation-queue");

    // oldest first: Bo, Cy, Dee, Eve; j moves to Cy, a approves Cy, with no click before
    await page.keyboard.press("j");
    await page.keyboard.press("a");
    await page.getByRole("listitem", { name: /Comment by Cy/ }).waitFor({ state: "detached" });
    expect((await statusOf(ids.cy!)).status).toBe("approved");
    expect((await statusOf(ids.bo!)).status).toBe("pending");
  });

  it("approves the selected cards at once", async () => {
    await page.getByRole("checkbox", { name: "Select the Comment by Bo in The council's budget" }).check();
    await page.getByRole("checkbox", { name: "Select the Comment by Eve in The council's budget" }).check();
    await page.getByRole("button", { name: "Approve 2 selected comments" }).click();
    await page.getByRole("status").filter({ hasText: "Approved 2 comments." }).waitFor();
    expect((await statusOf(ids.bo!)).status).toBe("approved");
    expect((await statusOf(ids.eve!)).status).toBe("approved");
    expect((await statusOf(ids.dee!)).status).toBe("pending");
    await page
      .getByRole("listitem", { name: /Comment by Dee/ })
      .getByRole("button", { name: "Reject", exact: true })
      .click();
    await page.getByText("Nothing to moderate.").waitFor();
    expect((await statusOf(ids.dee!)).status).toBe("rejected");
  });

  it("lists every comment of a discussion with its status and actions, counted right; deletes an approved abusive one", async () => {
    ids.fay = await post("budget", "Fay", "Waiting for approval");
    await page.goto(`${server.url}/console/#/discussions/budget`);
    await page.getByRole("heading", { name: "The council's budget" }).waitFor();
    await settled(page);
    const counts = page.locator(".counts");
    await expect.poll(() => counts.textContent()).toBe("4 published comments · 1 pending · 1 rejected · 0 deleted");
    const fay = page.getByRole("listitem", { name: "Comment by Fay, pending" });
    await fay.getByRole("button", { name: "Approve", exact: true }).waitFor();
    expect(await fay.getByRole("button", { name: "Pin" }).count()).toBe(0);
    await page.getByRole("listitem", { name: "Comment by Dee, rejected" }).waitFor();
    await expectAccessible(page, "a discussion for a moderator");
    await shoot(page, "discussion-moderation");

    // the abusive reply was approved by mistake: delete it here
    const bo = page.getByRole("listitem", { name: "Comment by Bo, published" });
    await bo.getByRole("button", { name: "Delete" }).click();
    await bo.getByRole("button", { name: "Confirm delete" }).click();
    await page.getByRole("listitem", { name: "Comment by Bo, deleted" }).waitFor();
    expect((await statusOf(ids.bo!)).status).toBe("deleted");
    await expect.poll(() => counts.textContent()).toBe("3 published comments · 1 pending · 1 rejected · 1 deleted");

    // pin a published comment, then unpin it
    const ann = page.getByRole("listitem", { name: "Comment by Ann, published" });
    await ann.getByRole("button", { name: "Pin", exact: true }).click();
    await ann.getByRole("button", { name: "Unpin" }).waitFor();
    expect((await statusOf(ids.ann!)).pinned).toBe(true);
    await ann.getByRole("button", { name: "Unpin" }).click();
    await ann.getByRole("button", { name: "Pin", exact: true }).waitFor();
    expect((await statusOf(ids.ann!)).pinned).toBe(false);

    // one published comment is "1 published comment"
    await t.api.put("/api/v1/discussions/single", { title: "One reply" });
    await t.api.post(`/api/v1/comments/${await post("single", "Gus", "Only me")}/approve`);
    await page.goto(`${server.url}/console/#/discussions/single`);
    await page.getByRole("heading", { name: "One reply" }).waitFor();
    await expect.poll(() => page.locator(".counts").textContent()).toBe("1 published comment · 0 pending · 0 rejected · 0 deleted");
  });

  it("keeps the notice of an action when the live feed's first answer repeats comments already shown", async () => {
    // the feed's first answer (1.5 s after it begins) carries the pending comments of the 10 s before
    // it, which the queue has just loaded: they are no news, and the notice says what was done
    await t.api.put("/api/v1/discussions/quiet", { title: "A quiet thread" });
    const hal = await post("quiet", "Hal", "First in the quiet thread");
    await post("quiet", "Ivy", "Second in the quiet thread");
    await page.goto(`${server.url}/console/#/moderation`);
    await page.reload();
    const card = page.getByRole("listitem", { name: "Comment by Hal in A quiet thread" });
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const notice = page.getByRole("status").filter({ hasText: "Approved the comment by Hal." });
    await notice.waitFor();
    expect((await statusOf(hal)).status).toBe("approved");
    await page.waitForTimeout(3_000); // past the feed's first answer: the server reads the queue every 1.5 s
    expect(await notice.count()).toBe(1);
    expect(await page.getByRole("status").filter({ hasText: "New pending comment" }).count()).toBe(0);
    expect(await page.getByRole("listitem", { name: "Comment by Ivy in A quiet thread" }).count()).toBe(1);
    await shoot(page, "moderation-notice-kept");
  });

  it("tells a moderator why an owner's screen is not shown", async () => {
    for (const [path, name] of [
      ["keys", "Keys"],
      ["settings", "Settings"],
      ["audit", "Audit log"],
    ] as const) {
      await page.goto(`${server.url}/console/#/${path}`);
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.textContent()).toContain(`${name} is for owners of this tenant`);
      expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).count()).toBe(0);
    }
    await expectAccessible(page, "an owner's screen for a moderator");
    await shoot(page, "owners-only");
  });

  it("is accessible and fits at 390 px", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["moderation", "discussions/budget", "keys"]) {
      await page.goto(`${server.url}/console/#/${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await settled(page);
      await expectAccessible(page, `${path} at 390 px`);
      expect(await overflow(page), `${path} fits 390 px`).toEqual([0]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("says a sign-in link names no operator of the tenant, rather than that it expired", async () => {
    const fresh = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    await fresh.goto(link("nobody@example.com"));
    const alert = fresh.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("not an operator of this tenant");
    await fresh.getByRole("button", { name: "Sign in", exact: true }).waitFor();
    await expectAccessible(fresh, "sign-in after an unknown operator's link");
    await shoot(fresh, "sign-in-unknown-operator");
    await fresh.close();
  });
});
