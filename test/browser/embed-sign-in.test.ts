// The thread element's Sign in (contract section 20), in headless Chromium on a host
// page of another origin with the strict CSP of section 14: "Sign in" only while the tenant has a
// hosted sign-in method and the page gives no identity; it opens the tenant's sign-in page in a popup
// (`?origin=<page origin>&lang=<element language>`); a message from the service's origin (posted by a
// page of that origin in the popup, with a real guest session) signs the element in, one from another
// origin does not; the token is kept in the page's localStorage and used (the reader's post carries
// their name), survives a reload, and "Sign out" ends it at the service and forgets it; a stored token
// the service refuses is forgotten; the host page's own identity wins; and the whole round trip
// through the hosted sign-in page (its guest form, the ALTCHA widget solving in the popup); with passkeys
// on, "Add a passkey" opens the service's page for it, which the element tells the token. Screenshots
// docs/embed/sign-in.png, signed-in.png and signed-in-passkey.png with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";
import { hostPages, type HostPage } from "../support/embed.js";
import { signInGuest, type GuestSession } from "../support/sign-in.js";
import { startSmtp, type TestSmtp } from "../support/smtp.js";
import { startTestGithub, type TestGithub } from "../support/github-oauth.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");

describe.skipIf(chromiumMissing)("<engagement-thread>'s Sign in", { timeout: 90_000 }, () => {
  let server: TestServer;
  let t: TestTenant;
  let browser: Browser | undefined;
  let host: HostPage;
  let elsewhere: HostPage;
  let key: string;
  let smtp: TestSmtp;
  let gh: TestGithub;
  const violations: string[] = [];
  const storageKey = () => `engagement:session:${t.tenantId}`;

  beforeAll(async () => {
    smtp = await startSmtp();
    // the email worker is driven pass by pass (server.app.email.runOnce)
    server = await startServer({ SMTP_URL: smtp.url, RUN_EMAIL_WORKER: "0" });
    t = await createTestTenant(server);
    gh = await startTestGithub({
      clientId: "embed-gh",
      clientSecret: "embed-gh-secret",
      user: { id: 4242, login: "octo", name: "Octo Cat", avatar_url: "https://avatars.example/octo.png", email: null },
    });
    key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    host = await hostPages(server.url, key);
    // a page of another origin: a message from it must not sign anyone in
    elsewhere = await hostPages(server.url, key);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await elsewhere?.close();
    await server?.stop();
    await smtp?.close();
    await gh?.close();
    // no page of any test was refused anything by its CSP
    expect(violations).toEqual([]);
  });

  const methods = async (list: string[]) => {
    const r = await t.api.patch("/api/v1/settings", { signIn: { methods: list } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };

  const thread = (p: Page) => p.locator("engagement-thread");
  const signInButton = (p: Page) => thread(p).getByRole("button", { name: "Sign in", exact: true });
  const stored = (p: Page) => p.evaluate((k) => localStorage.getItem(k), storageKey());

  /** The element on the host page, loaded (in a browser context of its own: its localStorage starts empty). */
  async function open(discussionId: string, attrs = ""): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 800 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await p.goto(host.url(discussionId, attrs));
    await loaded(p);
    return p;
  }
  const loaded = async (p: Page) => {
    await thread(p)
      .getByRole("heading", { name: /Comments|Kommentare/ })
      .waitFor();
    await thread(p).locator("ol[part=comments]").waitFor({ state: "attached" });
  };

  /** Clicks Sign in: the popup it opens, at its URL. */
  async function openPopup(p: Page, name = "Sign in"): Promise<{ popup: Page; url: URL }> {
    const [popup] = await Promise.all([p.waitForEvent("popup"), thread(p).getByRole("button", { name, exact: true }).click()]);
    await popup.waitForLoadState("domcontentloaded");
    return { popup, url: new URL(popup.url()) };
  }

  /** Records the origins of the messages the host page receives, after the element's own listener (which was added first) has seen each. */
  const recordMessages = (p: Page) =>
    p.evaluate(() => {
      const seen: string[] = ((window as unknown as { __seen: string[] }).__seen = []);
      window.addEventListener("message", (e) => seen.push(e.origin));
    });
  const messagesFrom = (p: Page, origin: string, n: number) =>
    p.waitForFunction(([o, count]) => (window as unknown as { __seen: string[] }).__seen.filter((x) => x === o).length >= count, [
      origin,
      n,
    ] as const);

  /** What the hosted sign-in's finish page posts to its opener, posted from `from` (a page in the popup). */
  const postSignedIn = (from: Page, session: GuestSession, target: string) =>
    from.evaluate(({ message, target }) => window.opener.postMessage(message, target), {
      message: { type: "engagement:signed-in", token: session.token, reader: session.reader },
      target,
    });

  it("shows no Sign in while the tenant has no hosted sign-in method", async () => {
    await methods([]);
    const p = await open("signin-off");
    await expect(thread(p).getByText("Sign in to join the discussion.").count()).resolves.toBe(1);
    await expect(signInButton(p).count()).resolves.toBe(0);
    await p.close();
  });

  it("with a method on and no identity, Sign in opens the tenant's sign-in page in a popup with the page's origin and language", async () => {
    await methods(["guest"]);
    const p = await open("signin-popup");
    await signInButton(p).waitFor();
    await expectAccessible(p, "the thread with Sign in");
    await screenshot(p, { path: join(SHOTS, "sign-in.png"), fullPage: true });
    const { popup, url } = await openPopup(p);
    expect(url.origin).toBe(new URL(server.url).origin);
    expect(url.pathname).toBe(`/auth/v1/${t.tenantId}/sign-in`);
    expect(url.searchParams.get("origin")).toBe(host.origin);
    expect(url.searchParams.get("lang")).toBe("en");
    await popup.close();
    await p.close();

    // a German element asks for the page in German
    const de = await open("signin-popup", 'lang="de"');
    const german = await openPopup(de, "Anmelden");
    expect(german.url.searchParams.get("lang")).toBe("de");
    await german.popup.close();
    await de.close();
  });

  it("a message from another origin is ignored; the service's signs the element in, its token kept and used, and Sign out ends it", async () => {
    await methods(["guest"]);
    const d = "signin-flow";
    // a publishable key never creates a discussion: the site's backend does
    expect((await t.api.put(`/api/v1/discussions/${d}`, { title: "Signing in" })).status).toBeLessThan(300);
    const ada = await signInGuest(server.url, t.tenantId, "Ada Guest");
    const mallory = await signInGuest(server.url, t.tenantId, "Mallory");
    const p = await open(d);
    await signInButton(p).waitFor();
    await recordMessages(p);

    // a page of another origin in a window this page opened posts a real session: nothing happens
    const [other] = await Promise.all([
      p.waitForEvent("popup"),
      p.evaluate((u) => void window.open(u, "other"), `${elsewhere.origin}/site.css`),
    ]);
    await other.waitForLoadState("domcontentloaded");
    expect(new URL(other.url()).origin).toBe(elsewhere.origin);
    await postSignedIn(other, mallory, host.origin);
    await messagesFrom(p, elsewhere.origin, 1);
    expect(await stored(p)).toBeNull();
    await expect(signInButton(p).count()).resolves.toBe(1);
    await other.close();

    // the service's origin: a page of it in the element's own popup posts the session
    const { popup } = await openPopup(p);
    await postSignedIn(popup, ada, host.origin);
    await thread(p).getByText("Signed in as Ada Guest").waitFor();
    expect(await stored(p)).toBe(ada.token);
    await expect(signInButton(p).count()).resolves.toBe(0);
    await popup.close();

    // used as X-Service-Identity: the post is Ada's (held: guests' comments are pre-moderated by default)
    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("Hello from a guest");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    const mine = thread(p).locator("article", { has: p.locator(".body", { hasText: "Hello from a guest" }) });
    await mine.waitFor();
    await expect(mine.locator("[part=author]").textContent()).resolves.toBe("Ada Guest");
    await expect(mine.getByText("Awaiting moderation").count()).resolves.toBe(1);
    const id = await mine.getAttribute("data-comment-id");
    const saved = await t.api.get(`/api/v1/comments/${id}`);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toMatchObject({ status: "pending", author: { id: ada.reader.id, name: "Ada Guest" } });
    await expectAccessible(p, "the thread signed in through hosted sign-in");
    await screenshot(p, { path: join(SHOTS, "signed-in.png"), fullPage: true });

    // kept across a reload: the page's localStorage
    await p.reload();
    await loaded(p);
    await thread(p).getByText("Signed in as Ada Guest").waitFor();

    // Sign out: ended at the service, forgotten here
    await thread(p).getByRole("button", { name: "Sign out" }).click();
    await signInButton(p).waitFor();
    expect(await stored(p)).toBeNull();
    const me = await t.as({ key: t.apiKey, identity: ada.token }).get("/api/v1/me");
    expect(me.status).toBe(401);
    await p.close();
  });

  /** A new page for `discussionId` whose every request to the service is logged from the start: method, path, body, status. */
  async function openLogged(
    discussionId: string,
  ): Promise<{ p: Page; log: { method: string; path: string; body: string; status: number }[] }> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 800 } });
    const log: { method: string; path: string; body: string; status: number }[] = [];
    p.on("response", (r) => {
      const u = new URL(r.url());
      if (u.origin !== new URL(server.url).origin) return;
      log.push({ method: r.request().method(), path: u.pathname, body: r.request().postData() ?? "", status: r.status() });
    });
    await p.goto(host.url(discussionId));
    await loaded(p);
    return { p, log };
  }

  /** a stream ticket refused because its discussion does not exist yet: asked again until it does */
  const isWaitingTicket = (r: { method: string; path: string; status: number }) =>
    r.method === "POST" && r.path === "/api/v1/stream/ticket" && r.status === 404;

  it("the README's two lines on a new page: the first comment creates the discussion with the page's URL and title", async () => {
    await methods(["guest"]);
    const d = `fresh-${Date.now()}`;
    const ada = await signInGuest(server.url, t.tenantId, "Ada First");
    const { p, log } = await openLogged(d);
    const { popup } = await openPopup(p);
    await postSignedIn(popup, ada, host.origin);
    await thread(p).getByText("Signed in as Ada First").waitFor();
    await popup.close();
    // the discussion does not exist yet: its stream's ticket is refused, and asked again less and
    // less often (1 s, then 2 s, … up to a minute) until the page's first comment comes
    await p.waitForTimeout(2_500);
    const tickets = () => log.filter((r) => r.method === "POST" && r.path === "/api/v1/stream/ticket" && r.body.includes(d));
    expect(
      tickets().every((r) => r.status === 404),
      JSON.stringify(log),
    ).toBe(true);
    expect(tickets().length).toBeGreaterThanOrEqual(1);
    expect(tickets().length).toBeLessThanOrEqual(3);

    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("First!");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    const mine = thread(p).locator("article", { has: p.locator(".body", { hasText: "First!" }) });
    await mine.waitFor();
    const made = await t.api.get(`/api/v1/discussions/${d}`);
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ id: d, title: "An article", url: host.url(d) });
    // now the stream opens
    await expect.poll(() => tickets().filter((r) => r.status === 201).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    // no other 4xx was asked twice (the ticket of a discussion not there yet is asked again, above)
    const refused = log.filter((r) => r.status >= 400 && r.status < 500 && !isWaitingTicket(r)).map((r) => `${r.method} ${r.path}`);
    expect(new Set(refused).size).toBe(refused.length);
    await p.close();
  });

  it("with discussions.autoCreate off, the post says the discussion is not open, and no refusal is asked again", async () => {
    await methods(["guest"]);
    expect((await t.api.patch("/api/v1/settings", { discussions: { autoCreate: false } })).status).toBe(200);
    try {
      const d = `closed-${Date.now()}`;
      const bo = await signInGuest(server.url, t.tenantId, "Bo");
      const { p, log } = await openLogged(d);
      const { popup } = await openPopup(p);
      await postSignedIn(popup, bo, host.origin);
      await thread(p).getByText("Signed in as Bo").waitFor();
      await popup.close();
      await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("Anyone here?");
      await thread(p).getByRole("button", { name: "Post comment" }).click();
      await thread(p)
        .getByRole("alert")
        .filter({ hasText: "Comments are not open on this page yet: the site has not set up its discussion." })
        .waitFor();
      await p.waitForTimeout(2_500);
      expect((await t.api.get(`/api/v1/discussions/${d}`)).status).toBe(404);
      // no refusal asked again but the stream's ticket, which waits for the discussion (less and less often)
      const refused = log.filter((r) => r.status >= 400 && r.status < 500 && !isWaitingTicket(r)).map((r) => `${r.method} ${r.path}`);
      expect(new Set(refused).size).toBe(refused.length);
      expect(log.filter(isWaitingTicket).length).toBeLessThanOrEqual(4);
      await p.close();
    } finally {
      expect((await t.api.patch("/api/v1/settings", { discussions: { autoCreate: true } })).status).toBe(200);
    }
  });

  it("a message of another shape from the service's origin, or with a token that is not a session's, is ignored", async () => {
    await methods(["guest"]);
    const p = await open("signin-shapes");
    const bo = await signInGuest(server.url, t.tenantId, "Bo");
    await recordMessages(p);
    const { popup } = await openPopup(p);
    await popup.evaluate(
      ({ target, token }) => {
        window.opener.postMessage({ type: "engagement:signed-out", token }, target);
        window.opener.postMessage({ type: "engagement:signed-in", token: "eyJhbGciOiJIUzI1NiJ9.e30.x" }, target);
        window.opener.postMessage(`{"type":"engagement:signed-in","token":"${token}"}`, target);
      },
      { target: host.origin, token: bo.token },
    );
    await messagesFrom(p, new URL(server.url).origin, 3);
    expect(await stored(p)).toBeNull();
    await expect(signInButton(p).count()).resolves.toBe(1);
    // the contract's message is taken
    await postSignedIn(popup, bo, host.origin);
    await thread(p).getByText("Signed in as Bo").waitFor();
    expect(await stored(p)).toBe(bo.token);
    await popup.close();
    await p.close();
  });

  it("forgets a stored token the service refuses (signed out elsewhere) and offers Sign in again", async () => {
    await methods(["guest"]);
    const cy = await signInGuest(server.url, t.tenantId, "Cy");
    expect((await t.as({ key: t.apiKey, identity: cy.token }).post("/api/v1/me/sign-out")).status).toBe(204);
    const p = await browser!.newPage();
    // the token sits in the host page's storage before the element loads
    await p.goto(host.url("signin-refused"));
    await p.evaluate(([k, v]) => localStorage.setItem(k!, v!), [storageKey(), cy.token]);
    await p.reload();
    await loaded(p);
    await signInButton(p).waitFor();
    await expect.poll(() => stored(p)).toBeNull();
    await expect(thread(p).getByText("Signed in as Cy").count()).resolves.toBe(0);
    await p.close();
  });

  it("the host page's own identity wins: no Sign in, and the kept session is not used", async () => {
    await methods(["guest"]);
    const dee = await signInGuest(server.url, t.tenantId, "Dee");
    expect((await t.api.put("/api/v1/discussions/signin-host", { title: "The host's reader" })).status).toBeLessThan(300);
    const p = await browser!.newPage();
    await p.goto(host.url("signin-host"));
    await p.evaluate(([k, v]) => localStorage.setItem(k!, v!), [storageKey(), dee.token]);
    await p.reload();
    await loaded(p);
    await thread(p).getByText("Signed in as Dee").waitFor();
    const assertion = await t.identity("host-reader", { name: "Hosted Hana" });
    await p.evaluate((tok) => {
      (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
    }, assertion);
    await expect.poll(() => thread(p).getByText("Signed in as Dee").count()).toBe(0);
    await expect(signInButton(p).count()).resolves.toBe(0);
    await expect(thread(p).getByRole("button", { name: "Sign out" }).count()).resolves.toBe(0);
    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("Posted as the site's reader");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    const posted = thread(p).locator("article", { has: p.locator(".body", { hasText: "Posted as the site's reader" }) });
    await posted.waitFor();
    await expect(posted.locator("[part=author]").textContent()).resolves.toBe("Hosted Hana");
    // the kept session is still there for when the page stops giving one
    expect(await stored(p)).toBe(dee.token);
    await p.close();
  });

  it("signs a guest in through the hosted sign-in page in the popup, end to end", async () => {
    await methods(["guest"]);
    expect((await t.api.put("/api/v1/discussions/signin-round-trip", { title: "Round trip" })).status).toBeLessThan(300);
    const p = await open("signin-round-trip");
    const { popup } = await openPopup(p);
    await popup.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
    await popup.getByRole("textbox", { name: "Name", exact: true }).fill("Eve");
    // the guest form's proof of work: the ALTCHA widget solves it by itself once the form has focus
    await popup.waitForFunction(() => (document.querySelector("altcha-widget") as any)?.getState() === "verified", undefined, {
      timeout: 20_000,
    });
    await popup.getByRole("button", { name: "Continue as guest" }).click();
    await thread(p).getByText("Signed in as Eve").waitFor({ timeout: 15_000 });
    const token = await stored(p);
    expect(token).toMatch(/^rs_[A-Za-z0-9_-]{43,}$/);
    expect((await t.as({ key: t.apiKey, identity: token! }).get("/api/v1/me")).body).toMatchObject({ name: "Eve", method: "guest" });
    await thread(p).getByRole("textbox", { name: "Write a comment" }).fill("Eve was here");
    await thread(p).getByRole("button", { name: "Post comment" }).click();
    const posted = thread(p).locator("article", { has: p.locator(".body", { hasText: "Eve was here" }) });
    await posted.waitFor();
    await expect(posted.locator("[part=author]").textContent()).resolves.toBe("Eve");
    await p.close();
  });

  it("signs a reader in by email link through the popup, end to end", async () => {
    await methods(["email"]);
    expect((await t.api.put("/api/v1/discussions/signin-email-trip", { title: "By email" })).status).toBeLessThan(300);
    const p = await open("signin-email-trip");
    const { popup } = await openPopup(p);
    await popup.getByRole("textbox", { name: "Email", exact: true }).fill("ivy@readers.example");
    await popup.getByRole("button", { name: "Email me a link" }).click();
    const mailTo = () => smtp.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === "ivy@readers.example");
    await expect
      .poll(async () => {
        await server.app.email.runOnce();
        return mailTo().length;
      })
      .toBe(1);
    const link = /(http:\/\/\S+\/auth\/v1\/\S+\/email\/[A-Za-z0-9_-]{43})/.exec(mailTo()[0]!.text ?? "")![1]!;
    // the reader opens the link in another tab of the same browser; the waiting popup finishes
    const tab = await p.context().newPage();
    await tab.goto(link);
    await tab.getByRole("textbox", { name: "Your name" }).fill("Ivy");
    await tab.getByRole("button", { name: "Sign in" }).click();
    await thread(p).getByText("Signed in as Ivy").waitFor({ timeout: 15_000 });
    const token = await stored(p);
    expect((await t.as({ key: t.apiKey, identity: token! }).get("/api/v1/me")).body).toMatchObject({ name: "Ivy", method: "email" });
    await p.close();
  });

  it("signs a reader in at an OAuth 2 provider (GitHub's shape) through the popup, end to end", async () => {
    const set = await t.api.patch("/api/v1/settings", {
      signIn: {
        methods: ["oidc"],
        oidc: [
          {
            id: "gh",
            label: "GitHub",
            authorizationEndpoint: `${gh.url}/login/oauth/authorize`,
            tokenEndpoint: `${gh.url}/login/oauth/access_token`,
            userinfoEndpoint: `${gh.url}/user`,
            clientId: "embed-gh",
            clientSecret: "embed-gh-secret",
          },
        ],
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await t.api.put("/api/v1/discussions/signin-oauth-trip", { title: "By GitHub" })).status).toBeLessThan(300);
    const p = await open("signin-oauth-trip");
    const { popup } = await openPopup(p);
    // the provider approves at once and sends the popup back to the service's callback
    await popup.getByRole("link", { name: "Sign in with GitHub" }).click();
    await thread(p).getByText("Signed in as Octo Cat").waitFor({ timeout: 15_000 });
    const token = await stored(p);
    expect((await t.as({ key: t.apiKey, identity: token! }).get("/api/v1/me")).body).toMatchObject({
      id: "gh:4242",
      name: "Octo Cat",
      method: "oidc",
    });
    await p.close();
  });

  it("with passkeys on, a signed-in reader's Add a passkey opens the service's page, which the element alone tells the token", async () => {
    await methods(["guest", "passkey"]);
    // the relying party is localhost (no PUBLIC_URL): the element speaks to the service under that name
    const local = await hostPages(`http://localhost:${new URL(server.url).port}`, key);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin, local.origin] })).status).toBe(200);
    try {
      const fay = await signInGuest(server.url, t.tenantId, "Fay");
      const p = await browser!.newPage({ viewport: { width: 900, height: 800 } });
      await p.goto(local.url("signin-passkey"));
      await p.evaluate(([k, v]) => localStorage.setItem(k!, v!), [storageKey(), fay.token]);
      await p.reload();
      await loaded(p);
      await thread(p).getByText("Signed in as Fay").waitFor();
      await screenshot(p, { path: join(SHOTS, "signed-in-passkey.png") });
      const { popup, url } = await openPopup(p, "Add a passkey");
      expect(url.pathname).toBe(`/auth/v1/${t.tenantId}/passkeys/new`);
      expect(url.searchParams.get("origin")).toBe(local.origin);
      // a virtual authenticator in the popup (the DevTools protocol's WebAuthn domain)
      const cdp = await popup.context().newCDPSession(popup);
      await cdp.send("WebAuthn.enable");
      await cdp.send("WebAuthn.addVirtualAuthenticator", {
        options: {
          protocol: "ctap2",
          transport: "internal",
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      // the page asked the element for the identity and got it: its button is enabled
      const add = popup.getByRole("button", { name: "Add a passkey" });
      await expect.poll(() => add.isEnabled(), { timeout: 10_000 }).toBe(true);
      await add.click();
      await popup.getByRole("status").filter({ hasText: "Passkey added" }).waitFor({ timeout: 10_000 });
      const list = await t.as({ key: t.apiKey, identity: fay.token }).get("/api/v1/me/passkeys");
      expect(list.body.items).toHaveLength(1);
      await p.close();
    } finally {
      await local.close();
      expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    }
  });
});
