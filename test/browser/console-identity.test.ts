// The console's identity-provider settings in headless Chromium, against the real server and a real
// OpenID provider on loopback (contract section 13): Settings › Identity providers adds a provider and
// sends only the `identity.providers` list (every other setting of the tenant stays as it was), shows the
// answer's problems beside their fields, saves the secret overlap on its own, removes a provider; "Test
// token" shows the reader a valid ID token stands for with its header and claims, and why an expired one
// is refused. A reader's page gives owners Export (the JSON file downloaded) and Erase (a dialog naming
// the reader and what the tenant's privacy.erasure does, then the erasure); moderators get neither. axe-core at 1280 and 390 px; screenshots into docs/console with UPDATE_SCREENSHOTS=1.
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { startTestIdp, type TestIdp } from "../support/oidc-provider.js";
import { expectAccessible, openConsole, operatorLink, overflow, settled, shoot } from "../support/console-page.js";

const OWNER = "identity.owner@example.com";
const MODERATOR = "identity.moderator@example.com";

let server: TestServer;
let t: TestTenant;
let idp: TestIdp;
let browser: Browser | undefined;
let page: Page;
const link = (email: string) => operatorLink(server, t.tenantId, email);
const settings = async () => (await t.api.get("/api/v1/settings")).body;

/** The input of the next UpdateIdentity request the page sends: what the console writes. */
const nextPatch = () =>
  page
    .waitForRequest((r) => r.url().endsWith("/graphql") && (r.postData() ?? "").includes("mutation UpdateIdentity"))
    .then((r) => JSON.parse(r.postData()!).variables.input);

const provider = (n: number) => page.getByRole("group", { name: `Provider ${n}`, exact: true });
const save = () => page.getByRole("button", { name: "Save identity settings" }).click();
const status = (text: string) => page.getByRole("status").filter({ hasText: text }).waitFor();

