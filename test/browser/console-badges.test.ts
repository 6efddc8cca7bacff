// Reader badges (contract section 21) in the console, in headless Chromium: the moderation queue's
// cards show the author's badge (and the parent author's) as a pill by the name; a reader's page
// shows it and where it came from, sets a moderator's badge (which the API then answers, and which
// wins over the claim) and clears it. axe-core finds nothing serious.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, settled, shoot } from "../support/console-page.js";

const OWNER = "badges.owner@example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;

describe.skipIf(chromiumMissing)("badges in the console", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server, "The Badge Times");
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("the queue's cards and a reader's page show the badge; a moderator sets and clears it there", async () => {
    expect((await t.api.put("/api/v1/discussions/town", { title: "Town hall" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann", badge: "Staff" });
    const parent = await ann.post("/api/v1/discussions/town/comments", { body: "Welcome, all." });
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    await t.api.post(`/api/v1/comments/${parent.body.id}/approve`);
    const bo = await t.reader("bo", { name: "Bo", badge: "Subscriber" });
    expect((await bo.post("/api/v1/discussions/town/comments", { body: "Thanks!", parentId: parent.body.id })).status).toBe(201);

    await page.goto(`${server.url}/console/#/moderation`);
    const card = page.getByRole("listitem", { name: "Comment by Bo in Town hall" });
    await card.waitFor();
    await settled(page);
    await expect(card.locator(".reader .reader-badge").textContent()).resolves.toBe("Subscriber");
    await expect(card.locator(".parent .reader-badge").textContent()).resolves.toBe("Staff");
    await expectAccessible(page, "the queue with badges");

    await page.goto(`${server.url}/console/#/readers/bo`);
    await page.getByRole("heading", { level: 1, name: "Bo Subscriber" }).waitFor();
    await settled(page);
    const form = page.getByRole("form", { name: "Badge" });
    await form.getByText('Badge "Subscriber", from their identity.').waitFor();
    await form.getByLabel(/^Badge/).fill("Regular");
    await form.getByRole("button", { name: "Set badge" }).click();
    await page.getByRole("status").filter({ hasText: 'Set the badge "Regular".' }).waitFor();
    await form.getByText('Badge "Regular", set by a moderator.').waitFor();
    expect((await t.api.get("/api/v1/readers/bo")).body).toMatchObject({ badge: "Regular", badgeSource: "moderator" });
    await expectAccessible(page, "a reader's page with a badge");
    await shoot(page, "reader-badge");

    await form.getByRole("button", { name: "Clear badge" }).click();
    await page.getByRole("status").filter({ hasText: "Cleared the badge." }).waitFor();
    await form.getByText("No badge.").waitFor();
    expect((await t.api.get("/api/v1/readers/bo")).body).toMatchObject({ badge: null, badgeSource: null });
  });
});
