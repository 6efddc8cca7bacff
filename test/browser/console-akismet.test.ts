// The console's Akismet settings on the Safety screen in headless Chromium, against the real server and
// a local HTTP server shaped like Akismet's API (its /1.1/verify-key answers "valid" for one key and
// blog, "invalid" with its debug help otherwise): a key verified before it is saved, saved with the
// blog and base URL; the key is write-only (the form says it is set and never holds it; an empty field
// keeps it); Verify key shows valid, invalid and an Akismet that does not answer; a problem is shown
// beside its field; turning Akismet off removes it. axe-core at 1280 and 390 px; screenshots into
// docs/console with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { startReceiver, type Received, type Receiver } from "../support/receiver.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const OWNER = "akismet.owner@example.com";
const API_KEY = "akismet-console-key-0123";
const BLOG = "https://news.example";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
let akismet: Receiver;
let baseUrl: string;
const settings = async () => (await t.api.get("/api/v1/settings")).body;
const formOf = (r: Received) => Object.fromEntries(new URLSearchParams(r.raw));
const verifies = () => akismet.requests.filter((r) => r.path === "/1.1/verify-key");

/** The input of the next UpdateSafety request the page sends: what the console writes. */
const nextPatch = () =>
  page
    .waitForRequest((r) => r.url().endsWith("/graphql") && (r.postData() ?? "").includes("mutation UpdateSafety"))
    .then((r) => JSON.parse(r.postData()!).variables.input);

