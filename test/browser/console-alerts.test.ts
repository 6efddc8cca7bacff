// The console's Settings › Chat alerts (contract section 21) in headless Chromium, against a real
// server and Slack- and Discord-shaped receivers on loopback: an owner adds two alerts (chat, URL,
// triggers), saves them (read back through GET /api/v1/settings, the URLs masked), sees a problem
// beside its field, keeps a saved URL by leaving it empty, sends a test to each (the receivers get the
// sample, the answer is said in words) and removes one. axe-core at 1280 and 390 px; screenshot
// docs/console/settings-alerts.png with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const OWNER = "alerts.owner@example.com";

let server: TestServer;
let t: TestTenant;
let slack: Receiver;
let discord: Receiver;
let browser: Browser | undefined;
let page: Page;

const alerts = async () => (await t.api.get("/api/v1/settings")).body.alerts;
const row = (n: number) => page.getByRole("group", { name: `Alert ${n}`, exact: true });

describe.skipIf(chromiumMissing)("the console's chat alerts", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    slack = await startReceiver(() => ({ status: 200, body: "ok" }));
    discord = await startReceiver(() => ({ status: 404, body: { message: "Unknown Webhook", code: 10015 } }));
    server = await startServer();
    t = await createTestTenant(server, "The Daily");
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await slack?.close();
    await discord?.close();
  });

  it("adds, saves, keeps a URL write-only, sends tests and removes alerts", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Chat alerts", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Chat alerts" }).waitFor();
    // the heading is there before the settings are: wait for what the settings say (no alerts yet)
    await page.getByText("No chat alerts yet.").waitFor();
    await settled(page);
    expect(await page.getByText("No chat alerts yet.").count()).toBe(1);
    await expectAccessible(page, "Settings › Chat alerts, empty");

    // two new alerts; the second without a URL is refused beside its field, by the console first
    await page.getByRole("button", { name: "Add alert" }).click();
    await row(1).getByLabel("Incoming webhook URL").fill(`${slack.url}/services/T1/B1/SECRET1`);
    await row(1).getByLabel("Readers report a comment (at the report threshold)").check();
    await page.getByRole("button", { name: "Add alert" }).click();
    await row(2).getByLabel("Chat").selectOption("discord");
    await row(2).getByLabel("The moderation hook holds a new comment").check();
    await page.getByRole("button", { name: "Save chat alerts" }).click();
    expect(await row(2).locator(".field-error").textContent()).toBe("is required for a new alert");
    await expectAccessible(page, "Settings › Chat alerts with a problem");
    // the service's own refusal (its SSRF guard) is shown beside the field too
    await row(2).getByLabel("Incoming webhook URL").fill("https://10.0.0.1/api/webhooks/1/x");
    await page.getByRole("button", { name: "Save chat alerts" }).click();
    await row(2).locator(".field-error").waitFor();
    expect(await row(2).getByLabel("Incoming webhook URL").getAttribute("aria-invalid")).toBe("true");
    await row(2).getByLabel("Incoming webhook URL").fill(`${discord.url}/api/webhooks/2/SECRET2`);
    await page.getByRole("button", { name: "Save chat alerts" }).click();
    await page.getByText("Chat alerts saved: 2 alerts.").waitFor();
    await settled(page);
    const origin = new URL(slack.url).origin;
    expect(await alerts()).toEqual([
      { id: expect.stringMatching(/^alr_/), kind: "slack", url: `${origin}/…`, on: ["pending", "reported"] },
      { id: expect.stringMatching(/^alr_/), kind: "discord", url: `${new URL(discord.url).origin}/…`, on: ["pending", "hook_hold"] },
    ]);
    // the saved URL is not shown: the field is empty, its hint says what is saved
    expect(await row(1).getByLabel("Incoming webhook URL").inputValue()).toBe("");
    expect(await page.content()).not.toContain("SECRET1");

    // Send test: the chat's answer in words
    await row(1).getByRole("button", { name: "Send test of alert 1" }).click();
    await row(1).getByRole("status").filter({ hasText: "Delivered: the chat answered 200" }).waitFor();
    expect(slack.requests.at(-1)!.path).toBe("/hook/services/T1/B1/SECRET1");
    expect(slack.requests.at(-1)!.json.blocks[0].text.text).toMatch(/^\[Test\]/);
    await row(2).getByRole("button", { name: "Send test of alert 2" }).click();
    await row(2).getByRole("status").filter({ hasText: "Not delivered: HTTP 404" }).waitFor();
    expect(discord.requests.at(-1)!.json.embeds).toHaveLength(1);
    await expectAccessible(page, "Settings › Chat alerts, tests sent");
    expect(await overflow(page)).toEqual([0]);
    await shoot(page, "settings-alerts");

    // a trigger changed, the URL left empty: kept
    await row(1).getByLabel("A new comment is held for review").uncheck();
    await page.getByRole("button", { name: "Save chat alerts" }).click();
    await page.getByText("Chat alerts saved: 2 alerts.").waitFor();
    await settled(page);
    const [first] = await alerts();
    expect(first).toMatchObject({ kind: "slack", url: `${origin}/…`, on: ["reported"] });
    const stored = await server.app.runtime.services.prisma.tenant.findUniqueOrThrow({ where: { id: t.tenantId } });
    expect(server.app.runtime.services.secretBox.open((stored.settings as any).alerts[0].urlEnc)).toBe(
      `${slack.url}/services/T1/B1/SECRET1`,
    );

    // removed
    await page.getByRole("button", { name: "Remove alert 2" }).click();
    await page.getByRole("button", { name: "Save chat alerts" }).click();
    await page.getByText("Chat alerts saved: 1 alert.").waitFor();
    await settled(page);
    expect((await alerts()).map((a: any) => a.kind)).toEqual(["slack"]);

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "Settings › Chat alerts at 390 px");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("an alert's Approve link opens a page that asks first, and its button approves", async () => {
    await t.api.patch("/api/v1/settings", {
      moderation: "pre",
      alerts: [{ kind: "slack", on: ["pending"], url: `${slack.url}/services/T1/B1/SECRET1` }],
    });
    await t.api.put("/api/v1/discussions/launch", { title: "Launch day", url: "https://news.example/launch" });
    const ann = await t.reader("ann", { name: "Ann Reader" });
    const c = await ann.post("/api/v1/discussions/launch/comments", { body: "Is this **held**?\nA second line." });
    const before = slack.requests.length;
    await server.app.runtime.services.webhooks.worker.runOnce();
    const sent = slack.requests.slice(before).find((r) => JSON.stringify(r.json).includes(c.body.id))!;
    const approve = sent.json.blocks.find((b: any) => b.type === "actions").elements[0].url as string;
    await page.goto(approve);
    await page.getByRole("heading", { level: 1, name: "Approve this comment?" }).waitFor();
    expect(await page.textContent("main")).toContain("Ann Reader");
    await expectAccessible(page, "an alert link's confirm page");
    expect(await overflow(page)).toEqual([0]);
    await shoot(page, "alert-link-confirm");
    expect((await t.api.get(`/api/v1/comments/${c.body.id}`)).body.status).toBe("pending");
    await page.getByRole("button", { name: "Approve comment" }).click();
    await page.getByRole("heading", { level: 1, name: "Comment approved" }).waitFor();
    await expectAccessible(page, "an alert link's done page");
    expect((await t.api.get(`/api/v1/comments/${c.body.id}`)).body.status).toBe("approved");
    // the alert's decision is made: this link, and its Reject link, say so and who decided
    const reject = sent.json.blocks.find((b: any) => b.type === "actions").elements[1].url as string;
    for (const used of [approve, reject]) {
      await page.goto(used);
      await page.getByRole("heading", { level: 1, name: "Already decided" }).waitFor();
      expect(await page.textContent("main")).toContain("already used");
      expect(await page.textContent("main")).toContain(
        used === approve ? "approved by this link" : "approved by this alert's Approve link",
      );
    }
    await expectAccessible(page, "an alert link's page once decided");
  });
});
