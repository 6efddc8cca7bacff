// Readers' passkeys on the hosted pages (contract section 29) in headless Chromium, with a virtual
// authenticator (the DevTools protocol's WebAuthn domain through playwright-core): the service runs
// without PUBLIC_URL, so its relying party is localhost and its port, and the pages are opened there.
//  (a) a guest signs in; the popup goes on to offer a passkey; "Add a passkey" registers one;
//  (b) signed out, the reader signs in again from the sign-in page through the browser's autofill
//      (a conditional request: the field's suggestions), as the same reader, and the passkey is listed
//      under GET /api/v1/me/passkeys with its last use;
//  (c) another tenant's sign-in page refuses the same credential;
//  (d) a cloned authenticator (the credential with its counter rolled back) is refused;
//  (e) a reader the site names (an assertion) adds one from the page the thread element opens, which
//      asks its opener for the identity; the page in German; DELETE removes it and it signs in no more.
// Screenshots: docs/sign-in/ with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { APIResponse, Browser, CDPSession, Page } from "playwright-core";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { isolatedDatabase } from "../support/database.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, chromiumRequired, launchChromium, servePage, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "sign-in") : join(tmpdir(), "engagement-passkey-shots");

// A host page: opens the service's pages in a popup, keeps every message it receives, and answers the
// add-a-passkey page's request for the reader's identity with `window.identity` (as the thread element does).
const HOST = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A blog</title></head>
<body><h1>A blog</h1><script>
window.received = []; window.identity = null;
window.addEventListener("message", function (e) {
  window.received.push({ origin: e.origin, data: e.data });
  if (e.data && e.data.type === "engagement:passkey-identity-request" && window.identity)
    e.source.postMessage({ type: "engagement:passkey-identity", token: window.identity }, e.origin);
});
window.openPopup = function (url) { window.open(url, "engagement-sign-in", "popup,width=480,height=760"); };
</script></body></html>`;

interface Message {
  origin: string;
  data: { type: string; token?: string; reader?: { id: string; name: string } };
}

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  privateKey: string;
  userHandle: string;
  signCount: number;
}

let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let t: TestTenant;
let other: TestTenant;
let browser: Browser | undefined;
let host: Awaited<ReturnType<typeof servePage>>;
let base: string;
const cspViolations: string[] = [];

describe.skipIf(chromiumMissing && !chromiumRequired)("readers' passkeys, in headless Chromium", () => {
  beforeAll(async () => {
    own = await isolatedDatabase("passkeys");
    [server, host] = await Promise.all([startServer({ ...own.env, RETENTION_INTERVAL_MS: "0" }), servePage(HOST)]);
    base = `http://localhost:${new URL(server.url).port}`;
    [t, other] = await Promise.all([createTestTenant(server, "The Daily"), createTestTenant(server, "The Weekly")]);
    for (const tenant of [t, other]) {
      const set = await tenant.api.patch("/api/v1/settings", { allowedOrigins: [host.origin], signIn: { methods: ["guest", "passkey"] } });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
    }
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await server?.stop();
    await own?.drop();
    expect(cspViolations).toEqual([]);
  });

  const watch = (p: Page) => {
    return p.on("console", (m) => {
      if (process.env.DEBUG_PASSKEYS) console.log("page:", m.text());
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  };

  const pageUrl = (tenant: TestTenant, path: string, lang?: string) =>
    `${base}/auth/v1/${tenant.tenantId}${path}?origin=${encodeURIComponent(host.origin)}${lang ? `&lang=${lang}` : ""}`;

  /** A virtual platform authenticator on the page, holding `credentials`. */
  async function authenticator(p: Page, credentials: VirtualCredential[] = []): Promise<{ cdp: CDPSession; id: string }> {
    const cdp = await p.context().newCDPSession(p);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    for (const credential of credentials) await cdp.send("WebAuthn.addCredential", { authenticatorId, credential });
    return { cdp, id: authenticatorId };
  }

  const credentialsOf = async (a: { cdp: CDPSession; id: string }) =>
    (await a.cdp.send("WebAuthn.getCredentials", { authenticatorId: a.id })).credentials as VirtualCredential[];

  /** The host page with a popup it opened on `url`, a virtual authenticator holding `credentials` attached to it first. */
  async function popupOn(url: string, credentials: VirtualCredential[] = [], identity?: string) {
    const page = await browser!.newPage();
    await page.goto(host.url);
    if (identity) await page.evaluate((token) => ((window as any).identity = token), identity);
    const context = page.context();
    // the popup's authenticator must exist before its page asks: the popup opens on about:blank first
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.evaluate(() => (window as any).openPopup("about:blank"))]);
    watch(popup);
    const answers: Array<{ status: number; body: unknown }> = [];
    (popup as any).answers = answers;
    await popup.route("**/passkeys/authenticate", async (route) => {
      let answer: { response: APIResponse; body: string };
      try {
        const response = await route.fetch();
        answer = { response, body: await response.text() };
      } catch (err) {
        // a request still in flight when the popup closes (the autofill's own, armed when the page
        // opened) goes with it, and nothing waits for its answer; any other failure is the test's
        if (popup.isClosed() || /disposed|closed/i.test(String(err))) return;
        throw err;
      }
      answers.push({ status: answer.response.status(), body: JSON.parse(answer.body) });
      await route.fulfill({ response: answer.response, body: answer.body }).catch((err: unknown) => {
        if (!popup.isClosed() && !/disposed|closed/i.test(String(err))) throw err;
      });
    });
    const device = await authenticator(popup, credentials);
    await popup.goto(url);
    void context;
    return { page, popup, device };
  }

  /**
   * "Sign in with a passkey" clicked, the refusal shown: the service's answers to the page's sign-ins
   * (the autofill's own request, armed when the page opened, may have been refused before), read by
   * a route that passes each request on and keeps its answer.
   */
  async function refusalsOnClick(popup: Page, label = "Sign in with a passkey") {
    await popup.getByRole("button", { name: label }).click();
    await popup.getByRole("alert").filter({ hasText: "This passkey does not sign in to this site" }).waitFor({ timeout: 10_000 });
    const answers = (popup as any).answers as Array<{ status: number; body: { code: string; detail: string } }>;
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) expect(a.status).toBe(401);
    return answers.map((a) => a.body);
  }

  const received = (page: Page) => page.evaluate(() => (window as any).received as Message[]);
  const signedIn = async (page: Page) => {
    await page.waitForFunction(() => (window as any).received.some((m: Message) => m.data?.type === "engagement:signed-in"), undefined, {
      timeout: 20_000,
    });
    return (await received(page)).find((m) => m.data.type === "engagement:signed-in")!;
  };

  let credential: VirtualCredential;
  let readerId: string;
  let graceToken: string;

  it("(a) offers a passkey after a guest signs in, and registers it", async () => {
    const { page, popup, device } = await popupOn(pageUrl(t, "/sign-in"));
    await popup.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
    await expectAccessible(popup, "the sign-in page with passkeys");
    await screenshot(popup, { path: join(SHOTS, "passkey-sign-in.png"), fullPage: true });
    await popup.getByRole("textbox", { name: "Name", exact: true }).fill("Grace");
    await popup.waitForFunction(() => (document.querySelector("altcha-widget") as any)?.getState() === "verified", undefined, {
      timeout: 20_000,
    });
    await popup.getByRole("button", { name: "Continue as guest" }).click();
    const message = await signedIn(page);
    expect(message.origin).toBe(base);
    readerId = message.data.reader!.id;
    expect(readerId).toMatch(/^guest:/);
    // the popup stays, now offering a passkey
    await popup.getByRole("heading", { name: "Add a passkey", level: 1 }).waitFor();
    const add = popup.getByRole("button", { name: "Add a passkey" });
    await expect.poll(() => add.isEnabled(), { timeout: 10_000 }).toBe(true);
    await expectAccessible(popup, "the page that offers a passkey");
    await screenshot(popup, { path: join(SHOTS, "passkey-offer.png") });
    await add.click();
    await popup.getByRole("status").filter({ hasText: "Passkey added" }).waitFor({ timeout: 10_000 });
    await screenshot(popup, { path: join(SHOTS, "passkey-added.png") });
    const held = await credentialsOf(device);
    expect(held).toHaveLength(1);
    credential = held[0]!;
    expect(credential.isResidentCredential).toBe(true);
    expect(credential.rpId).toBe("localhost");
    // the user handle is opaque: neither the reader's id nor anything of it
    const handle = Buffer.from(credential.userHandle, "base64").toString("latin1");
    expect(handle).not.toContain("guest");
    expect(Buffer.from(credential.userHandle, "base64")).toHaveLength(32);
    // listed, and signed out
    const reader = t.as({ key: t.apiKey, identity: message.data.token! });
    const list = await reader.get("/api/v1/me/passkeys");
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({
      id: expect.stringMatching(/^pk_/),
      label: expect.stringMatching(/^Passkey \d{4}-\d\d-\d\d$/),
      lastUsedAt: null,
    });
    expect((await reader.post("/api/v1/me/sign-out")).status).toBe(204);
    await page.close();
  }, 90_000);

  it("(b) signs the same reader in again through the autofill", async () => {
    const { page, popup } = await popupOn(pageUrl(t, "/sign-in"), [credential]);
    const field = popup.getByRole("textbox", { name: "Passkey" });
    await field.waitFor();
    // the conditional request is pending from the page's start; the field's autofill offers the passkey
    await field.click();
    const message = await signedIn(page);
    expect(message.data.reader!.id).toBe(readerId);
    const reader = t.as({ key: t.apiKey, identity: message.data.token! });
    const me = await reader.get("/api/v1/me");
    expect(me.body).toMatchObject({ id: readerId, name: "Grace", method: "passkey" });
    const list = await reader.get("/api/v1/me/passkeys");
    expect(list.body.items[0].lastUsedAt).not.toBeNull();
    graceToken = message.data.token!;
    await page.close();
  }, 60_000);

  it("(c) refuses the credential on another tenant", async () => {
    const { page, popup } = await popupOn(pageUrl(other, "/sign-in"), [credential]);
    for (const refusal of await refusalsOnClick(popup)) {
      expect(refusal.code).toBe("passkey_refused");
      expect(refusal.detail).toContain("no passkey of this site has this credential");
    }
    expect((await received(page)).filter((m) => m.data.type === "engagement:signed-in")).toEqual([]);
    await page.close();
  }, 60_000);

  it("(d) refuses a cloned authenticator whose counter went backwards", async () => {
    // the original signed in once more than this copy of its key counts
    const { page, popup } = await popupOn(pageUrl(t, "/sign-in"), [{ ...credential, signCount: 0 }]);
    const refusals = await refusalsOnClick(popup);
    // the first use of the copy is refused for its counter (later ones, for the challenge they spent, or the counter)
    expect(refusals[0]).toMatchObject({ code: "passkey_refused", detail: expect.stringContaining("counter went backwards") });
    expect((await received(page)).filter((m) => m.data.type === "engagement:signed-in")).toEqual([]);
    await page.close();
  }, 60_000);

  it("(e) adds one for a reader the site names, from the page the thread element opens (German), and removes it", async () => {
    const assertion = await new SignJWT({ name: "Ada" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("ada-1")
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(t.identitySecret));
    const { page, popup, device } = await popupOn(pageUrl(t, "/passkeys/new", "de"), [], assertion);
    await popup.getByRole("heading", { name: "Passkey hinzufügen", level: 1 }).waitFor();
    const add = popup.getByRole("button", { name: "Passkey hinzufügen" });
    await expect.poll(() => add.isEnabled(), { timeout: 10_000 }).toBe(true);
    await expectAccessible(popup, "the add-a-passkey page in German");
    await screenshot(popup, { path: join(SHOTS, "passkey-add-de.png") });
    await add.click();
    await popup.getByRole("status").filter({ hasText: "Passkey hinzugefügt" }).waitFor({ timeout: 10_000 });
    await page.waitForFunction(() => (window as any).received.some((m: Message) => m.data?.type === "engagement:passkey-added"));
    const [held] = await credentialsOf(device);
    const ada = t.as({ key: t.apiKey, identity: assertion });
    const list = await ada.get("/api/v1/me/passkeys");
    expect(list.body.items).toHaveLength(1);
    // the German sign-in page (seen without an authenticator) signs Ada in with it, as herself
    const de = await browser!.newPage({ viewport: { width: 520, height: 900 } });
    watch(de);
    await de.goto(pageUrl(t, "/sign-in", "de"));
    await de.getByRole("textbox", { name: "Passkey" }).waitFor();
    await de.getByRole("button", { name: "Mit einem Passkey anmelden" }).waitFor();
    await expectAccessible(de, "the German sign-in page with passkeys");
    await screenshot(de, { path: join(SHOTS, "passkey-sign-in-de.png"), fullPage: true });
    await de.close();
    const again = await popupOn(pageUrl(t, "/sign-in", "de"), [held!]);
    expect((await signedIn(again.page)).data.reader!.id).toBe("ada-1");
    // removed: it signs in no more
    expect((await ada.del(`/api/v1/me/passkeys/${list.body.items[0].id}`)).status).toBe(204);
    expect((await ada.get("/api/v1/me/passkeys")).body.items).toEqual([]);
    const after = await popupOn(pageUrl(t, "/sign-in"), [held!]);
    for (const refusal of await refusalsOnClick(after.popup))
      expect(refusal.detail).toContain("no passkey of this site has this credential");
    for (const p of [page, again.page, after.page]) await p.close();
  }, 90_000);

  it("(f) lists the passkey in the reader's export, and erasure removes it: it signs nobody in again", async () => {
    const grace = t.as({ key: t.apiKey, identity: graceToken });
    const exported = await grace.get("/api/v1/me/export");
    expect(exported.status).toBe(200);
    expect(exported.body.passkeys).toEqual([
      { id: expect.stringMatching(/^pk_/), label: expect.any(String), createdAt: expect.any(String), lastUsedAt: expect.any(String) },
    ]);
    expect(JSON.stringify(exported.body)).not.toContain(credential.credentialId);
    const erased = await t.api.del(`/api/v1/readers/${encodeURIComponent(readerId)}`);
    expect(erased.status, JSON.stringify(erased.body)).toBeLessThan(300);
    const { page, popup } = await popupOn(pageUrl(t, "/sign-in"), [{ ...credential, signCount: 100 }]);
    for (const refusal of await refusalsOnClick(popup)) expect(refusal.detail).toContain("no passkey of this site has this credential");
    await page.close();
  }, 60_000);
});
