// Contract section 13 in a real browser: a page of the tenant's site signs a reader in at the site's
// own OpenID provider (test/support/oidc-provider.ts with `signIn`: a public client, authorization code
// with PKCE, the provider's login and consent pages) and posts a comment with nothing but a publishable
// key and the ID token it got — no backend of the tenant's in between. The service verifies the token
// with the provider's discovery and key set (fetched on loopback: the test server allows http, see
// test/support/server.ts), and the comment's author is `<issuer>#<sub>` with the provider's name.
// Screenshot: docs/identity/idp-sign-in.png with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestIdp, type TestIdp } from "../support/oidc-provider.js";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, chromiumRequired, launchChromium, screenshot } from "../support/chromium.js";

const CLIENT_ID = "news-site";
const DISCUSSION = "idp-browser";

// The site's page: at `/` it sends the reader to the IdP (code + PKCE, state, nonce); at `/callback`
// it trades the code for the ID token at the IdP's token endpoint, then posts with the publishable
// key and that token, and shows who posted what.
const page = (config: Record<string, string>) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>News: comments</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; color: #222; }
  .who { display: flex; align-items: center; gap: .75rem; }
  .who img { width: 48px; height: 48px; border-radius: 50%; }
  li { margin: .5rem 0; } small { color: #666; display: block; word-break: break-all; }
</style></head>
<body>
<h1>Comments</h1>
<p id="status">Signing in…</p>
<div class="who" id="who" hidden><img id="avatar" alt=""><div><strong id="name"></strong><small id="rid"></small></div></div>
<ul id="comments"></ul>
<script type="module">
  const config = ${JSON.stringify(config)};
  const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const random = () => b64url(crypto.getRandomValues(new Uint8Array(32)));
  const discovery = await (await fetch(config.issuer + "/.well-known/openid-configuration")).json();
  const redirectUri = location.origin + "/callback";
  const params = new URLSearchParams(location.search);
  const status = document.getElementById("status");
  try {
    if (location.pathname !== "/callback") {
      const verifier = random(), state = random(), nonce = random();
      sessionStorage.setItem("pkce", JSON.stringify({ verifier, state }));
      const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
      location.assign(discovery.authorization_endpoint + "?" + new URLSearchParams({
        client_id: config.clientId, response_type: "code", scope: "openid profile email", redirect_uri: redirectUri,
        code_challenge: challenge, code_challenge_method: "S256", state, nonce }));
    } else {
      const { verifier, state } = JSON.parse(sessionStorage.getItem("pkce"));
      if (params.get("state") !== state) throw new Error("state mismatch");
      const tokens = await (await fetch(discovery.token_endpoint, { method: "POST", body: new URLSearchParams({
        grant_type: "authorization_code", code: params.get("code"), redirect_uri: redirectUri,
        client_id: config.clientId, code_verifier: verifier }) })).json();
      if (!tokens.id_token) throw new Error("no ID token: " + JSON.stringify(tokens));
      const headers = { "X-API-Key": config.key, "X-Service-Identity": tokens.id_token, "Content-Type": "application/json" };
      const posted = await fetch(config.api + "/api/v1/discussions/" + config.discussion + "/comments", {
        method: "POST", headers, body: JSON.stringify({ body: "Signed in at the site's own IdP, posted from the page." }) });
      const comment = await posted.json();
      if (posted.status !== 201) throw new Error("post answered " + posted.status + ": " + JSON.stringify(comment));
      document.getElementById("avatar").src = comment.author.avatarUrl;
      document.getElementById("name").textContent = comment.author.name;
      document.getElementById("rid").textContent = "reader " + comment.author.id;
      document.getElementById("who").hidden = false;
      const li = document.createElement("li");
      li.textContent = comment.author.name + ": " + comment.body;
      document.getElementById("comments").append(li);
      status.textContent = "Posted (" + posted.status + ")";
      window.result = { postStatus: posted.status, comment };
    }
  } catch (err) {
    status.textContent = "Failed: " + err.message;
    window.result = { error: String(err) };
  }
</script>
</body></html>`;

const AVATAR = `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96"><rect width="96" height="96" fill="#3b6ea5"/><text x="48" y="62" font-size="44" font-family="sans-serif" fill="#fff" text-anchor="middle">GH</text></svg>`;

let server: TestServer;
let t: TestTenant;
let idp: TestIdp;
let browser: Browser | undefined;
let site: http.Server;
let siteOrigin: string;
const config: Record<string, string> = {};

describe.skipIf(chromiumMissing && !chromiumRequired)("a page signed in at the site's IdP, in headless Chromium", () => {
  beforeAll(async () => {
    site = http.createServer((req, res) => {
      if (req.url === "/avatar.svg") return void res.writeHead(200, { "content-type": "image/svg+xml" }).end(AVATAR);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(config));
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    [idp, server] = await Promise.all([
      startTestIdp({
        signIn: {
          clientId: CLIENT_ID,
          redirectUris: [`${siteOrigin}/callback`],
          accounts: {
            grace: { name: "Grace Hopper", picture: `${siteOrigin}/avatar.svg`, email: "grace@news.example", email_verified: true },
          },
        },
      }),
      startServer(),
    ]);
    t = await createTestTenant(server);
    const set = await t.api.patch("/api/v1/settings", {
      allowedOrigins: [siteOrigin],
      identity: { providers: [{ issuer: idp.issuer, audience: CLIENT_ID }] },
    });
    expect(set.status).toBe(200);
    expect((await t.api.put(`/api/v1/discussions/${DISCUSSION}`, { title: "IdP sign-in" })).status).toBe(201);
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    Object.assign(config, { api: server.url, key, issuer: idp.issuer, clientId: CLIENT_ID, discussion: DISCUSSION });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await idp?.close();
    await server?.stop();
  });

  it("signs in at the IdP (login and consent), gets an ID token, posts with only the publishable key and that token", async () => {
    const tab = await browser!.newPage({ viewport: { width: 800, height: 260 } });
    // the IdP's development pages import a web font: nothing leaves the machine
    await tab.route(
      (url) => url.hostname !== "127.0.0.1",
      (r) => r.abort(),
    );
    await tab.goto(`${siteOrigin}/`);
    // the IdP's own login page, on its own origin
    await tab.waitForURL((url) => url.origin === idp.issuer, { timeout: 15_000 });
    await tab.fill('input[name="login"]', "grace");
    await tab.fill('input[name="password"]', "any password");
    await tab.click('button[type="submit"]');
    // its consent page, then back to the site's callback
    await tab.getByRole("button", { name: "Continue" }).click({ timeout: 15_000 });
    await tab.waitForURL((url) => url.origin === siteOrigin && url.pathname === "/callback", { timeout: 15_000 });
    await tab.waitForFunction(() => (window as any).result !== undefined, undefined, { timeout: 15_000 });
    const result = await tab.evaluate(() => (window as any).result);
    expect(result.error).toBeUndefined();
    expect(result.postStatus).toBe(201);
    const readerId = `${idp.issuer}#grace`;
    expect(result.comment.author).toEqual({ badge: null, id: readerId, name: "Grace Hopper", avatarUrl: `${siteOrigin}/avatar.svg` });
    await tab.waitForFunction(() => (document.getElementById("avatar") as HTMLImageElement).complete);
    const dir = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "identity") : join("node_modules", ".cache", "screens");
    mkdirSync(dir, { recursive: true });
    await screenshot(tab, { path: join(dir, "idp-sign-in.png") });
    await tab.close();

    // through the API: the comment is the IdP's reader's, under the issuer's namespace
    const listed = await t.api.get(`/api/v1/discussions/${DISCUSSION}/comments`);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0].author).toEqual({ badge: null, id: readerId, name: "Grace Hopper", avatarUrl: `${siteOrigin}/avatar.svg` });
    const reader = await t.api.get(`/api/v1/readers/${encodeURIComponent(readerId)}`);
    expect(reader.status, JSON.stringify(reader.body)).toBe(200);
    expect(reader.body).toMatchObject({ id: readerId, name: "Grace Hopper" });
  }, 60_000);
});
