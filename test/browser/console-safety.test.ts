// The console's trust-and-safety screens in headless Chromium, against the real server
// (contract section 12): the Safety settings screen saves only what the operator changed (a tenant on
// pre-moderation stays on it, the other safety fields stay as they were), counts each word list's
// entries, shows the answer's problems beside their fields, shows the hook's signing secret once,
// sends a test to the hook (a local receiver) and shows its answer, and removes the hook when its URL
// is emptied; the Reported view lists reported comments with reasons and counts and dismisses their
// reports; a reader's page, reached from a comment's author, shows their history, the reports against
// them and their sanction, and suspends, bans and lifts; the queue says when reports or the hook held a
// comment; a moderator has the Reported view and readers' pages but not the Safety screen. axe-core
// at 1280 and 390 px; screenshots into docs/console with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { expectAccessible, openConsole, operatorLink, overflow, settled, shoot } from "../support/console-page.js";
import { createOperator } from "../../src/modules/console/engine/operators.js";

const OWNER = "safety.owner@example.com";
const MODERATOR = "safety.moderator@example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
let hook: Receiver;
const services = () => server.app.runtime.services;
const link = (email: string) => operatorLink(server, t.tenantId, email);
const settings = async () => (await t.api.get("/api/v1/settings")).body;

/** The input of the next UpdateSafety request the page sends: what the console writes. */
const nextPatch = () =>
  page
    .waitForRequest((r) => r.url().endsWith("/graphql") && (r.postData() ?? "").includes("mutation UpdateSafety"))
    .then((r) => JSON.parse(r.postData()!).variables.input);

