// The console's Settings › Sign-in (contract section 20) in headless Chromium against
// the real server: the methods, guests' options and session length are saved (only what changed is
// sent); a provider is added with a client secret that is sent once and never shown again (the field
// says "stored"; saving an edit without a new secret keeps the stored one); the answer's problems
// (422) are shown beside their fields; a saved provider's Test lists the checks the service ran
// (testSignInProvider: its endpoints refused on a closed port, its stored secret opening). A reader's page says how they signed in: as a guest (a session
// made through the guest API with a solved ALTCHA challenge), or "Identified by the site". axe-core;
// screenshot docs/console/sign-in-settings.png with UPDATE_SCREENSHOTS=1.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";
import { signInGuest } from "../support/sign-in.js";

const OWNER = "sign-in.owner@example.com";
const SECRET = "gh-client-s3cret-value";
// loopback endpoints: the test server admits them (ALLOW_HTTP_WEBHOOKS=1); nothing is called here
const ENDPOINTS = {
  authorizationEndpoint: "http://127.0.0.1:9/login/oauth/authorize",
  tokenEndpoint: "http://127.0.0.1:9/login/oauth/access_token",
  userinfoEndpoint: "http://127.0.0.1:9/user",
};

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
const settings = async () => (await t.api.get("/api/v1/settings")).body;
/** the sealed secret stored for the tenant's first provider, opened */
const storedSecret = async () => {
  const s = server.app.runtime.services;
  const [row] = await s.sql.query<{ enc: string | null }>(
    "SELECT settings -> 'signIn' -> 'oidc' -> 0 ->> 'clientSecretEnc' AS enc FROM tenants WHERE id = $1",
    [t.tenantId],
  );
  return row?.enc ? s.secretBox.open(row.enc) : null;
};

/** The input of the next UpdateSignIn request the page sends: what the console writes. */
const nextPatch = () =>
  page
    .waitForRequest((r) => r.url().endsWith("/graphql") && (r.postData() ?? "").includes("mutation UpdateSignIn"))
    .then((r) => JSON.parse(r.postData()!).variables.input);
const provider = (n: number) => page.getByRole("group", { name: `Provider ${n}`, exact: true });
const save = () => page.getByRole("button", { name: "Save sign-in settings" }).click();
const status = (text: string) => page.getByRole("status").filter({ hasText: text }).waitFor();
/** the text of the problem a field's aria-describedby names */
const problemOf = async (field: ReturnType<Page["getByLabel"]>) => {
  expect(await field.getAttribute("aria-invalid")).toBe("true");
  const ids = (await field.getAttribute("aria-describedby"))!.split(" ").filter((id) => id.startsWith("err-"));
  expect(ids).toHaveLength(1);
  return page.locator(`[id="${ids[0]}"]`).textContent();
};

