// A real browser: headless Chromium (Debian's `chromium`, driven by playwright-core) loads a small
// page served by the test on loopback. The page mints nothing: the test mints a stream ticket (with
// the reader's identity) and hands it to the page, whose EventSource opens the stream cross-origin;
// a comment posted through the API, and a reply notification to that reader, appear in the page.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { createKey } from "../support/sse.js";
import { client } from "../support/client.js";
import { CHROMIUM, chromiumMissing, chromiumRequired, launchChromium, servePage } from "../support/chromium.js";

const missing = chromiumMissing;
const required = chromiumRequired;

describe.runIf(missing && required)("headless Chromium under CI", () => {
  it(`is installed at ${CHROMIUM} (apt-get install -y chromium)`, () => {
    expect(missing, `${CHROMIUM} is missing: CI must run the browser tests`).toBe(false);
  });
});

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>stream</title></head>
<body>
<p id="state">idle</p>
<ul id="events"></ul>
<script>
  // the page is handed a ready stream URL (with its ticket); it never sees an API key
  window.openStream = (url) => {
    const es = new EventSource(url);
    const state = document.getElementById("state");
    window.connects = 0;
    window.timeouts = 0;
    es.addEventListener("connected", () => ((state.textContent = "connected"), window.connects++));
    es.addEventListener("connection-timeout", () => window.timeouts++);
    es.onerror = () => (state.textContent = "error");
    for (const name of ["comment_created", "notification_reply"]) {
      es.addEventListener(name, (e) => {
        const env = JSON.parse(e.data);
        const li = document.createElement("li");
        li.dataset.seq = e.lastEventId;
        li.textContent = name + ": " + (env.data.comment ? env.data.comment.body : env.data.notification.commentId);
        document.getElementById("events").append(li);
      });
    }
  };
</script>
</body></html>`;

let server: TestServer;
let serverEnv: Record<string, string>;
let t: TestTenant;
let pages: Awaited<ReturnType<typeof servePage>>;
let pageUrl: string;
let browser: Browser | undefined;

describe.skipIf(missing)(`in headless Chromium (${CHROMIUM})`, () => {
  beforeAll(async () => {
    pages = await servePage(PAGE);
    pageUrl = pages.url;
    // the page's origin is an allowed browser origin (CORS_ORIGINS)
    serverEnv = { CORS_ORIGINS: new URL(pageUrl).origin };
    server = await startServer(serverEnv);
    t = await createTestTenant(server);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await server?.stop();
  });

  it("an EventSource with a ticket shows a comment posted through the API, and the reader's reply notification", async () => {
    const publisherKey = await createKey(server, t.tenantId, []);
    const alice = t.as({ key: publisherKey, identity: await t.identity("alice", { name: "Alice" }) });
    const bob = t.as({ key: publisherKey, identity: await t.identity("bob", { name: "Bob" }) });
    const id = "browser-article";
    await t.api.put(`/api/v1/discussions/${id}`, { title: "Browser" });

    // the tenant's backend mints the ticket for Alice and renders it into her page
    const minted = await alice.post("/api/v1/stream/ticket", { discussionId: id });
    expect(minted.status).toBe(201);
    const page = await browser!.newPage();
    await page.goto(pageUrl);
    await page.evaluate((u) => (window as any).openStream(u), `${server.url}/api/v1/stream/${id}?ticket=${minted.body.ticket}`);
    await page.waitForFunction(() => document.getElementById("state")?.textContent === "connected", undefined, { timeout: 10_000 });

    const posted = await alice.post(`/api/v1/discussions/${id}/comments`, { body: "Hello from the API" });
    expect(posted.status).toBe(201);
    await page.waitForSelector("li >> text=comment_created: Hello from the API", { timeout: 10_000 });
    const reply = await bob.post(`/api/v1/discussions/${id}/comments`, { body: "Hi Alice", parentId: posted.body.id });
    expect(reply.status).toBe(201);
    await page.waitForSelector(`li >> text=notification_reply: ${reply.body.id}`, { timeout: 10_000 });
    const items = await page.locator("#events li").allTextContents();
    expect(items).toEqual(["comment_created: Hello from the API", "comment_created: Hi Alice", `notification_reply: ${reply.body.id}`]);
    await page.close();
  }, 60_000);

  it("a ticket stream resumes by itself (Last-Event-ID) after connection-timeout and a server restart: what was posted meanwhile arrives once, in order", async () => {
    const key = await createKey(server, t.tenantId, []);
    const identity = await t.identity("carol", { name: "Carol" });
    const id = "browser-resume";
    await t.api.put(`/api/v1/discussions/${id}`, { title: "Resume" });
    await t.api.patch("/api/v1/settings", { stream: { maxConnectionSeconds: 2 } });
    const minted = await t.as({ key, identity }).post("/api/v1/stream/ticket", { discussionId: id });
    const port = new URL(server.url).port;
    const page = await browser!.newPage();
    await page.goto(pageUrl);
    await page.evaluate((u) => (window as any).openStream(u), `${server.url}/api/v1/stream/${id}?ticket=${minted.body.ticket}`);
    await page.waitForFunction(() => (window as any).connects === 1, undefined, { timeout: 10_000 });
    // another instance of the service, sharing the database and Redis, takes writes while this one restarts
    const writer = await startServer(serverEnv);
    const post = (body: string) => client(writer.url, { key, identity }).post(`/api/v1/discussions/${id}/comments`, { body });
    const shown = () => page.locator("#events li").allTextContents();
    try {
      expect((await post("one")).status).toBe(201);
      await page.waitForSelector("li >> text=comment_created: one", { timeout: 10_000 });

      // the server ends the connection; the browser waits its retry delay, then comes back with Last-Event-ID
      await page.waitForFunction(() => (window as any).timeouts >= 1, undefined, { timeout: 10_000 });
      expect((await post("two")).status).toBe(201);
      await page.waitForSelector("li >> text=comment_created: two", { timeout: 15_000 });
      expect(await page.evaluate(() => (window as any).connects)).toBeGreaterThanOrEqual(2);

      // a restart: the instance goes away, comments are written elsewhere, the instance comes back on its port
      await server.stop();
      expect((await post("three")).status).toBe(201);
      expect((await post("four")).status).toBe(201);
      server = await startServer({ ...serverEnv, PORT: port });
      await page.waitForSelector("li >> text=comment_created: four", { timeout: 20_000 });
      await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive right behind
      expect(await shown()).toEqual(["one", "two", "three", "four"].map((b) => `comment_created: ${b}`));
      const seqs = await page.locator("#events li").evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.seq)));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    } finally {
      await page.close();
      await writer.stop();
      await t.api.patch("/api/v1/settings", { stream: { maxConnectionSeconds: 1800 } });
    }
  }, 90_000);
});
