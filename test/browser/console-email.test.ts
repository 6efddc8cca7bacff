// The console's email pieces (contract section 15) in headless Chromium, against real servers and a
// real SMTP server on loopback: Settings › Email says whether email goes out (on, kept in the Outbox,
// or off with what turns it on), saves the tenant's `email` settings with only the fields changed
// (read back through GET /api/v1/settings), shows the answer's problems beside their fields, and "Send
// test email" arrives at the SMTP server and is answered in words ("Email is off" without SMTP_URL);
// a reader's page says whether the service holds an address for them and how often they hear of
// replies; under EMAIL_OUTBOX=1 the Outbox (in the navigation only then) lists a reply email and shows
// its plain text, the HTML part only as source. axe-core at 1280 and 390 px; screenshots
// docs/console/settings-email.png and docs/console/outbox.png with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/lib/clock.js";
import { isolatedDatabase } from "../support/database.js";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, screenshot } from "../support/chromium.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const OWNER = "email.owner@example.com";
const MIN = 60_000;

let smtp: TestSmtp;
let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;

/** An owner of a new tenant on `s`, signed in in a browser context of its own (the session cookie is per host, not per port). */
const signedIn = (s: TestServer, tenant: TestTenant) => openConsole(s, tenant, { browser, as: { email: OWNER, role: "owner" } });

const mainNav = (p: Page) => p.getByRole("navigation", { name: "Main" });

async function openEmailSettings(p: Page) {
  await mainNav(p).getByRole("link", { name: "Settings", exact: true }).click();
  await p.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Email", exact: true }).click();
  await p.getByRole("heading", { level: 1, name: "Email" }).waitFor();
  await settled(p);
}

const field = (label: string) => page.getByLabel(label, { exact: true });
const save = () => page.getByRole("button", { name: "Save email settings" }).click();
const status = (p: Page, text: string) => p.getByRole("status").filter({ hasText: text }).waitFor();
const emailSettings = async () => (await t.api.get("/api/v1/settings")).body.email;