describe.skipIf(chromiumMissing)("the console's identity providers", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    idp = await startTestIdp();
    server = await startServer();
    t = await createTestTenant(server);
    const r = await t.api.patch("/api/v1/settings", {
      moderation: "pre",
      editWindowSeconds: 600,
      allowedOrigins: ["https://news.example"],
      safety: { bannedWords: ["scam"] },
      privacy: { erasure: "delete" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" }, operators: { [MODERATOR]: "moderator" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await idp?.close();
  });

  it("adds a provider: only identity.providers is sent, every other setting stays as it was", async () => {
    const before = await settings();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Identity providers" }).click();
    await page.getByRole("heading", { level: 1, name: "Identity providers" }).waitFor();
    await settled(page);
    await page.getByText("No identity provider").waitFor();
    expect(await page.getByLabel("Secret overlap (hours)").inputValue()).toBe("24");

    await page.getByRole("button", { name: "Add a provider" }).click();
    const p1 = provider(1);
    await p1.getByLabel("Issuer").fill(idp.issuer);
    await p1.getByLabel("Audience (one per line)").fill("engagement-test\nnews-site\n");
    await p1.getByRole("checkbox", { name: "EdDSA" }).uncheck();
    await p1.getByLabel("Picture claim").fill("avatar");
    expect(await p1.getByLabel("Name claim").inputValue()).toBe("name");
    const sent = nextPatch();
    await save();
    expect(await sent).toEqual({
      identity: {
        providers: [
          {
            issuer: idp.issuer,
            audience: ["engagement-test", "news-site"],
            algorithms: ["RS256", "PS256", "ES256"],
            claims: { name: "name", picture: "avatar", email: "email" },
          },
        ],
      },
    });
    await status("Identity settings saved: providers.");
    const after = await settings();
    expect(after.identity).toEqual({
      providers: [
        {
          issuer: idp.issuer,
          audience: ["engagement-test", "news-site"],
          algorithms: ["RS256", "PS256", "ES256"],
          claims: { name: "name", picture: "avatar", email: "email" },
        },
      ],
      secretOverlapHours: 24,
    });
    expect({ ...after, identity: before.identity }).toEqual(before);
    const entry = (await t.admin.get("/api/v1/audit?action=settings.update")).body.items[0];
    expect(entry.details.changes.map((c: { field: string }) => c.field)).toEqual(["identity.providers"]);

    // the form shows what is stored; saving it untouched sends nothing
    await page.reload();
    await settled(page);
    expect(await provider(1).getByLabel("Issuer").inputValue()).toBe(idp.issuer);
    expect(await provider(1).getByRole("checkbox", { name: "EdDSA" }).isChecked()).toBe(false);
    await save();
    await status("Nothing changed");
    await expectAccessible(page, "the identity providers screen");
    await shoot(page, "identity-providers");
  });

  it("shows the answer's problems beside their fields; the overlap is saved on its own; a provider is removed", async () => {
    await page.getByRole("button", { name: "Add a provider" }).click();
    const p2 = provider(2);
    await p2.getByLabel("Key set URL (jwksUri)").fill("ftp://keys.example/jwks.json");
    await p2.getByLabel("Audience (one per line)").fill("news-site");
    await page.getByLabel("Secret overlap (hours)").fill("1000");
    await save();
    await page.getByRole("alert").filter({ hasText: "see the messages beside them" }).waitFor();
    const jwks = p2.getByLabel("Key set URL (jwksUri)");
    expect(await jwks.getAttribute("aria-invalid")).toBe("true");
    const jwksError = page.locator(`#${(await jwks.getAttribute("aria-describedby"))!.replace(/\./g, "\\.")}`);
    expect(await jwksError.textContent()).toMatch(/http/);
    const overlap = page.getByLabel("Secret overlap (hours)");
    expect(await overlap.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#err-secretOverlapHours").textContent()).toMatch(/720/);
    expect(await provider(1).getByLabel("Issuer").getAttribute("aria-invalid")).toBeNull();
    expect((await settings()).identity.providers).toHaveLength(1);
    await expectAccessible(page, "the identity providers screen with problems");
    await shoot(page, "identity-providers-errors");

    // the provider left out, the overlap alone is sent
    await p2.getByRole("button", { name: "Remove provider 2" }).click();
    await overlap.fill("48");
    const sent = nextPatch();
    await save();
    expect(await sent).toEqual({ identity: { secretOverlapHours: 48 } });
    await status("Identity settings saved: secretOverlapHours.");
    expect((await settings()).identity).toMatchObject({ secretOverlapHours: 48, providers: [{ issuer: idp.issuer }] });

    // five at most: the button says so
    for (let i = 0; i < 4; i++) await page.getByRole("button", { name: "Add a provider" }).click();
    expect(await page.getByRole("button", { name: "Add a provider" }).isDisabled()).toBe(true);
    await page.getByText("5 of 5 providers").waitFor();
    for (let n = 5; n > 1; n--)
      await provider(n)
        .getByRole("button", { name: `Remove provider ${n}` })
        .click();
    await save();
    await status("Nothing changed");
  });

  it("Test token: a valid ID token shows its reader, header and claims; an expired one why it is refused", async () => {
    const token = await idp.token(
      {
        sub: "248289761001",
        name: "Grace Hopper",
        avatar: "https://images.example/grace.png",
        email: "grace@news.example",
        email_verified: true,
      },
      { audience: "news-site" },
    );
    const field = page.getByLabel("Test token");
    await field.fill(token);
    await page.getByRole("button", { name: "Verify token" }).click();
    const answer = page.locator(".token-answer");
    await answer.getByText("Accepted.").waitFor();
    const reader = answer.locator("dl");
    expect(await reader.textContent()).toContain(`${idp.issuer}#248289761001`);
    expect(await reader.textContent()).toContain("Grace Hopper");
    expect(await reader.textContent()).toContain("https://images.example/grace.png"); // the mapped claim (avatar)
    expect(await reader.textContent()).toContain("grace@news.example");
    expect(await reader.textContent()).toMatch(/Email verified\s*yes/);
    const [header, claims] = await answer.locator("pre").allTextContents();
    expect(JSON.parse(header!)).toEqual({ alg: "RS256", kid: expect.any(String) });
    expect(JSON.parse(claims!)).toMatchObject({ iss: idp.issuer, sub: "248289761001", aud: "news-site", name: "Grace Hopper" });
    await expectAccessible(page, "Test token's answer");
    await shoot(page, "identity-test-token");

    const expired = await idp.token({ sub: "248289761001", name: "Grace Hopper" }, { audience: "news-site", expiresIn: "-5m" });
    await field.fill(expired);
    await page.getByRole("button", { name: "Verify token" }).click();
    await answer.getByText("Refused.").waitFor();
    expect(await answer.textContent()).toContain("The identity token is not accepted: it has expired.");
    expect(await answer.locator("dl").count()).toBe(0);
    expect(JSON.parse((await answer.locator("pre").allTextContents())[1]!)).toMatchObject({ sub: "248289761001" });

    await field.fill("not a token");
    await page.getByRole("button", { name: "Verify token" }).click();
    await answer.getByText("None: it is not a JWT.").first().waitFor();

    // the narrow screen: nothing sticks out, still accessible
    await page.setViewportSize({ width: 390, height: 844 });
    await field.fill(token);
    await page.getByRole("button", { name: "Verify token" }).click();
    await answer.getByText("Accepted.").waitFor();
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "the identity providers screen at 390 px");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("a reader's page: Export downloads their data as JSON; Erase asks in a dialog saying what privacy.erasure does, then erases", async () => {
    const ada = await t.reader("ada", { name: "Ada Lovelace" });
    const first = await ada.post("/api/v1/discussions/privacy-d/comments", { body: "Notes on the engine" });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect((await t.api.post(`/api/v1/comments/${first.body.id}/approve`)).status).toBe(200); // the tenant is on pre-moderation
    expect(
      (await ada.post("/api/v1/discussions/privacy-d/comments", { body: "And a second thought", parentId: first.body.id })).status,
    ).toBe(201);
    const bo = await t.reader("bo", { name: "Bo" });
    const reply = await bo.post("/api/v1/discussions/privacy-d/comments", { body: "Bo replies", parentId: first.body.id });
    expect(reply.status).toBe(201);

    await page.goto(`${server.url}/console/#/readers/ada`);
    await page.getByRole("heading", { level: 1, name: "Ada Lovelace" }).waitFor();
    await settled(page);
    const downloaded = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export", exact: true }).click();
    const file = await downloaded;
    expect(file.suggestedFilename()).toBe("reader-ada.json");
    const data = JSON.parse(readFileSync((await file.path())!, "utf8"));
    expect(data).toMatchObject({ format: "engagement.reader-export.v1", readerId: "ada", profile: { id: "ada", name: "Ada Lovelace" } });
    expect(data.comments.map((c: { body: string }) => c.body).sort()).toEqual(["And a second thought", "Notes on the engine"]);

    // the dialog names the reader and says what this tenant's erasure (delete) does; Cancel leaves them be
    await page.getByRole("button", { name: "Erase", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Erase Ada Lovelace?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Their 2 comments are removed; one with replies under it stays as an empty");
    expect(await dialog.textContent()).toContain("privacy.erasure: delete");
    await expectAccessible(page, "the erase dialog");
    await shoot(page, "reader-erase");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Erase");
    expect((await t.api.get("/api/v1/readers/ada")).status).toBe(200);

    await page.getByRole("button", { name: "Erase", exact: true }).click();
    await dialog.getByRole("button", { name: "Erase Ada Lovelace" }).click();
    await status("Erased Ada Lovelace (ada): 1 comment deleted, 1 tombstone kept for the replies under them");
    expect((await t.api.get("/api/v1/readers/ada")).status).toBe(404);
    const left = (await t.api.get(`/api/v1/comments/${first.body.id}`)).body;
    expect(left).toMatchObject({ status: "deleted", body: "", author: { id: "" } });
    expect((await t.api.get(`/api/v1/comments/${reply.body.id}`)).body.body).toBe("Bo replies");
    const audit = (await t.admin.get("/api/v1/audit?action=reader.erase")).body.items[0];
    expect(audit.actor).toMatchObject({ type: "operator" });

    // a moderator sees the reader's page without either
    const context = await browser!.newContext({ viewport: { width: 390, height: 844 } });
    const mod = await context.newPage();
    await mod.goto(link(MODERATOR));
    await mod.getByRole("button", { name: "Sign out" }).waitFor();
    await mod.goto(`${server.url}/console/#/readers/bo`);
    await mod.getByRole("heading", { level: 1, name: "Bo" }).waitFor();
    await settled(mod);
    expect(await mod.getByRole("button", { name: "Export", exact: true }).count()).toBe(0);
    expect(await mod.getByRole("button", { name: "Erase", exact: true }).count()).toBe(0);
    await context.close();
  });
});
