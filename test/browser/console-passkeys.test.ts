// Console operators' passkeys (contract section 29) in headless Chromium, with a virtual authenticator
// (the DevTools protocol's WebAuthn domain through playwright-core): the service runs without
// PUBLIC_URL, so its relying party is localhost and its port, and the console is opened there.
//  (a) an operator signs in with their console link, opens "Your account" and adds a passkey (a
//      discoverable credential for localhost, its user handle 32 random bytes that are not the
//      operator's id or email);
//  (b) signed out, they sign in with it ("Sign in with a passkey"), as the same operator, and the
//      session works (GraphQL, their account's list showing its last use); the assertion sent again
//      is refused: its challenge was spent;
//  (c) they sign in through the Email field's autofill (a conditional request);
//  (d) a cloned authenticator (the credential with its counter rolled back) is refused, and says so;
//  (e) "Remove" removes it, and it signs in no more, by the button or the autofill;
//  (f) a moderator reaches "Your account" too (the header's tenant and operator are its link).
// axe-core on the sign-in page and the account screen (1280 px and 390 px). Screenshots: docs/console/
// with UPDATE_SCREENSHOTS=1, else a scratch folder.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, chromiumRequired, launchChromium } from "../support/chromium.js";
import { expectAccessible, overflow, prepareShots, settled, shoot } from "../support/console-page.js";
import { createOperator, signConsoleLink } from "../../src/modules/console/engine/operators.js";

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  privateKey: string;
  userHandle: string;
  signCount: number;
}

interface Answer {
  status: number;
  body: { code?: string; detail?: string; operator?: { id: string; email: string } };
}

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
/** the console's address: localhost, the relying party when PUBLIC_URL is unset */
let base: string;
const OWNER = "pat.owner@example.com";
let ownerId: string;
const cspViolations: string[] = [];