describe.skipIf(chromiumMissing)("the console's email", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startServer({ SMTP_URL: smtp.url, EMAIL_FROM: "Comments <comments@service.example>" });
    t = await createTestTenant(server, "The Daily");
    ({ browser, page } = await signedIn(server, t));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.close();
  });

  it("Settings › Email: says email is on, saves only what changed, and reads back through the REST API", async () => {
    await openEmailSettings(page);
    const state = page.getByRole("region", { name: "Email status" });
    expect(await state.textContent()).toContain("Email is on.");
    expect(await state.textContent()).toContain("Comments <comments@service.example>");
    // the server's defaults
    expect(await field("From").inputValue()).toBe("");
    expect(await field("Reply-to").inputValue()).toBe("");
    expect(await field("Digest hour (UTC)").inputValue()).toBe("7");
    expect(await page.getByRole("combobox", { name: "Default for readers", exact: true }).inputValue()).toBe("off");
    expect(await field("Daily limit per reader").inputValue()).toBe("20");
    // no Outbox while email is sent
    expect(await mainNav(page).getByRole("link", { name: "Outbox" }).count()).toBe(0);

    await field("From").fill("The Daily <news@daily.example>");
    await field("Reply-to").fill("letters@daily.example");
    await field("Digest hour (UTC)").fill("18");
    await page.getByRole("combobox", { name: "Default for readers", exact: true }).selectOption("daily");
    const sent = page
      .waitForRequest((r) => r.url().endsWith("/graphql") && (r.postData() ?? "").includes("mutation UpdateEmailSettings"))
      .then((r) => JSON.parse(r.postData()!).variables.input);
    await save();
    expect(await sent).toEqual({
      email: { from: "The Daily <news@daily.example>", replyTo: "letters@daily.example", digestHour: 18, defaultReplies: "daily" },
    });
    await status(page, "Email settings saved: from, replyTo, digestHour, defaultReplies.");
    expect(await emailSettings()).toEqual({
      from: "The Daily <news@daily.example>",
      replyTo: "letters@daily.example",
      digestHour: 18,
      defaultReplies: "daily",
      maxPerReaderPerDay: 20,
      smtpUrl: null,
    });
    // the status follows the new sender
    await state.getByText("The Daily <news@daily.example>").waitFor();

    // the form shows what is stored; untouched, nothing is sent
    await page.reload();
    await settled(page);
    expect(await field("From").inputValue()).toBe("The Daily <news@daily.example>");
    expect(await page.getByRole("combobox", { name: "Default for readers", exact: true }).inputValue()).toBe("daily");
    await save();
    await status(page, "Nothing changed");

    // an emptied Reply-to is null; the limit on its own
    await field("Reply-to").fill("");
    await field("Daily limit per reader").fill("50");
    await save();
    await status(page, "Email settings saved: replyTo, maxPerReaderPerDay.");
    expect(await emailSettings()).toMatchObject({ replyTo: null, maxPerReaderPerDay: 50, from: "The Daily <news@daily.example>" });
    await expectAccessible(page, "Settings › Email");
    expect(await overflow(page)).toEqual([0]);
  });

  it("SMTP server: the tenant's own, stored sealed and shown masked; a masked URL edited must be typed whole", async () => {
    await openEmailSettings(page);
    const url = smtp.url.replace("smtp://", "smtp://mailer:pw-123456@");
    await field("SMTP server").fill(url);
    await save();
    await status(page, "Email settings saved: smtpUrl.");
    const masked = url.replace("pw-123456", "****");
    expect((await emailSettings()).smtpUrl).toBe(masked);
    await page.reload();
    await settled(page);
    expect(await field("SMTP server").inputValue()).toBe(masked);
    // a change that keeps the mask is refused here, before anything is sent
    await field("SMTP server").fill(masked.replace("mailer", "other"));
    await save();
    await page.getByText("type the whole URL again, with its password").waitFor();
    expect((await emailSettings()).smtpUrl).toBe(masked);
    // emptied: the service's again
    await field("SMTP server").fill("");
    await save();
    await status(page, "Email settings saved: smtpUrl.");
    expect((await emailSettings()).smtpUrl).toBeNull();
  });

  it("the moderation queue's toolbar sets the signed-in operator's own digest", async () => {
    await mainNav(page).getByRole("link", { name: "Moderation", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Moderation queue" }).waitFor();
    await settled(page);
    const choice = page.getByRole("combobox", { name: "Email me a digest", exact: true });
    expect(await choice.inputValue()).toBe("off");
    await choice.selectOption("hourly");
    await page.getByRole("status").filter({ hasText: "Digest hourly: the next at" }).waitFor();
    const digest = async () =>
      (
        await server.app.runtime.services.sql.query<{ d: string }>(`SELECT moderation_digest AS d FROM operators WHERE tenant_id = $1`, [
          t.tenantId,
        ])
      ).map((r) => r.d);
    expect(await digest()).toEqual(["hourly"]);
    await expectAccessible(page, "Moderation queue with the digest choice");
    await choice.selectOption("off");
    await page.getByRole("status").filter({ hasText: "No digest emails." }).waitFor();
    expect(await digest()).toEqual(["off"]);
    await openEmailSettings(page); // where the tests after this one start
  });

  it("shows the answer's problems beside their fields and saves nothing", async () => {
    const before = await emailSettings();
    await field("From").fill("not an address");
    await field("Daily limit per reader").fill("5000");
    await save();
    await page.getByRole("alert").filter({ hasText: "see the messages beside them" }).waitFor();
    const from = field("From");
    expect(await from.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#err-email-from").textContent()).toMatch(/address/);
    expect(await from.getAttribute("aria-describedby")).toContain("err-email-from");
    expect(await field("Daily limit per reader").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#err-email-maxPerReaderPerDay").textContent()).toMatch(/1000/);
    expect(await field("Digest hour (UTC)").getAttribute("aria-invalid")).toBeNull();
    expect(await emailSettings()).toEqual(before);
    await expectAccessible(page, "Settings › Email with problems");

    // a field that is not a whole number is refused before anything is sent
    await field("From").fill("The Daily <news@daily.example>");
    await field("Daily limit per reader").fill("50");
    await field("Digest hour (UTC)").fill("");
    await save();
    expect(await page.locator("#err-email-digestHour").textContent()).toContain("0 to 23");
    await field("Digest hour (UTC)").fill("18");
    await save();
    await status(page, "Nothing changed");
  });

  it("Send test email arrives at the SMTP server and is answered with its message id", async () => {
    await page.reload();
    await settled(page);
    const address = page.getByLabel("Address", { exact: true });
    await address.fill("ops@daily.example");
    await page.getByRole("button", { name: "Send test email" }).click();
    await status(page, "Sent to ops@daily.example.");
    const [mail] = await smtp.waitFor(1);
    expect(mail!.subject).toBe("Test email from The Daily");
    expect(mail!.from?.text).toBe('"The Daily" <news@daily.example>');
    const answer = await page.getByRole("status").filter({ hasText: "Sent to" }).textContent();
    expect(answer).toContain(mail!.messageId!.replace(/^<|>$/g, ""));

    // the SMTP server's refusal in words
    smtp.refuse.set("gone@daily.example", 550);
    await address.fill("gone@daily.example");
    await page.getByRole("button", { name: "Send test email" }).click();
    await status(page, "Not sent:");
    smtp.refuse.clear();

    // not an address: the problem beside the field
    await address.fill("nobody");
    await page.getByRole("button", { name: "Send test email" }).click();
    await page.locator("#err-email-test-to").waitFor();
    expect(await address.getAttribute("aria-invalid")).toBe("true");

    await address.fill("ops@daily.example");
    await page.getByRole("button", { name: "Send test email" }).click();
    await status(page, "Sent to ops@daily.example.");
    await settled(page);
    await expectAccessible(page, "Settings › Email, a test sent");
    await shoot(page, "settings-email");

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "Settings › Email at 390 px");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("a reader's page: whether the service holds their address, and how often they hear of replies", async () => {
    expect((await t.api.put("/api/v1/discussions/rivers", { title: "On rivers", url: "https://daily.example/rivers" })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann", email: "ann@readers.example" });
    expect((await ann.post("/api/v1/discussions/rivers/comments", { body: "Rivers remember." })).status).toBe(201);
    const bo = await t.reader("bo", { name: "Bo" });
    expect((await bo.post("/api/v1/discussions/rivers/comments", { body: "And forget nothing." })).status).toBe(201);
    expect((await bo.patch("/api/v1/me/notifications", { replies: "immediate" })).status).toBe(200);
    // bo follows the discussion and has a reply from ann in his inbox
    expect((await bo.put("/api/v1/discussions/rivers/subscription", { mode: "all" })).status).toBe(200);
    const boComment = (await bo.get("/api/v1/discussions/rivers/comments")).body.items.find(
      (c: { body: string }) => c.body === "And forget nothing.",
    );
    expect((await ann.post("/api/v1/discussions/rivers/comments", { body: "Nor do we.", parentId: boComment.id })).status).toBe(201);

    const text = async () => (await page.locator("dl.reader-email").innerText()).replace(/\s+/g, " ").trim();
    await page.goto(`${server.url}/console/#/readers/ann`);
    await page.getByRole("heading", { level: 1, name: "Ann" }).waitFor();
    await settled(page);
    expect(await text()).toBe("Email Verified address Reply emails daily (tenant default)");
    await expectAccessible(page, "a reader's page with email");

    await page.goto(`${server.url}/console/#/readers/bo`);
    await page.getByRole("heading", { level: 1, name: "Bo" }).waitFor();
    await settled(page);
    expect(await text()).toBe("Email No address Reply emails immediate (reader's choice)");
    // what they follow, and their inbox's size
    await page.getByText("Follows 1 discussion. Their inbox holds 1 item, 1 unread.").waitFor();
    await page
      .getByRole("list", { name: "Discussions they follow or silenced" })
      .getByText(/On rivers rivers · following since/)
      .waitFor();
    await expectAccessible(page, "a reader's page with what they follow");
    await screenshot(page, { path: "/tmp/engagement-console-shots/reader-following.png", fullPage: true });
  });

  it("without SMTP_URL: says plainly that email is off and what turns it on; a test email is answered “Email is off”", async () => {
    const off = await startServer();
    try {
      const tenant = await createTestTenant(off);
      const s = await signedIn(off, tenant);
      await openEmailSettings(s.page);
      const state = s.page.getByRole("region", { name: "Email status" });
      expect(await state.textContent()).toContain("Email is off.");
      expect(await state.textContent()).toContain("SMTP_URL");
      expect(await mainNav(s.page).getByRole("link", { name: "Outbox" }).count()).toBe(0);
      await s.page.getByLabel("Address", { exact: true }).fill("ops@daily.example");
      await s.page.getByRole("button", { name: "Send test email" }).click();
      await status(s.page, "Email is off");
      await settled(s.page);
      await expectAccessible(s.page, "Settings › Email, email off");
      await s.context.close();
    } finally {
      await off.stop();
    }
  });

  it("EMAIL_OUTBOX=1: the Outbox lists a reply email and shows its text, the HTML only as source", async () => {
    const clock = manualClock(new Date());
    // its worker pass takes what is due in the whole database: a database of its own
    const db = await isolatedDatabase("console_outbox");
    const outbox = await startServer({ ...db.env, EMAIL_OUTBOX: "1", PUBLIC_URL: "https://comments.weekly.example" }, { clock });
    try {
      const tenant = await createTestTenant(outbox, "The Weekly");
      expect((await tenant.api.patch("/api/v1/settings", { email: { defaultReplies: "immediate" } })).status).toBe(200);
      expect((await tenant.api.put("/api/v1/discussions/kept", { title: "Kept", url: "https://weekly.example/kept" })).status).toBe(201);
      const iat = Math.floor(clock.now().getTime() / 1000);
      const ann = await tenant.reader("ann", { name: "Ann", email: "ann@readers.example", iat });
      const parent = await ann.post("/api/v1/discussions/kept/comments", { body: "Mine <3" });
      expect(parent.status).toBe(201);
      const bob = await tenant.reader("bob", { name: "Bob", iat });
      const reply = await bob.post("/api/v1/discussions/kept/comments", { body: "Kept for <b>later</b>", parentId: parent.body.id });
      expect(reply.status).toBe(201);
      clock.advance(3 * MIN);
      expect(await outbox.app.email.runOnce()).toMatchObject({ messages: 1, sent: 0 });

      const s = await signedIn(outbox, tenant);
      const p = s.page;
      await mainNav(p).getByRole("link", { name: "Outbox" }).click();
      await p.getByRole("heading", { level: 1, name: "Outbox" }).waitFor();
      await settled(p);
      const list = p.getByRole("list", { name: "Emails in the Outbox, newest first" });
      const items = list.getByRole("listitem");
      await items.first().waitFor();
      expect(await items.count()).toBe(1);
      const item = (await items.first().innerText()).replace(/\s+/g, " ");
      expect(item).toContain("To ann@readers.example · reply email (1 reply) ·");
      const subject = items.first().getByRole("button");
      const subjectText = (await subject.textContent())!;
      expect(subjectText).toMatch(/repl/);

      // by keyboard: the message opens and takes the focus
      await subject.focus();
      await p.keyboard.press("Enter");
      const message = p.locator("#outbox-message article");
      await message.waitFor();
      await expect.poll(() => p.evaluate(() => document.activeElement?.id)).toBe("outbox-subject");
      expect(await subject.getAttribute("aria-current")).toBe("true");
      const text = await message.locator("pre").first().textContent();
      expect(text).toContain("Kept for <b>later</b>");
      expect(text).toContain("Hello Ann,");
      expect(text).toContain("https://comments.weekly.example/api/v1/unsubscribe/");
      // the HTML part is source text in a closed <details>, never markup
      const details = message.locator("details");
      expect(await details.getAttribute("open")).toBeNull();
      expect(await message.locator("details pre").textContent()).toMatch(/<(p|html|a)\b/);
      expect(await message.locator("details pre *").count()).toBe(0);
      expect(await message.locator("b").count()).toBe(0);
      await details.locator("summary").click();
      expect(await message.locator("details pre").isVisible()).toBe(true);
      await details.locator("summary").click();
      await expectAccessible(p, "the Outbox");
      expect(await overflow(p)).toEqual([0]);
      await shoot(p, "outbox");

      // Settings › Email says where the messages are
      await openEmailSettings(p);
      expect(await p.getByRole("region", { name: "Email status" }).textContent()).toContain("kept in the Outbox, not sent");

      await p.setViewportSize({ width: 390, height: 844 });
      await mainNav(p).getByRole("link", { name: "Outbox" }).click();
      await settled(p);
      await p.getByRole("list", { name: "Emails in the Outbox, newest first" }).getByRole("button").click();
      await p.locator("#outbox-message article").waitFor();
      expect(await overflow(p)).toEqual([0]);
      await expectAccessible(p, "the Outbox at 390 px");
      await s.context.close();
    } finally {
      await outbox.stop();
      await db.drop();
    }
  });
});
