// Hosted sign-in at an OpenID provider and at a GitHub-shaped OAuth 2 server, in headless Chromium
// (contract section 20): a host page of another origin opens `/auth/v1/{tenantId}/oidc/{id}?origin=`
// in a popup (window.open); the reader signs in at oidc-provider's own login and consent pages (the
// GitHub-shaped server approves at once); the service's finish page posts
// {"type":"engagement:signed-in","token","reader"} to the host page, from the service's origin, and
// the token is a reader session for GET /api/v1/me. And login CSRF: an attacker's own callback URL,
// kept unopened and opened in a victim's browser (a popup of the victim's page), delivers nothing to
// the victim's page and starts no session (the start's binding cookie is the attacker's browser's).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestIdp, type TestIdp } from "../support/oidc-provider.js";
import { startTestGithub, type TestGithub } from "../support/github-oauth.js";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, chromiumRequired, launchChromium } from "../support/chromium.js";

// The host page: a button per provider opening the hosted sign-in in a popup; it keeps what the
// service's origin posts back (anything from another origin is ignored, as the embed does).
const page = (config: Record<string, string>) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>News</title></head>
<body>
<button id="idp">Sign in with Test IdP</button> <button id="gh">Sign in with GitHub</button>
<p id="who"></p>
<script>
  const config = ${JSON.stringify(config)};
  window.received = [];
  addEventListener("message", (e) => {
    window.received.push({ origin: e.origin, data: e.data });
    if (e.origin === config.api && e.data && e.data.type === "engagement:signed-in") {
      window.result = { origin: e.origin, data: e.data };
      document.getElementById("who").textContent = "Signed in as " + e.data.reader.name;
    }
  });
  for (const id of ["idp", "gh"]) {
    document.getElementById(id).addEventListener("click", () => {
      window.open(config.api + "/auth/v1/" + config.tenant + "/oidc/" + id + "?origin=" + encodeURIComponent(location.origin),
        "sign-in", "width=520,height=640");
    });
  }
