// The hosted sign-in pages (contract section 20) in headless Chromium, as a host page of another
// origin uses them: it opens /auth/v1/{tenantId}/sign-in?origin=… in a popup with window.open and
// waits for {type: "engagement:signed-in", token, reader} from the service's origin.
//  (a) the guest form: a name, the ALTCHA widget solving by itself (the altcha package, served from
//      our origin under the page's CSP), "Continue as guest"; the token works for GET /api/v1/me;
//  (b) email: an address, the mail read from an SMTP server started here, the link opened in a new
//      page of the same browser, the name, "Sign in": the popup (waiting on a BroadcastChannel)
//      hands the session to its opener;
//  (c) axe-core on the page, light and dark, and in German;
//  (d) a popup opened for an allowed origin from a page of another origin: the browser drops the
//      message (postMessage's target origin), the other page gets nothing;
//  (e) login CSRF by email: an attacker's own link (asked for from his own sign-in popup, in another
//      browser) opened in the victim's browser beside the victim's waiting popup delivers nothing to
//      the victim's page; the victim's own link then does.
// Screenshots: docs/sign-in/ with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { isolatedDatabase } from "../support/database.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, chromiumRequired, launchChromium, servePage, screenshot } from "../support/chromium.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";
import { expectAccessible } from "../support/console-page.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "sign-in") : join(tmpdir(), "engagement-sign-in-shots");