describe.skipIf(chromiumMissing)("the console's Akismet settings", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    akismet = await startReceiver((req) => {
      if (req.path !== "/1.1/verify-key") return { body: "false" };
      const form = formOf(req);
      return form.key === API_KEY && form.blog === BLOG
        ? { body: "valid" }
        : { body: "invalid", headers: { "X-akismet-debug-help": "We were unable to find this key." } };
    });
    baseUrl = new URL(akismet.url).origin;
    server = await startServer();
    t = await createTestTenant(server);
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await akismet?.close();
  });

  const field = (label: string) => page.getByRole("group", { name: "Akismet" }).getByLabel(label, { exact: true });
  const verifyButton = () => page.getByRole("button", { name: "Verify key" });
  const save = () => page.getByRole("button", { name: "Save safety settings" }).click();

  it("verifies a key before it is saved, then saves it with the blog and base URL; the key is write-only", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Safety", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Safety" }).waitFor();
    await settled(page);
    // off: its fields and Verify key are disabled
    const enabled = page.getByLabel("Check new comments with Akismet");
    expect(await enabled.isChecked()).toBe(false);
    expect(await field("API key").isDisabled()).toBe(true);
    expect(await verifyButton().isDisabled()).toBe(true);

    await enabled.check();
    await field("Blog URL").fill(BLOG);
    await field("Base URL").fill(baseUrl);
    // no key saved and none typed: nothing to verify yet
    expect(await verifyButton().isDisabled()).toBe(true);
    await field("API key").fill(API_KEY);
    expect(await field("API key").getAttribute("type")).toBe("password");
    await verifyButton().click();
    const valid = page.getByRole("status").filter({ hasText: "Akismet says the key is valid" });
    await valid.waitFor();
    expect(await valid.textContent()).toMatch(/^Akismet says the key is valid for https:\/\/news\.example \([\d,]+ ms\)\.$/);
    expect(formOf(verifies()[0]!)).toEqual({ key: API_KEY, api_key: API_KEY, blog: BLOG });
    // verifying saved nothing
    expect((await settings()).safety.akismet).toBeNull();

    const sent = nextPatch();
    await save();
    expect(await sent).toEqual({ safety: { akismet: { blog: BLOG, baseUrl, apiKey: API_KEY } } });
    await page.getByRole("status").filter({ hasText: "Safety settings saved: akismet.blog, akismet.baseUrl, akismet.apiKey." }).waitFor();
    expect((await settings()).safety.akismet).toEqual({ blog: BLOG, baseUrl });

    // write-only: the field is emptied, says a key is set, and the page never holds the key
    expect(await field("API key").inputValue()).toBe("");
    expect(await field("API key").getAttribute("placeholder")).toBe("set");
    expect(await page.locator("#akismet-key-hint").textContent()).toContain("A key is set; it is never shown.");
    expect(await page.content()).not.toContain(API_KEY);
    await page.reload();
    await field("Blog URL").waitFor();
    await settled(page);
    expect(await page.getByLabel("Check new comments with Akismet").isChecked()).toBe(true);
    expect(await field("Blog URL").inputValue()).toBe(BLOG);
    expect(await field("Base URL").inputValue()).toBe(baseUrl);
    expect(await field("API key").inputValue()).toBe("");
    expect(await page.content()).not.toContain(API_KEY);

    // saving untouched sends nothing: the empty key field keeps the saved key
    await save();
    await page.getByRole("status").filter({ hasText: "Nothing changed" }).waitFor();
  });

  it("Verify key with the saved key shows valid; a wrong key typed shows Akismet's invalid and saves nothing", async () => {
    await verifyButton().click();
    await page.getByRole("status").filter({ hasText: "Akismet says the key is valid for https://news.example" }).waitFor();
    // the saved key, sent to the saved base URL
    expect(formOf(verifies().at(-1)!).key).toBe(API_KEY);

    await field("API key").fill("a-wrong-key");
    await verifyButton().click();
    const invalid = page.getByRole("status").filter({ hasText: "not valid" });
    await invalid.waitFor();
    expect(await invalid.textContent()).toMatch(
      /^Akismet says the key is not valid for https:\/\/news\.example \([\d,]+ ms\): We were unable to find this key\.$/,
    );
    expect(await page.locator(".akismet .hook-answer").getAttribute("class")).toContain("failed");
    await expectAccessible(page, "the Safety screen with Akismet's invalid");
    await page.getByRole("group", { name: "Akismet" }).scrollIntoViewIfNeeded();
    await shoot(page, "safety-akismet-invalid");
    // the saved key is unchanged
    expect((await t.api.post("/api/v1/settings/safety/akismet/verify")).body.valid).toBe(true);

    // a blog changed on its own keeps the key
    await field("API key").fill("");
    await field("Blog URL").fill("https://other.example");
    const sent = nextPatch();
    await save();
    expect(await sent).toEqual({ safety: { akismet: { blog: "https://other.example" } } });
    await page.getByRole("status").filter({ hasText: "Safety settings saved: akismet.blog." }).waitFor();
    expect((await t.api.post("/api/v1/settings/safety/akismet/verify", { blog: BLOG })).body.valid).toBe(true);
    await field("Blog URL").fill(BLOG);
    await save();
    await page.getByRole("status").filter({ hasText: "Safety settings saved: akismet.blog." }).waitFor();
    await verifyButton().click();
    await page.getByRole("status").filter({ hasText: "Akismet says the key is valid" }).waitFor();
    await expectAccessible(page, "the Safety screen with Akismet's valid");
    await shoot(page, "safety-akismet");
  });

  it("an Akismet that does not answer is said so; at 390 px nothing sticks out", async () => {
    const closed = await startReceiver();
    const closedUrl = new URL(closed.url).origin;
    await closed.close();
    // another base URL takes the key itself: the saved key only goes to the saved one
    await field("Base URL").fill(closedUrl);
    await verifyButton().click();
    await page.getByRole("alert").filter({ hasText: "apiKey: is required to verify at another base URL" }).waitFor();
    await field("API key").fill(API_KEY);
    await verifyButton().click();
    const down = page.getByRole("status").filter({ hasText: "Akismet did not answer" });
    await down.waitFor();
    expect(await down.textContent()).toMatch(
      /^Akismet did not answer, so the key could not be verified: network: .*ECONNREFUSED.* \([\d,]+ ms\)\.$/,
    );

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "the Safety screen at 390 px");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload();
    await field("Blog URL").waitFor();
    await settled(page);
  });

  it("a problem is shown beside its field; turning Akismet off removes it", async () => {
    await field("Blog URL").fill("ftp://news.example");
    await save();
    await page.getByRole("alert").filter({ hasText: "Some settings are not valid" }).waitFor();
    expect(await field("Blog URL").getAttribute("aria-invalid")).toBe("true");
    expect(await field("Blog URL").getAttribute("aria-describedby")).toContain("err-akismet.blog");
    expect(await page.locator("#err-akismet\\.blog").textContent()).toMatch(/http/);
    await expectAccessible(page, "the Safety screen with an Akismet problem");
    expect((await settings()).safety.akismet).toEqual({ blog: BLOG, baseUrl });

    await page.reload();
    await field("Blog URL").waitFor();
    await settled(page);
    await page.getByLabel("Check new comments with Akismet").uncheck();
    expect(await verifyButton().isDisabled()).toBe(true);
    const sent = nextPatch();
    await save();
    expect(await sent).toEqual({ safety: { akismet: null } });
    await page.getByRole("status").filter({ hasText: "Safety settings saved: akismet." }).waitFor();
    expect((await settings()).safety.akismet).toBeNull();

    // on again with no key: the key is required, said beside it
    await page.getByLabel("Check new comments with Akismet").check();
    expect(await field("API key").getAttribute("placeholder")).toBe("");
    await field("Blog URL").fill(BLOG);
    await save();
    await page.getByRole("alert").filter({ hasText: "Some settings are not valid" }).waitFor();
    expect(await field("API key").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#err-akismet\\.apiKey").textContent()).toBe("is required");
    expect((await settings()).safety.akismet).toBeNull();
  });
});