describe.skipIf(chromiumMissing && !chromiumRequired)("console operators' passkeys, in headless Chromium", { timeout: 90_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    base = `http://localhost:${new URL(server.url).port}`;
    t = await createTestTenant(server, "The Gazette");
    ownerId = (await createOperator(server.app.runtime.services, { tenantId: t.tenantId, email: OWNER, role: "owner" })).operator.id;
    browser = await launchChromium();
    await prepareShots();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    expect(cspViolations).toEqual([]);
  });

  const link = (email: string) =>
    signConsoleLink({ secret: server.app.runtime.services.adminJwtSecret, tenantId: t.tenantId, email, now: new Date(), baseUrl: base })
      .url;

  /**
   * A page of its own (its own browser context) with a virtual platform authenticator holding
   * `credentials`, its passkey sign-ins' answers and request bodies kept (a route passes each on).
   * The virtual authenticator answers the autofill's conditional request at once, as a person picking
   * the passkey in the Email field's suggestions would; `autofill: false` makes the page a browser
   * that offers no passkeys in autofill, so that only "Sign in with a passkey" asks.
   */
  async function consolePage(credentials: VirtualCredential[] = [], opts: { autofill: boolean } = { autofill: true }) {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    if (!opts.autofill)
      await page.addInitScript(() => Object.defineProperty(PublicKeyCredential, "isConditionalMediationAvailable", { value: undefined }));
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    const answers: Answer[] = [];
    const sent: string[] = [];
    await page.route("**/console/auth/passkeys/authenticate", async (route) => {
      sent.push(route.request().postData() ?? "");
      const res = await route.fetch();
      const body = await res.text();
      answers.push({ status: res.status(), body: JSON.parse(body) });
      await route.fulfill({ response: res, body });
    });
    const cdp = await context.newCDPSession(page);
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
    const held = async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials as VirtualCredential[];
    for (const credential of credentials) await cdp.send("WebAuthn.addCredential", { authenticatorId, credential });
    return { page, answers, sent, held, close: () => context.close() };
  }

  /** The console's sign-in page, settled. */
  async function signInPage(page: Page) {
    await page.goto(`${base}/console/`);
    await page.getByRole("heading", { name: "Or sign in with a passkey" }).waitFor();
  }

  let credential: VirtualCredential;
  let signedInPage: Awaited<ReturnType<typeof consolePage>>;

  it("(a) adds a passkey from Your account, after signing in with a console link", async () => {
    const p = await consolePage();
    await p.page.goto(link(OWNER));
    await p.page.getByRole("button", { name: "Sign out" }).waitFor();
    await p.page.getByRole("link", { name: "Your account" }).click();
    await p.page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    await settled(p.page);
    await p.page.getByText("You have no passkey yet.").waitFor();
    await expectAccessible(p.page, "Your account, no passkey");

    await p.page.getByLabel("Name (optional)").fill("Work laptop");
    await p.page.getByRole("button", { name: "Add a passkey" }).click();
    await p.page.getByRole("status").filter({ hasText: "Passkey added: Work laptop." }).waitFor({ timeout: 15_000 });
    await settled(p.page);
    const row = p.page.getByRole("row").filter({ hasText: "Work laptop" });
    await row.getByRole("cell", { name: "Never" }).waitFor();
    await row.getByRole("button", { name: "Remove Work laptop" }).waitFor();
    expect(await p.page.getByLabel("Name (optional)").inputValue()).toBe("");
    await expectAccessible(p.page, "Your account, a passkey added");
    await shoot(p.page, "account-passkeys");

    const held = await p.held();
    expect(held).toHaveLength(1);
    credential = held[0]!;
    expect(credential.isResidentCredential).toBe(true);
    expect(credential.rpId).toBe("localhost");
    const handle = Buffer.from(credential.userHandle, "base64");
    expect(handle).toHaveLength(32);
    for (const secret of [ownerId, OWNER, "pat.owner"]) expect(handle.toString("latin1")).not.toContain(secret);

    // a second one on the same device is refused by the device (the options exclude the first)
    await p.page.getByRole("button", { name: "Add a passkey" }).click();
    await p.page.getByRole("alert").filter({ hasText: "already holds one of your passkeys" }).waitFor({ timeout: 15_000 });
    expect(await p.held()).toHaveLength(1);

    // the narrow screen: nothing sticks out
    await p.page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(p.page)).toEqual([0]);
    await expectAccessible(p.page, "Your account at 390 px");
    await p.close();
  });

  it("(b) signs the same operator in with it, and its assertion sent again is refused", async () => {
    const p = (signedInPage = await consolePage([credential], { autofill: false }));
    await signInPage(p.page);
    await expectAccessible(p.page, "the sign-in page with passkeys");
    await shoot(p.page, "sign-in-passkey");
    await p.page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.page.getByRole("button", { name: "Sign out" }).waitFor({ timeout: 15_000 });
    await settled(p.page);
    expect(p.answers.map((a) => a.status)).toEqual([200]);
    expect(p.answers[0]!.body.operator).toEqual({ id: ownerId, email: OWNER, role: "owner" });
    // the session works: a GraphQL read, the account's list with the passkey's last use
    const session = await p.page.evaluate(() => fetch("/console/auth/session").then((r) => r.json()));
    expect(session).toMatchObject({ tenantId: t.tenantId, tenantName: "The Gazette", operator: { id: ownerId, email: OWNER } });
    const read = await p.page.evaluate(
      (csrf) =>
        fetch("/graphql", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": csrf },
          body: JSON.stringify({ query: "{ pendingCommentCount }" }),
        }).then((r) => r.json()),
      session.csrfToken as string,
    );
    expect(read).toEqual({ data: { pendingCommentCount: 0 } });
    await p.page.getByRole("link", { name: "Your account" }).click();
    await settled(p.page);
    const row = p.page.getByRole("row").filter({ hasText: "Work laptop" });
    await row.waitFor();
    expect(await row.getByRole("cell", { name: "Never" }).count()).toBe(0);
    // the credential as it is now (its counter moved)
    credential = (await p.held())[0]!;

    // the same assertion once more, as an eavesdropper would send it: its challenge is spent
    const replay = await fetch(`${base}/console/auth/passkeys/authenticate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: p.sent[0]!,
    });
    expect(replay.status).toBe(401);
    const refusal = (await replay.json()) as { code: string; detail: string };
    expect(refusal.code).toBe("passkey_refused");
    expect(refusal.detail).toContain("challenge is unknown, used or expired");
    expect(replay.headers.get("set-cookie")).toBeNull();
  });

  it("(c) signs in through the Email field's autofill", async () => {
    const p = await consolePage([credential]);
    await p.page.goto(`${base}/console/`);
    await p.page.getByRole("button", { name: "Sign out" }).waitFor({ timeout: 15_000 });
    expect(p.answers.map((a) => a.status)).toEqual([200]);
    expect(p.answers[0]!.body.operator?.id).toBe(ownerId);
    credential = (await p.held())[0]!;
    await p.close();
  });

  it("(d) refuses a cloned authenticator whose counter went backwards", async () => {
    const p = await consolePage([{ ...credential, signCount: 0 }], { autofill: false });
    await signInPage(p.page);
    await p.page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.page.getByRole("alert").filter({ hasText: "counter went backwards" }).waitFor({ timeout: 15_000 });
    expect(p.answers).toEqual([{ status: 401, body: expect.objectContaining({ code: "passkey_refused" }) }]);
    expect(await p.page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    await expectAccessible(p.page, "the sign-in page with a passkey refused");
    await shoot(p.page, "sign-in-passkey-refused");
    await p.close();
  });

  it("(e) removes the passkey: it signs in no more, by the button or the autofill", async () => {
    const p = signedInPage;
    await p.page.getByRole("button", { name: "Remove Work laptop" }).click();
    await p.page.getByRole("status").filter({ hasText: "Passkey removed: Work laptop." }).waitFor();
    await settled(p.page);
    await p.page.getByText("You have no passkey yet.").waitFor();
    await p.close();

    const button = await consolePage([{ ...credential, signCount: 1000 }], { autofill: false });
    await signInPage(button.page);
    await button.page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await button.page.getByRole("alert").filter({ hasText: "no operator's passkey has this credential" }).waitFor({ timeout: 15_000 });
    expect(button.answers.map((a) => a.status)).toEqual([401]);
    await button.close();

    // the autofill's refusal is said too
    const autofill = await consolePage([{ ...credential, signCount: 1000 }]);
    await autofill.page.goto(`${base}/console/`);
    await autofill.page.getByRole("alert").filter({ hasText: "no operator's passkey has this credential" }).waitFor({ timeout: 15_000 });
    expect(autofill.answers.map((a) => a.status)).toEqual([401]);
    expect(await autofill.page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    await autofill.close();
  });

  it("(f) a moderator reaches Your account too", async () => {
    await createOperator(server.app.runtime.services, { tenantId: t.tenantId, email: "mo@example.com", role: "moderator" });
    const p = await consolePage();
    await p.page.goto(link("mo@example.com"));
    await p.page.getByRole("link", { name: "Your account" }).click();
    await p.page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    await settled(p.page);
    await p.page.getByRole("button", { name: "Add a passkey" }).waitFor();
    expect(await p.page.getByRole("definition").allTextContents()).toContain("moderator");
    await p.close();
  });
});