describe.skipIf(chromiumMissing)("the console's sign-in settings", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre", allowedOrigins: ["https://news.example"] })).status).toBe(200);
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("sets the methods, guests' options, session length and a provider with a secret that is never shown again", async () => {
    const before = await settings();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Sign-in" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign-in" }).waitFor();
    await settled(page);
    // the defaults: off
    for (const name of ["Email link", "Sign in with a provider (OpenID Connect / OAuth 2)", "Guests"])
      expect(await page.getByRole("checkbox", { name, exact: true }).isChecked()).toBe(false);
    expect(await page.getByRole("checkbox", { name: "Hold guests' comments for review" }).isChecked()).toBe(true);
    expect(await page.getByLabel("Session length (days)").inputValue()).toBe("30");
    await page.getByText("No provider").waitFor();

    await page.getByRole("checkbox", { name: "Guests", exact: true }).check();
    await page.getByRole("checkbox", { name: "Sign in with a provider (OpenID Connect / OAuth 2)" }).check();
    await page.getByRole("checkbox", { name: "Guests must give an email address" }).check();
    await page.getByRole("checkbox", { name: "Hold guests' comments for review" }).uncheck();
    await page.getByLabel("Session length (days)").fill("14");
    await page.getByRole("button", { name: "Add a provider" }).click();
    const p1 = provider(1);
    await p1.getByLabel("Id", { exact: true }).fill("gh");
    await p1.getByLabel("Label", { exact: true }).fill("GitHub");
    await p1.getByLabel("Authorization endpoint").fill(ENDPOINTS.authorizationEndpoint);
    await p1.getByLabel("Token endpoint").fill(ENDPOINTS.tokenEndpoint);
    await p1.getByLabel("Userinfo endpoint").fill(ENDPOINTS.userinfoEndpoint);
    await p1.getByLabel("Client id").fill("Iv1.abc");
    await p1.getByLabel("Client secret").fill(SECRET);
    await p1.getByLabel("Scopes (space-separated)").fill("read:user user:email");
    // the redirect URI to register with the provider, named by the form
    await p1.getByText(`${server.url}/auth/v1/${t.tenantId}/callback/gh`).waitFor();
    const sent = nextPatch();
    await save();
    const provider1 = { id: "gh", label: "GitHub", ...ENDPOINTS, clientId: "Iv1.abc", scopes: ["read:user", "user:email"] };
    expect(await sent).toEqual({
      signIn: {
        methods: ["oidc", "guest"],
        guest: { requireEmail: true, moderation: "post" },
        sessionDays: 14,
        oidc: [{ ...provider1, clientSecret: SECRET }],
      },
    });
    await status("Sign-in settings saved: methods, guest, sessionDays, oidc.");
    const after = await settings();
    expect(after.signIn).toEqual({
      methods: ["oidc", "guest"],
      oidc: [provider1],
      guest: { requireEmail: true, moderation: "post" },
      sessionDays: 14,
    });
    expect({ ...after, signIn: before.signIn }).toEqual(before);
    expect(await storedSecret()).toBe(SECRET);

    // the secret is not shown: an empty field saying "stored", nowhere in the page
    await page.reload();
    await settled(page);
    const secret = provider(1).getByLabel("Client secret");
    expect(await secret.inputValue()).toBe("");
    expect(await secret.getAttribute("placeholder")).toBe("stored");
    await provider(1).getByText("A secret is stored").waitFor();
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.evaluate(() => document.body.innerText)).not.toContain(SECRET);
    expect(await provider(1).getByLabel("Client id").inputValue()).toBe("Iv1.abc");
    expect(await page.getByRole("checkbox", { name: "Guests", exact: true }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "Hold guests' comments for review" }).isChecked()).toBe(false);
    await save();
    await status("Nothing changed");

    // an edit without a new secret sends none: the stored one is kept
    await provider(1).getByLabel("Label", { exact: true }).fill("GitHub.com");
    const edited = nextPatch();
    await save();
    expect(await edited).toEqual({ signIn: { oidc: [{ ...provider1, label: "GitHub.com" }] } });
    await status("Sign-in settings saved: oidc.");
    expect(await storedSecret()).toBe(SECRET);
    const audit = await t.admin.get("/api/v1/audit?action=settings.update");
    expect(JSON.stringify(audit.body)).not.toContain(SECRET);

    // Test: the saved provider's endpoints called from the service; nothing listens on port 9
    await provider(1).getByRole("button", { name: "Test", exact: true }).click();
    const answer = provider(1).getByRole("status").filter({ hasText: "checks" });
    await answer.getByText("Some checks failed.").waitFor({ timeout: 20_000 });
    const checks = await answer.locator("li").allTextContents();
    expect(checks.find((c) => c.startsWith("authorization: failed"))).toContain(ENDPOINTS.authorizationEndpoint);
    expect(checks).toContain("clientSecret: ok");
    // a provider not saved yet has nothing to test
    await page.getByRole("button", { name: "Add a provider" }).click();
    expect(await provider(2).getByRole("button", { name: "Test", exact: true }).isDisabled()).toBe(true);
    await provider(2).getByRole("button", { name: "Remove provider 2" }).click();

    await expectAccessible(page, "the sign-in settings");
    await shoot(page, "sign-in-settings");
  });

  it("shows the answer's problems (422) beside their fields", async () => {
    const stored = (await settings()).signIn;
    await page.getByLabel("Session length (days)").fill("400");
    await save();
    await page.getByRole("alert").filter({ hasText: "see the messages beside them" }).waitFor();
    expect(await problemOf(page.getByLabel("Session length (days)"))).toMatch(/365/);
    await page.getByLabel("Session length (days)").fill("14");

    // a new provider needs a secret, and an issuer (or the three endpoints)
    await page.getByRole("button", { name: "Add a provider" }).click();
    const p2 = provider(2);
    await p2.getByLabel("Id", { exact: true }).fill("gitlab");
    await p2.getByLabel("Label", { exact: true }).fill("GitLab");
    await p2.getByLabel("Issuer").fill("http://127.0.0.1:9/gitlab");
    await p2.getByLabel("Client id").fill("gl-client");
    await save();
    await page.getByRole("alert").filter({ hasText: "see the messages beside them" }).waitFor();
    expect(await problemOf(p2.getByLabel("Client secret"))).toBe("is required for a new provider");
    expect(await provider(1).getByLabel("Client secret").getAttribute("aria-invalid")).toBeNull();
    await expectAccessible(page, "the sign-in settings with problems");
    expect((await settings()).signIn).toEqual(stored);

    // removed again: nothing changed
    await p2.getByRole("button", { name: "Remove provider 2" }).click();
    await save();
    await status("Nothing changed");

    // the narrow screen: nothing sticks out
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "the sign-in settings at 390 px");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("a reader's page says how they signed in: as a guest, or identified by the site", async () => {
    expect((await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest"], guest: { requireEmail: false } } })).status).toBe(200);
    const guest = await signInGuest(server.url, t.tenantId, "Gus Guest");
    const posted = await t.as({ key: t.apiKey, identity: guest.token }).post("/api/v1/discussions/sign-in-d/comments", { body: "Hi" });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    await page.goto(`${server.url}/console/#/readers/${encodeURIComponent(guest.reader.id)}`);
    await page.getByRole("heading", { level: 1, name: "Gus Guest" }).waitFor();
    await settled(page);
    const line = page.locator(".sign-in-method");
    expect(await line.textContent()).toMatch(/^Signed in as a guest, .+\.$/);
    await expectAccessible(page, "a guest's page");
    // signed out: still a guest of the hosted sign-in, with no session left
    expect((await t.as({ key: t.apiKey, identity: guest.token }).post("/api/v1/me/sign-out")).status).toBe(204);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Gus Guest" }).waitFor();
    await settled(page);
    expect(await line.textContent()).toBe("Signed in as a guest (signed out since).");

    const site = await t.reader("site-reader", { name: "Site Reader" });
    expect((await site.post("/api/v1/discussions/sign-in-d/comments", { body: "Hello" })).status).toBe(201);
    await page.goto(`${server.url}/console/#/readers/site-reader`);
    await page.getByRole("heading", { level: 1, name: "Site Reader" }).waitFor();
    await settled(page);
    expect(await line.textContent()).toMatch(/^Identified by the site/);
  });
});
