// /embed/demo (contract section 14): the page a newcomer opens after `npm start`. Its server includes
// the thread's indexable fragment (contract section 23): with JavaScript off the welcome comment is
// in the page; in headless Chromium thread.js takes it over without asking for the page, the sign-in
// stub hands the element an identity, a comment posts and the count follows; the page runs under
// its own strict CSP. The element's light DOM keeps the server's HTML (not shown once upgraded), so
// the thread's locators are scoped to what it shows: its shadow root's section[part=thread]. The
// demo tenant is made once and found again; the page is off in production unless EMBED_DEMO=1; the
// stub refuses an empty name with a problem document.
// Screenshots: docs/embed/demo.png and demo-no-javascript.png with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdtemp, mkdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");

let dataDir: string;
let server: TestServer;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "embed-demo-"));
  server = await startServer({ DATA_DIR: dataDir });
});
afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("/embed/demo", () => {
  it("makes its tenant once, remembers it, and signs readers in through a stub that checks the name", async () => {
    const page = await fetch(`${server.url}/embed/demo`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    const key = /publishable-key="(pk_[0-9a-f]{64})"/.exec(html)?.[1];
    expect(key).toBeDefined();
    // the thread is the fragment, as the service answers it for the demo's discussion (its JSON-LD too)
    const fragment = await (await fetch(`${server.url}/embed/v1/discussions/demo-article.html?key=${key}`)).text();
    expect(html).toContain(fragment);
    expect(fragment).toContain('class="h-entry"');
    expect(fragment).toContain("Welcome! Sign in with any name above");
    const remembered = JSON.parse(await readFile(join(dataDir, "embed-demo.json"), "utf8")) as { publishableKey: string; tenantId: string };
    expect(remembered.publishableKey).toBe(key);
    // a second visit, and a restarted server, use the same tenant
    expect(await (await fetch(`${server.url}/embed/demo`)).text()).toContain(key!);
    const again = await startServer({ DATA_DIR: dataDir });
    try {
      expect(await (await fetch(`${again.url}/embed/demo`)).text()).toContain(key!);
    } finally {
      await again.stop();
    }
    const signIn = await fetch(`${server.url}/embed/demo/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Grace Hopper" }),
    });
    expect(signIn.status).toBe(200);
    expect(await signIn.json()).toMatchObject({ readerId: "demo:grace-hopper", name: "Grace Hopper", token: expect.any(String) });
    const empty = await fetch(`${server.url}/embed/demo/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: " " }),
    });
    expect(empty.status).toBe(422);
    expect(empty.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await empty.json()).code).toBe("validation_failed");
  });

  it("is off in production unless EMBED_DEMO=1", async () => {
    const off = await startServer({ NODE_ENV: "production", DATA_DIR: dataDir });
    try {
      expect((await fetch(`${off.url}/embed/demo`)).status).toBe(404);
    } finally {
      await off.stop();
    }
    const on = await startServer({ NODE_ENV: "production", EMBED_DEMO: "1", DATA_DIR: dataDir });
    try {
      expect((await fetch(`${on.url}/embed/demo`)).status).toBe(200);
    } finally {
      await on.stop();
    }
  });
});

describe.skipIf(chromiumMissing)("/embed/demo in headless Chromium", () => {
  it("shows the thread, signs in through the stub, posts, and the count follows", async () => {
    const browser = await launchChromium();
    const violations: string[] = [];
    try {
      await mkdir(SHOTS, { recursive: true });
      // with JavaScript off: the server's HTML, the welcome comment with its author and date
      const off = await browser.newPage({ viewport: { width: 900, height: 1100 }, javaScriptEnabled: false });
      await off.goto(`${server.url}/embed/demo`);
      const light = off.locator("engagement-thread > ol.comments article.h-entry").first();
      expect(await light.locator(".e-content").innerText()).toContain("Welcome! Sign in with any name above");
      expect(await light.locator(".p-author").innerText()).toBe("Ada");
      expect(await light.locator("time.dt-published").isVisible()).toBe(true);
      await screenshot(off, { path: join(SHOTS, "demo-no-javascript.png"), fullPage: true });
      await off.close();

      const p = await browser.newPage({ viewport: { width: 900, height: 1100 } });
      p.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const firstPage: string[] = [];
      p.on("request", (r) => {
        if (/EmbedThread/.test(r.postData() ?? "")) firstPage.push(r.url());
      });
      await p.goto(`${server.url}/embed/demo`);
      // what the element shows once thread.js has taken the server's HTML over (its shadow root)
      const thread = p.locator("engagement-thread section[part=thread]");
      await thread.getByText("Welcome! Sign in with any name above").waitFor();
      // the element took the fragment's page: no request for it
      expect(firstPage).toEqual([]);
      await p
        .locator("engagement-count")
        .getByText(/^\d+ comments?$/)
        .waitFor();
      const before = Number((await p.locator("engagement-count").getAttribute("count")) ?? "0");
      // signed out, trying to write points at the sign-in form
      await thread.getByRole("textbox", { name: "Write a comment" }).fill("Hello from the demo");
      await thread.getByRole("button", { name: "Post comment" }).click();
      await expect.poll(() => p.evaluate(() => document.activeElement?.id)).toBe("name");
      await p.getByLabel("Your name").fill("Grace");
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByText("Signed in as").waitFor();
      await thread.getByRole("button", { name: "Post comment" }).click();
      await thread.locator("article", { hasText: "Hello from the demo" }).getByText("(you)").waitFor();
      // the count on the same page follows the thread
      await expect.poll(() => p.locator("engagement-count").getAttribute("count")).toBe(String(before + 1));
      // the count on a fresh visit (counts are cached by the browser for a while) includes it
      const fresh = await browser.newPage({ viewport: { width: 900, height: 1100 } });
      await fresh.goto(`${server.url}/embed/demo`);
      await expect.poll(async () => Number((await fresh.locator("engagement-count").getAttribute("count")) ?? "-1")).toBe(before + 1);
      await fresh.locator("engagement-thread section[part=thread]").getByText("Hello from the demo").waitFor();
      await screenshot(fresh, { path: join(SHOTS, "demo.png"), fullPage: true });
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