// A host page: it opens the sign-in popup and keeps every message it receives, with its origin.
const HOST = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A blog</title></head>
<body><h1>A blog</h1><script>
window.received = [];
window.addEventListener("message", function (e) { window.received.push({ origin: e.origin, data: e.data }); });
window.openSignIn = function (url) { window.open(url, "engagement-sign-in", "popup,width=480,height=760"); };
</script></body></html>`;

interface Received {
  origin: string;
  data: { type: string; token: string; reader: { id: string; name: string; avatarUrl: string | null } };
}

let smtp: TestSmtp;
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let t: TestTenant;
let browser: Browser | undefined;
let allowed: Awaited<ReturnType<typeof servePage>>;
let other: Awaited<ReturnType<typeof servePage>>;
const cspViolations: string[] = [];

describe.skipIf(chromiumMissing && !chromiumRequired)("the hosted sign-in pages, in headless Chromium", () => {
  beforeAll(async () => {
    smtp = await startSmtp();
    own = await isolatedDatabase("signinpages");
    [server, allowed, other] = await Promise.all([
      startServer({ ...own.env, SMTP_URL: smtp.url, RETENTION_INTERVAL_MS: "0" }),
      servePage(HOST),
      servePage(HOST),
    ]);
    t = await createTestTenant(server, "The Daily");
    const set = await t.api.patch("/api/v1/settings", {
      allowedOrigins: [allowed.origin],
      signIn: {
        methods: ["email", "guest", "oidc"],
        // loopback endpoints: the page only links to the provider's route
        oidc: [
          {
            id: "gh",
            label: "GitHub",
            authorizationEndpoint: "http://127.0.0.1:9/authorize",
            tokenEndpoint: "http://127.0.0.1:9/token",
            userinfoEndpoint: "http://127.0.0.1:9/user",
            clientId: "c",
            clientSecret: "s",
          },
        ],
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await allowed?.close();
    await other?.close();
    await server?.stop();
    await smtp?.close();
    await own?.drop();
    // no page was refused anything by its CSP (the widget's script, styles and worker included)
    expect(cspViolations).toEqual([]);
  });

  const signInUrl = (origin: string, lang?: string) =>
    `${server.url}/auth/v1/${t.tenantId}/sign-in?origin=${encodeURIComponent(origin)}${lang ? `&lang=${lang}` : ""}`;

  const watch = (p: Page) =>
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });

  /** A host page of `host` with the sign-in popup it opened for `origin`. */
  async function openPopup(host: { url: string }, origin: string): Promise<{ page: Page; popup: Page }> {
    const page = await browser!.newPage();
    await page.goto(host.url);
    const [popup] = await Promise.all([
      page.waitForEvent("popup"),
      page.evaluate((url) => (window as any).openSignIn(url), signInUrl(origin)),
    ]);
    watch(popup);
    await popup.waitForLoadState();
    await popup.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
    return { page, popup };
  }

  async function asGuest(popup: Page, name: string): Promise<void> {
    await popup.getByRole("textbox", { name: "Name", exact: true }).fill(name);
    // focusing the form started the proof of work: the widget solves it by itself
    await popup.waitForFunction(() => (document.querySelector("altcha-widget") as any)?.getState() === "verified", undefined, {
      timeout: 20_000,
    });
    await popup.getByRole("button", { name: "Continue as guest" }).click();
  }

  const received = (page: Page) => page.evaluate(() => (window as any).received as Received[]);

  async function expectWorkingSession(message: Received, method: string, name: string): Promise<void> {
    expect(message.origin).toBe(new URL(server.url).origin);
    expect(Object.keys(message.data).sort()).toEqual(["reader", "token", "type"]);
    expect(message.data.type).toBe("engagement:signed-in");
    expect(message.data.token).toMatch(/^rs_[A-Za-z0-9_-]{43,}$/);
    const me = await t.as({ key: t.apiKey, identity: message.data.token }).get("/api/v1/me");
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ ...message.data.reader, method });
    expect(me.body.name).toBe(name);
  }

  it("(a) signs a guest in: the widget solves, the opener gets the session from the service's origin", async () => {
    const { page, popup } = await openPopup(allowed, allowed.origin);
    await asGuest(popup, "Grace");
    await page.waitForFunction(() => (window as any).received.length > 0, undefined, { timeout: 15_000 });
    await popup.waitForEvent("close", { timeout: 5_000 }).catch(() => undefined);
    const got = await received(page);
    expect(got).toHaveLength(1);
    await expectWorkingSession(got[0]!, "guest", "Grace");
    expect(got[0]!.data.reader.id).toMatch(/^guest:/);
    await page.close();
  }, 60_000);

  it("(b) signs in by email: the link opened in another page of the browser finishes the popup's sign-in", async () => {
    const { page, popup } = await openPopup(allowed, allowed.origin);
    const address = "ada@readers.example";
    await popup.getByRole("textbox", { name: "Email", exact: true }).fill(address);
    await popup.getByRole("button", { name: "Email me a link" }).click();
    await popup
      .getByRole("status")
      .filter({ hasText: `We sent a link to ${address}` })
      .waitFor();
    await screenshot(popup, { path: join(SHOTS, "email-sent.png") });
    const before = smtp.received.length;
    await server.app.email.runOnce();
    const mail = (await smtp.waitFor(before + 1)).at(-1)!;
    const link = /(http:\/\/\S+\/auth\/v1\/\S+\/email\/[A-Za-z0-9_-]{43})/.exec(mail.text ?? "")?.[1];
    expect(link, mail.text).toBeTruthy();

    const tab = await popup.context().newPage();
    watch(tab);
    await tab.goto(link!);
    await expectAccessible(tab, "the email link's page");
    await tab.getByRole("textbox", { name: "Your name" }).fill("Ada");
    await screenshot(tab, { path: join(SHOTS, "email-link.png") });
    await tab.getByRole("button", { name: "Sign in" }).click();
    await tab.getByRole("status").filter({ hasText: "You are signed in as Ada" }).waitFor();
    await page.waitForFunction(() => (window as any).received.length > 0, undefined, { timeout: 15_000 });
    const got = await received(page);
    expect(got).toHaveLength(1);
    await expectWorkingSession(got[0]!, "email", "Ada");
    await page.close();
  }, 60_000);

  it("(c) is accessible light and dark, and speaks German", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const p = await browser!.newPage({ viewport: { width: 520, height: 900 }, colorScheme });
      watch(p);
      await p.goto(signInUrl(allowed.origin));
      await p.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
      await p.locator("altcha-widget input[type=checkbox]").waitFor();
      await expectAccessible(p, `the sign-in page (${colorScheme})`);
      await screenshot(p, { path: join(SHOTS, colorScheme === "light" ? "sign-in.png" : "sign-in-dark.png"), fullPage: true });
      await p.close();
    }
    const de = await browser!.newPage({ viewport: { width: 520, height: 900 } });
    watch(de);
    await de.goto(signInUrl(allowed.origin, "de"));
    await de.getByRole("heading", { name: "Anmelden", level: 1 }).waitFor();
    await de.getByRole("textbox", { name: "E-Mail", exact: true }).waitFor();
    await de.getByRole("button", { name: "Link per E-Mail senden" }).waitFor();
    await de.getByRole("button", { name: "Als Gast fortfahren" }).waitFor();
    await de.getByRole("link", { name: "Mit GitHub anmelden" }).waitFor();
    expect(await de.locator("html").getAttribute("lang")).toBe("de");
    await de.locator("altcha-widget input[type=checkbox]").waitFor();
    await expectAccessible(de, "the sign-in page in German");
    await screenshot(de, { path: join(SHOTS, "sign-in-de.png"), fullPage: true });
    await de.close();
  }, 60_000);

  /** Asks for a link in `popup` and reads it from the SMTP server. */
  async function emailLink(popup: Page, address: string): Promise<string> {
    await popup.getByRole("textbox", { name: "Email", exact: true }).fill(address);
    const before = smtp.received.length;
    await popup.getByRole("button", { name: "Email me a link" }).click();
    await popup
      .getByRole("status")
      .filter({ hasText: `We sent a link to ${address}` })
      .waitFor();
    await server.app.email.runOnce();
    const mail = (await smtp.waitFor(before + 1)).find(
      (m, i) => i >= before && m.text?.includes("/email/") && JSON.stringify(m.to).includes(address),
    );
    const link = /(http:\/\/\S+\/auth\/v1\/\S+\/email\/[A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")?.[1];
    expect(link, mail?.text).toBeTruthy();
    return link!;
  }

  /** A link's page in a new tab of `context`: the name, "Sign in", until the page says so. */
  async function finishLink(context: import("playwright-core").BrowserContext, link: string, name: string): Promise<void> {
    const tab = await context.newPage();
    await tab.goto(link);
    await tab.getByRole("textbox", { name: "Your name" }).fill(name);
    await tab.getByRole("button", { name: "Sign in" }).click();
    await tab
      .getByRole("status")
      .filter({ hasText: `You are signed in as ${name}` })
      .waitFor();
  }

  it("(e) an attacker's email link opened beside the victim's waiting popup posts nothing to the victim's page", async () => {
    // the attacker asks for a link to his own address from his own popup, in his own browser
    const attackerBrowser = await browser!.newContext();
    const attackerHost = await attackerBrowser.newPage();
    await attackerHost.goto(allowed.url);
    const [attackerPopup] = await Promise.all([
      attackerHost.waitForEvent("popup"),
      attackerHost.evaluate((url) => (window as any).openSignIn(url), signInUrl(allowed.origin)),
    ]);
    await attackerPopup.waitForLoadState();
    const attackerLink = await emailLink(attackerPopup, "mallory@attacker.example");
    await attackerBrowser.close();

    // the victim's page waits for a link of its own
    const victim = await browser!.newContext();
    const page = await victim.newPage();
    await page.goto(allowed.url);
    const [popup] = await Promise.all([
      page.waitForEvent("popup"),
      page.evaluate((url) => (window as any).openSignIn(url), signInUrl(allowed.origin)),
    ]);
    watch(popup);
    await popup.waitForLoadState();
    const victimLink = await emailLink(popup, "victim@readers.example");

    // the attacker's link, opened (and finished) in the victim's browser: the waiting popup ignores it
    await finishLink(victim, attackerLink, "Mallory");
    expect(popup.isClosed()).toBe(false);

    // the victim's own link reaches the same popup, which hands it to the page: had the popup taken the
    // attacker's finish (broadcast first), it would have forwarded that one and closed before this one
    await finishLink(victim, victimLink, "Victor");
    await page.waitForFunction(() => (window as any).received.length > 0, undefined, { timeout: 15_000 });
    const got = await received(page);
    expect(got).toHaveLength(1);
    await expectWorkingSession(got[0]!, "email", "Victor");
    await victim.close();
  }, 90_000);

  it("(d) does not deliver the session to an opener of another origin", async () => {
    const { page, popup } = await openPopup(other, allowed.origin);
    await asGuest(popup, "Mallory");
    // the popup finished (it signed in and closed itself); the message went nowhere
    if (!popup.isClosed()) await popup.waitForEvent("close", { timeout: 10_000 });
    await page.waitForTimeout(500);
    expect(await received(page)).toEqual([]);
    await page.close();
  }, 60_000);
});