/** Posts as a reader named `name` (id = name lowercased); approved unless `held`. */
async function post(discussion: string, name: string, body: string, held = false): Promise<string> {
  const r = await (await t.reader(name.toLowerCase(), { name })).post(`/api/v1/discussions/${discussion}/comments`, { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  if (!held) expect((await t.api.post(`/api/v1/comments/${r.body.id}/approve`)).status).toBe(200);
  return r.body.id as string;
}

describe.skipIf(chromiumMissing)("the console's safety screens", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    hook = await startReceiver(() => ({ status: 200, body: { decision: "hold", reason: "looks like a sales pitch" } }));
    server = await startServer();
    t = await createTestTenant(server);
    const r = await t.api.patch("/api/v1/settings", {
      moderation: "pre",
      editWindowSeconds: 600,
      safety: { bannedWords: ["scam", "fake pills"], suspectWords: ["cheap"], reportThreshold: 2 },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await hook?.close();
  });

  it("shows the safety settings with each list's count; saving one field changes nothing else (pre stays pre)", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Safety", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Safety" }).waitFor();
    await settled(page);
    const banned = page.getByLabel("Banned words (one per line)");
    const suspect = page.getByLabel("Suspect words (one per line)");
    expect(await banned.inputValue()).toBe("scam\nfake pills");
    expect(await suspect.inputValue()).toBe("cheap");
    expect(await page.locator("#bannedWords-count").textContent()).toContain("2 of 2,000 entries");
    expect(await page.getByLabel("Report threshold").inputValue()).toBe("2");
    expect(await page.getByLabel("Maximum links").inputValue()).toBe("");
    expect(await page.getByLabel("Report action").inputValue()).toBe("queue");

    // one field: the new entries are counted as typed (blank lines and spaces aside)
    await suspect.fill("cheap\n\n  free money  \nbuy now\n");
    await expect.poll(() => page.locator("#suspectWords-count").textContent()).toContain("3 of 2,000 entries");
    const sent = nextPatch();
    await page.getByRole("button", { name: "Save safety settings" }).click();
    expect(await sent).toEqual({ safety: { suspectWords: ["cheap", "free money", "buy now"] } });
    await page.getByRole("status").filter({ hasText: "Safety settings saved: suspectWords." }).waitFor();
    const after = await settings();
    expect(after.moderation).toBe("pre");
    expect(after.editWindowSeconds).toBe(600);
    expect(after.safety).toEqual({
      bannedWords: ["scam", "fake pills"],
      suspectWords: ["cheap", "free money", "buy now"],
      maxLinks: null,
      newReaderHold: 0,
      reportThreshold: 2,
      reportAction: "queue",
      hook: null,
      akismet: null,
    });
    const entry = (await t.admin.get("/api/v1/audit?action=settings.update")).body.items[0];
    expect(entry.details.changes).toEqual([{ field: "safety.suspectWords", from: ["cheap"], to: ["cheap", "free money", "buy now"] }]);

    // the rule is live: a comment with a new suspect entry is held with it as the reason
    await t.api.patch("/api/v1/settings", { moderation: "post" });
    await t.api.put("/api/v1/discussions/safety-d", { title: "Safety" });
    const reader = await t.reader("zed", { name: "Zed" });
    const held = await reader.post("/api/v1/discussions/safety-d/comments", { body: "Free   MONEY for everyone" });
    expect(held.body.status).toBe("pending");
    expect(held.body.moderationReason).toEqual({ source: "rule", rule: "suspectWords", words: ["free money"] });
    await t.api.patch("/api/v1/settings", { moderation: "pre" });

    // the form shows what is stored; saving it untouched sends nothing
    await page.reload();
    await expect.poll(() => page.getByLabel("Suspect words (one per line)").inputValue()).toBe("cheap\nfree money\nbuy now");
    await page.getByRole("button", { name: "Save safety settings" }).click();
    await page.getByRole("status").filter({ hasText: "Nothing changed" }).waitFor();
    await expectAccessible(page, "the Safety screen");
    await shoot(page, "safety");
  });

  it("saves thresholds, the report action and a hook; emptying the hook's URL removes it", async () => {
    await page.getByLabel("Maximum links").fill("2");
    await page.getByLabel("New reader hold").fill("1");
    await page.getByLabel("Report action").selectOption("hold");
    await page.getByLabel("Hook URL").fill(hook.url);
    await page.getByLabel("Timeout (ms)").fill("800");
    await page.getByRole("button", { name: "Save safety settings" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Safety settings saved: maxLinks, newReaderHold, reportAction, hook.url, hook.timeoutMs, hook.onTimeout." })
      .waitFor();
    let s = await settings();
    expect(s.moderation).toBe("pre");
    expect(s.safety).toMatchObject({
      bannedWords: ["scam", "fake pills"],
      maxLinks: 2,
      newReaderHold: 1,
      reportThreshold: 2,
      reportAction: "hold",
      hook: { url: hook.url, timeoutMs: 800, onTimeout: "hold" },
    });

    // the hook's signing secret, shown once with a copy button, as endpoints' secrets are
    const region = page.getByRole("region", { name: "The hook's signing secret" });
    const secret = (await region.locator("code").textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await region.getByRole("button", { name: "Copy" }).waitFor();
    await expectAccessible(page, "the Safety screen with the hook's secret");
    await shoot(page, "safety-hook-secret");
    await region.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(secret);

    // Send test: the saved hook gets a signed sample, and its answer is shown
    await page.getByRole("button", { name: "Send test" }).click();
    const answer = page.getByRole("status").filter({ hasText: "The hook answered" });
    await answer.waitFor();
    expect(await answer.textContent()).toMatch(/^The hook answered “hold”: looks like a sales pitch \(HTTP 200, [\d,]+ ms\)\.$/);
    expect(hook.requests.length).toBe(1);
    const sample = hook.requests[0]!;
    const headers = Object.fromEntries(Object.entries(sample.headers).map(([k, v]) => [k, String(v)]));
    expect(new Webhook(secret).verify(sample.raw, headers)).toMatchObject({ type: "comment.check" });
    await shoot(page, "safety-send-test");
    // a failing hook: no decision, and the fallback a comment would get
    hook.respond = () => ({ status: 500, body: "down" });
    await page.getByRole("button", { name: "Send test" }).click();
    const failed = page.getByRole("status").filter({ hasText: "No decision" });
    await failed.waitFor();
    expect(await failed.textContent()).toContain("HTTP 500");
    expect(await failed.textContent()).toContain("A comment would get the fallback: hold.");
    await expectAccessible(page, "the Safety screen after Send test");

    // one hook field: only it is sent
    await page.getByLabel("On timeout or failure").selectOption("reject");
    const sent = nextPatch();
    await page.getByRole("button", { name: "Save safety settings" }).click();
    expect(await sent).toEqual({ safety: { hook: { onTimeout: "reject" } } });
    await page.getByRole("status").filter({ hasText: "Safety settings saved: hook.onTimeout." }).waitFor();
    s = await settings();
    expect(s.safety.hook).toMatchObject({ url: hook.url, timeoutMs: 800, onTimeout: "reject" });

    // an empty maximum is no limit again
    await page.getByLabel("Maximum links").fill("");
    await page.getByRole("button", { name: "Save safety settings" }).click();
    await page.getByRole("status").filter({ hasText: "Safety settings saved: maxLinks." }).waitFor();
    expect((await settings()).safety.maxLinks).toBeNull();

    await page.getByLabel("Hook URL").fill("");
    await page.getByRole("button", { name: "Save safety settings" }).click();
    await page.getByRole("status").filter({ hasText: "Safety settings saved: hook." }).waitFor();
    s = await settings();
    expect(s.safety.hook).toBeNull();
    expect(s.safety.reportAction).toBe("hold");
    expect(s.moderation).toBe("pre");
    // no hook, nothing to test
    expect(await page.getByRole("button", { name: "Send test" }).isDisabled()).toBe(true);
  });

  it("shows the answer's problems beside the fields they name, an entry by its line", async () => {
    await page.getByLabel("Banned words (one per line)").fill(`scam\n${"x".repeat(101)}`);
    await page.getByLabel("New reader hold").fill("500");
    await page.getByLabel("Hook URL").fill("ftp://example.com/hook");
    // one entry over the limit: the count says so before the server does
    // (pasted at once: typing 2,001 lines through fill takes seconds)
    await page.getByLabel("Suspect words (one per line)").evaluate(
      (el, text) => {
        (el as HTMLTextAreaElement).value = text;
        el.dispatchEvent(new Event("input", { bubbles: true }));
      },
      Array.from({ length: 2001 }, (_v, i) => `word${i}`).join("\n"),
    );
    await expect.poll(() => page.locator("#suspectWords-count").textContent()).toContain("2,001 of 2,000 entries: too many");
    await page.getByRole("button", { name: "Save safety settings" }).click();
    await page.getByRole("alert").filter({ hasText: "Some settings are not valid" }).waitFor();
    for (const [label, path] of [
      ["Banned words (one per line)", "bannedWords"],
      ["Suspect words (one per line)", "suspectWords"],
      ["New reader hold", "newReaderHold"],
      ["Hook URL", "hook.url"],
    ] as const) {
      const field = page.getByLabel(label);
      expect(await field.getAttribute("aria-invalid"), label).toBe("true");
      expect(await field.getAttribute("aria-describedby"), label).toContain(`err-${path}`);
    }
    expect(await page.locator("#err-bannedWords").textContent()).toMatch(/^entry 2 \(“x{40}…”\): must be at most 100 characters/);
    await expectAccessible(page, "the Safety screen with errors");
    await shoot(page, "safety-errors");
    // nothing was stored
    expect((await settings()).safety.bannedWords).toEqual(["scam", "fake pills"]);
    expect((await settings()).safety.suspectWords).toEqual(["cheap", "free money", "buy now"]);
    await page.reload();
  });

  it("lists reported comments with reasons and counts in the Reported view; Dismiss closes their reports", async () => {
    // back to reportAction queue: reported comments stay published
    await t.api.patch("/api/v1/settings", { safety: { reportAction: "queue", newReaderHold: 0 } });
    await t.api.put("/api/v1/discussions/park", { title: "The new park" });
    const bo = await post("park", "Bo", "Visit pills-deals.example for the best deals!");
    const cy = await post("park", "Cy", "Nobody wants your park, idiots.");
    await post("park", "Dee", "Only reported once, so not listed.", true);
    for (const [sub, id, reason, note] of [
      ["r1", bo, "spam", "an advert"],
      ["r2", bo, "spam", undefined],
      ["r3", bo, "off_topic", "nothing to do with the park"],
      ["r1", cy, "abuse", "insults"],
      ["r2", cy, "abuse", undefined],
    ] as const) {
      const r = await (await t.reader(sub)).post(`/api/v1/comments/${id}/reports`, { reason, ...(note ? { note } : {}) });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    await page.goto(`${server.url}/console/#/moderation`);
    await page.getByRole("navigation", { name: "Moderation views" }).getByRole("link", { name: "Reported", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Reported comments" }).waitFor();
    const boCard = page.getByRole("listitem", { name: "Reported comment by Bo in The new park" });
    await boCard.waitFor();
    await settled(page);
    expect(await page.getByRole("listitem", { name: /Reported comment by Dee/ }).count()).toBe(0);
    const text = (await boCard.textContent())!;
    expect(text).toContain("Reported by 3 readers: spam 2, off topic 1");
    expect(text).toContain("an advert");
    expect(text).toContain("nothing to do with the park");
    expect(text).toContain("published");
    expect((await page.getByRole("listitem", { name: "Reported comment by Cy in The new park" }).textContent())!).toContain(
      "Reported by 2 readers: abuse 2",
    );
    await expectAccessible(page, "the Reported view");
    await shoot(page, "moderation-reported");

    await page
      .getByRole("listitem", { name: /Reported comment by Cy/ })
      .getByRole("button", { name: "Dismiss" })
      .click();
    await page.getByRole("status").filter({ hasText: "Dismissed 2 reports on the comment by Cy." }).waitFor();
    await page.getByRole("listitem", { name: /Reported comment by Cy/ }).waitFor({ state: "detached" });
    const open = (await t.api.get("/api/v1/reports?status=open")).body.items.map((x: any) => x.comment.id);
    expect(open).toEqual([bo]);
    expect((await t.api.get(`/api/v1/comments/${cy}`)).body.status).toBe("approved"); // the comment stays as it was
    await page.getByLabel("Show").selectOption("dismissed");
    const dismissed = page.getByRole("listitem", { name: "Reported comment by Cy in The new park" });
    await dismissed.waitFor();
    expect(await dismissed.textContent()).toContain("Dismissed reports from 2 readers: abuse 2");
    expect(await dismissed.getByRole("button", { name: "Dismiss" }).count()).toBe(0);
    const audit = (await t.admin.get("/api/v1/audit")).body.items.map((x: any) => x.action);
    expect(audit.some((a: string) => a.includes("dismiss"))).toBe(true);
  });

  it("a reader's page from the author of a comment: history, reports, Suspend, Lift ban, Ban", async () => {
    await page.getByLabel("Show").selectOption("open");
    await page
      .getByRole("listitem", { name: /Reported comment by Bo/ })
      .getByRole("link", { name: "Bo (reader bo)" })
      .click();
    await page.getByRole("heading", { level: 1, name: "Bo" }).waitFor();
    await settled(page);
    expect(new URL(page.url()).hash).toBe("#/readers/bo");
    const main = page.getByRole("main");
    expect(await main.textContent()).toContain("3 open reports against their comments.");
    expect(await main.textContent()).toContain("No ban or suspension");
    const history = page.getByRole("list", { name: "Bo's latest comments, newest first" });
    expect(await history.getByRole("listitem").count()).toBe(1);
    expect(await history.getByRole("listitem", { name: "Comment in The new park, published" }).textContent()).toContain(
      "pills-deals.example",
    );
    expect(await page.getByRole("button", { name: "Lift ban" }).count()).toBe(0);
    await expectAccessible(page, "a reader's page");
    await shoot(page, "reader");

    // Suspend asks until when and why
    await page.getByRole("button", { name: "Suspend", exact: true }).click();
    const form = page.getByRole("form", { name: "Suspend Bo" });
    const until = new Date(Date.now() + 2 * 86_400_000);
    until.setSeconds(0, 0);
    const local = new Date(until.getTime() - until.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await form.getByLabel("Suspended until").fill(local);
    await form.getByLabel("Reason (for moderators, optional)").fill("spam waves, cooling off");
    await expectAccessible(page, "the suspension form");
    await shoot(page, "reader-suspend");
    await form.getByRole("button", { name: "Confirm suspension" }).click();
    await page.getByRole("status").filter({ hasText: "Suspended Bo until" }).waitFor();
    const suspended = (await t.api.get("/api/v1/readers/bo")).body.sanction;
    expect(suspended).toMatchObject({ until: until.toISOString(), reason: "spam waves, cooling off" });
    expect(await main.textContent()).toContain("Suspended until");
    const refused = await (await t.reader("bo", { name: "Bo" })).post("/api/v1/discussions/park/comments", { body: "Let me in" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "reader_banned", until: until.toISOString() });

    await page.getByRole("button", { name: "Lift ban" }).click();
    await page.getByRole("status").filter({ hasText: "Lifted the ban on Bo." }).waitFor();
    expect((await t.api.get("/api/v1/readers/bo")).body.sanction).toBeNull();
    const pending = await post("park", "Bo", "Posting again after the suspension", true);

    // Ban, rejecting the reader's pending comments in the same step
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Bo" }).waitFor();
    await page.getByRole("button", { name: "Ban", exact: true }).click();
    const ban = page.getByRole("form", { name: "Ban Bo" });
    await ban.getByLabel("Also reject their pending comments").check();
    await ban.getByRole("button", { name: "Confirm ban" }).click();
    await page.getByRole("status").filter({ hasText: "Banned Bo until lifted. Their pending comments were rejected." }).waitFor();
    expect((await t.api.get("/api/v1/readers/bo")).body.sanction).toMatchObject({ until: null, reason: null });
    expect((await t.api.get(`/api/v1/comments/${pending}`)).body.status).toBe("rejected");
    await history.getByRole("listitem", { name: "Comment in The new park, rejected" }).waitFor();
    expect(await main.textContent()).toContain("Why: rejected by a moderator banning the reader");
    await expectAccessible(page, "a banned reader's page");
    await shoot(page, "reader-banned");
    await page.getByRole("button", { name: "Lift ban" }).click();
    await page.getByRole("status").filter({ hasText: "Lifted the ban on Bo." }).waitFor();
    expect((await t.api.get("/api/v1/readers/bo")).body.sanction).toBeNull();
  });

  it("says in the queue why reports or the hook held a comment; reaches a reader's page from the queue and a discussion", async () => {
    await post("park", "Eve", "Held for approval", true);
    // the hook holds a comment, with its reason
    hook.respond = () => ({ status: 200, body: { decision: "hold", reason: "looks like a sales pitch" } });
    expect((await t.api.patch("/api/v1/settings", { safety: { hook: { url: hook.url } } })).status).toBe(200);
    await post("park", "Hal", "Fresh offers every day", true);
    expect((await t.api.patch("/api/v1/settings", { safety: { hook: null, reportAction: "hold" } })).status).toBe(200);
    // reports at the threshold take a published comment out of view
    const fay = await post("park", "Fay", "The park should be a car park.");
    for (const sub of ["r1", "r2"]) await (await t.reader(sub)).post(`/api/v1/comments/${fay}/reports`, { reason: "off_topic" });
    expect((await t.api.get(`/api/v1/comments/${fay}`)).body.status).toBe("pending");

    await page.goto(`${server.url}/console/#/moderation`);
    const hal = page.getByRole("listitem", { name: "Comment by Hal in The new park" });
    await hal.waitFor();
    await settled(page);
    expect(await hal.textContent()).toContain("Why: the moderation hook decided hold: looks like a sales pitch");
    expect(await page.getByRole("listitem", { name: "Comment by Fay in The new park" }).textContent()).toContain(
      "Why: reported by 2 readers (off topic 2), held until a moderator decides",
    );
    expect(await page.getByRole("listitem", { name: "Comment by Eve in The new park" }).textContent()).not.toContain("Why:");
    await expectAccessible(page, "the queue with reasons from reports and the hook");
    await shoot(page, "moderation-reasons");

    await page
      .getByRole("listitem", { name: /Comment by Eve/ })
      .getByRole("link", { name: "Eve (reader eve)" })
      .click();
    await page.getByRole("heading", { level: 1, name: "Eve" }).waitFor();
    await page.goto(`${server.url}/console/#/discussions/park`);
    await page.getByRole("listitem", { name: "Comment by Cy, published" }).getByRole("link", { name: "Cy (reader cy)" }).click();
    await page.getByRole("heading", { level: 1, name: "Cy" }).waitFor();
    await settled(page);
    expect(await page.getByRole("main").textContent()).toContain("No open reports against their comments.");
  });

  it("gives a moderator the Reported view and readers' pages, not the Safety screen", async () => {
    await createOperator(services(), { tenantId: t.tenantId, email: MODERATOR, role: "moderator" });
    const mod = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    await mod.goto(link(MODERATOR));
    await mod.getByRole("button", { name: "Sign out" }).waitFor();
    expect(await mod.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Safety" }).count()).toBe(0);
    await mod.goto(`${server.url}/console/#/safety`);
    expect(await mod.getByRole("alert").textContent()).toContain("Safety is for owners of this tenant");
    await mod.goto(`${server.url}/console/#/moderation/reported`);
    const card = mod.getByRole("listitem", { name: "Reported comment by Fay in The new park" });
    await card.waitFor();
    await card.getByRole("link", { name: "Fay (reader fay)" }).click();
    await mod.getByRole("heading", { level: 1, name: "Fay" }).waitFor();
    await settled(mod);
    expect(await mod.getByRole("main").textContent()).toContain("2 open reports against their comments.");
    await mod.getByRole("button", { name: "Ban", exact: true }).click();
    await mod.getByRole("form", { name: "Ban Fay" }).getByLabel("Reason (for moderators, optional)").fill("off-topic campaign");
    await mod.getByRole("button", { name: "Confirm ban" }).click();
    await mod.getByRole("status").filter({ hasText: "Banned Fay until lifted." }).waitFor();
    expect((await t.api.get("/api/v1/readers/fay")).body.sanction).toMatchObject({ until: null, reason: "off-topic campaign" });
    await mod.getByRole("button", { name: "Lift ban" }).click();
    await mod.getByRole("status").filter({ hasText: "Lifted the ban on Fay." }).waitFor();
    await expectAccessible(mod, "a reader's page for a moderator");
    await mod.close();
  });

  it("a reader's page sets their trust (Trust, Premoderate, Back to default) and shadow-bans them", async () => {
    await post("park", "Gus", "A regular's first comment");
    await page.goto(`${server.url}/console/#/readers/gus`);
    await page.getByRole("heading", { level: 1, name: "Gus" }).waitFor();
    await settled(page);
    const main = page.getByRole("main");
    expect(await main.textContent()).toContain("Default: the site's rules apply to their comments.");
    expect(await page.getByRole("button", { name: "Back to default" }).count()).toBe(0);

    await page.getByRole("button", { name: "Trust", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Gus is now trusted." }).waitFor();
    expect((await t.api.get("/api/v1/readers/gus")).body.trustLevel).toBe("trusted");
    expect(await main.textContent()).toContain("Trusted: their comments skip");
    // the tenant pre-moderates, yet a trusted reader's comment is published at once
    const trusted = await (await t.reader("gus", { name: "Gus" })).post("/api/v1/discussions/park/comments", { body: "Straight in" });
    expect(trusted.body.status).toBe("approved");

    await page.getByRole("button", { name: "Premoderate" }).click();
    await page.getByRole("status").filter({ hasText: "Gus is now premoderated." }).waitFor();
    expect((await t.api.get("/api/v1/readers/gus")).body.trustLevel).toBe("premoderated");
    await page.getByRole("button", { name: "Back to default" }).click();
    await page.getByRole("status").filter({ hasText: "Gus is now default." }).waitFor();
    expect((await t.api.get("/api/v1/readers/gus")).body.trustLevel).toBe("default");

    await page.getByRole("button", { name: "Shadow ban" }).click();
    const form = page.getByRole("form", { name: "Shadow ban Gus" });
    expect(await form.textContent()).toContain("only they will see their new comments");
    await form.getByLabel("Reason (for moderators, optional)").fill("baiting other readers");
    await expectAccessible(page, "the shadow ban form");
    await form.getByRole("button", { name: "Confirm shadow ban" }).click();
    await page.getByRole("status").filter({ hasText: "Shadow-banned Gus until lifted." }).waitFor();
    expect((await t.api.get("/api/v1/readers/gus")).body.sanction).toMatchObject({
      until: null,
      shadow: true,
      reason: "baiting other readers",
    });
    expect(await main.textContent()).toContain("Shadow-banned until lifted");
    // their next comment: published to them, rejected as a moderator sees it, with the reason in words
    const shadowed = await (await t.reader("gus", { name: "Gus" })).post("/api/v1/discussions/park/comments", { body: "Only I see this" });
    expect(shadowed.body.status).toBe("approved");
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Gus" }).waitFor();
    await settled(page);
    const history = page.getByRole("list", { name: "Gus's latest comments, newest first" });
    await history.getByRole("listitem", { name: "Comment in The new park, rejected" }).waitFor();
    expect(await main.textContent()).toContain("Why: the reader is shadow-banned");
    await expectAccessible(page, "a shadow-banned reader's page");
    await shoot(page, "reader-shadow-banned");
    await page.getByRole("button", { name: "Lift ban" }).click();
    await page.getByRole("status").filter({ hasText: "Lifted the ban on Gus." }).waitFor();
  });

  it("is accessible and fits at 390 px", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, heading] of [
      ["safety", "Safety"],
      ["moderation/reported", "Reported comments"],
      ["readers/bo", "Bo"],
    ] as const) {
      await page.goto(`${server.url}/console/#/${path}`);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      await expectAccessible(page, `${path} at 390 px`);
      expect(await overflow(page), `${path} fits 390 px`).toEqual([0]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