</script>
</body></html>`;

let server: TestServer;
let t: TestTenant;
let idp: TestIdp;
let gh: TestGithub;
let browser: Browser | undefined;
let site: http.Server;
let siteOrigin: string;
const config: Record<string, string> = {};

describe.skipIf(chromiumMissing && !chromiumRequired)("hosted sign-in at a provider, in a popup of another origin's page", () => {
  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(config)));
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    server = await startServer();
    t = await createTestTenant(server);
    const callback = (id: string) => `${server.url}/auth/v1/${t.tenantId}/callback/${id}`;
    [idp, gh] = await Promise.all([
      startTestIdp({
        signIn: {
          clientId: "engagement",
          clientSecret: "browser-idp-secret",
          redirectUris: [callback("idp")],
          accounts: {
            grace: { name: "Grace Hopper", picture: `${siteOrigin}/grace.png`, email: "grace@navy.example", email_verified: true },
          },
        },
      }),
      startTestGithub({
        clientId: "gh-client",
        clientSecret: "browser-gh-secret",
        user: { id: 583231, login: "octocat", name: null, avatar_url: `${siteOrigin}/octocat.png`, email: null },
      }),
    ]);
    const set = await t.api.patch("/api/v1/settings", {
      allowedOrigins: [siteOrigin],
      signIn: {
        methods: ["oidc"],
        oidc: [
          { id: "idp", label: "Test IdP", issuer: idp.issuer, clientId: "engagement", clientSecret: "browser-idp-secret" },
          {
            id: "gh",
            label: "GitHub",
            authorizationEndpoint: `${gh.url}/login/oauth/authorize`,
            tokenEndpoint: `${gh.url}/login/oauth/access_token`,
            userinfoEndpoint: `${gh.url}/user`,
            clientId: "gh-client",
            clientSecret: "browser-gh-secret",
          },
        ],
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    Object.assign(config, { api: server.url, tenant: t.tenantId });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await idp?.close();
    await gh?.close();
    await server?.stop();
  });

  /** A host page in a context of its own; nothing leaves the machine (the IdP's pages import a web font). */
  async function hostPage(): Promise<{ context: BrowserContext; tab: Page }> {
    const context = await browser!.newContext();
    await context.route(
      (url) => url.hostname !== "127.0.0.1",
      (r) => r.abort(),
    );
    const tab = await context.newPage();
    await tab.goto(`${siteOrigin}/`);
    return { context, tab };
  }

  async function signedIn(tab: Page) {
    await tab.waitForFunction(() => (window as any).result !== undefined, undefined, { timeout: 15_000 });
    return tab.evaluate(() => (window as any).result as { origin: string; data: any });
  }

  it("OpenID Connect: login and consent at the provider, the session posted to the host page", async () => {
    const { context, tab } = await hostPage();
    const [popup] = await Promise.all([tab.waitForEvent("popup"), tab.click("#idp")]);
    await popup.waitForURL((url) => url.origin === idp.issuer, { timeout: 15_000 });
    await popup.fill('input[name="login"]', "grace");
    await popup.fill('input[name="password"]', "any password");
    await popup.click('button[type="submit"]');
    await popup.getByRole("button", { name: "Continue" }).click({ timeout: 15_000 });
    const result = await signedIn(tab);
    expect(result.origin).toBe(server.url);
    expect(result.data).toEqual({
      type: "engagement:signed-in",
      token: expect.stringMatching(/^rs_[A-Za-z0-9_-]{43,}$/),
      reader: { id: "idp:grace", name: "Grace Hopper", avatarUrl: `${siteOrigin}/grace.png` },
    });
    expect(await tab.textContent("#who")).toBe("Signed in as Grace Hopper");
    // the finish page closes its popup
    // (it may have closed already: the event is not waited for once it has)
    if (!popup.isClosed()) await popup.waitForEvent("close", { timeout: 10_000 });
    const me = await t.as({ key: t.apiKey, identity: result.data.token }).get("/api/v1/me");
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ id: "idp:grace", name: "Grace Hopper", avatarUrl: `${siteOrigin}/grace.png`, method: "oidc" });
    await context.close();
  }, 60_000);

  it("OAuth 2 shaped like GitHub's: approved at once, the session posted to the host page", async () => {
    const { context, tab } = await hostPage();
    await tab.click("#gh");
    const result = await signedIn(tab);
    expect(result.origin).toBe(server.url);
    expect(result.data.type).toBe("engagement:signed-in");
    // no name at GitHub: the login stands in
    expect(result.data.reader).toEqual({ id: "gh:583231", name: "octocat", avatarUrl: `${siteOrigin}/octocat.png` });
    const me = await t.as({ key: t.apiKey, identity: result.data.token }).get("/api/v1/me");
    expect(me.body).toEqual({ id: "gh:583231", name: "octocat", avatarUrl: `${siteOrigin}/octocat.png`, method: "oidc" });
    // nothing else was posted to the page
    expect(await tab.evaluate(() => (window as any).received.length)).toBe(1);
    await context.close();
  }, 60_000);

  it("the attacker's callback opened in the victim's browser posts nothing to the victim's page", async () => {
    // the attacker begins a sign-in in his own browser (its request context shares the browser's
    // cookies), signs in at the provider as himself, and keeps the callback unopened
    const attacker = await browser!.newContext();
    const begun = await attacker.request.get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(siteOrigin)}`, {
      maxRedirects: 0,
    });
    expect(begun.status()).toBe(302);
    expect((await attacker.cookies(server.url)).map((c) => c.name)).toContain("eng_sign_in");
    const atProvider = await fetch(begun.headers().location!, { redirect: "manual" });
    const callback = atProvider.headers.get("location")!;
    expect(callback).toContain(`/auth/v1/${t.tenantId}/callback/gh?`);
    const sessions = async () =>
      Number(
        (
          await server.app.runtime.services.sql.query<{ n: string }>("SELECT count(*) AS n FROM reader_sessions WHERE tenant_id = $1", [
            t.tenantId,
          ])
        )[0]!.n,
      );
    const before = await sessions();

    // the victim's page opens it (a link of the attacker's, in a popup of the victim's page)
    const { context, tab } = await hostPage();
    const [popup] = await Promise.all([
      tab.waitForEvent("popup"),
      tab.evaluate((url) => void window.open(url, "sign-in", "width=520,height=640"), callback),
    ]);
    await popup.waitForLoadState();
    await popup.getByRole("heading", { name: "This sign-in cannot be completed" }).waitFor();
    expect(await popup.getByRole("alert").textContent()).toContain("begun in another browser");
    // the refusal's page holds no finish script: nothing can reach the victim's page from it
    expect(await popup.content()).not.toContain("engagementFinish(");
    expect(await tab.evaluate(() => (window as any).received)).toEqual([]);
    expect(await tab.textContent("#who")).toBe("");
    expect(await sessions()).toBe(before);
    await context.close();
    // in the browser that began it, the same callback finishes
    const own = await attacker.newPage();
    await own.goto(callback);
    await own.getByRole("heading", { name: "Signed in" }).waitFor();
    expect(await sessions()).toBe(before + 1);
    await attacker.close();
  }, 60_000);
});
