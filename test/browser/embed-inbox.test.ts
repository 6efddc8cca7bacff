// The signed-in reader's bell and Follow in <engagement-thread> (contract section 19), in headless
// Chromium on a host page of another origin with a strict CSP: no bell nor Follow while signed out;
// the bell names the unread count, a reply written elsewhere raises it live (the reader's own
// stream), opening the list shows the reply and marks it read (the service's count goes to 0), and a
// read in a second tab is reflected in the first; Follow is a pressed toggle that sets the
// discussion's subscription (`all`, back to `replies`); axe-core finds nothing serious. Screenshot:
// docs/embed/inbox.png with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, servePage, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("the bell and Follow in <engagement-thread>", () => {
  let browser: Browser | undefined;
  let key: string;
  const pages: { close(): Promise<void> }[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all(pages.map((p) => p.close()));
    expect(violations).toEqual([]);
  });

  /** The host page of a discussion (scripts and connections to the service only, no inline styles): its origin allowed. */
  async function hostPage(d: string): Promise<string> {
    const page = await servePage(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${server.url}; connect-src ${server.url}; style-src 'self'; img-src data:">
<title>An article</title></head><body><main><h1>An article</h1>
<engagement-thread discussion-id="${d}" publishable-key="${key}"></engagement-thread></main>
<script src="${server.url}/embed/v1/thread.js"></script></body></html>`);
    pages.push(page);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [page.origin] })).status).toBe(200);
    return page.url;
  }

  /** A tab of the host page, as `identity` (none: signed out); `prepare` runs before it loads. */
  async function open(url: string, identity: string | null, prepare?: (p: Page) => Promise<unknown>): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 800 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await prepare?.(p);
    await p.goto(url);
    if (identity)
      await p.evaluate((tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      }, identity);
    await p.locator("engagement-thread ol[part=comments] article").first().waitFor();
    return p;
  }

  const thread = (p: Page) => p.locator("engagement-thread");
  const bell = (p: Page) => thread(p).getByRole("button", { name: /^Notifications/ });

  it("shows the unread count live, lists and marks read, reflects a read in another tab, and follows", async () => {
    const d = "inbox-embed-1";
    const mia = await t.reader("mia", { name: "Mia" });
    const zed = await t.reader("zed", { name: "Zed" });
    const mine = (await mia.post(`/api/v1/discussions/${d}/comments`, { body: "My first thought" })).body.id as string;

    const url = await hostPage(d);
    // signed out: neither
    const anon = await open(url, null);
    expect(await thread(anon).getByRole("button", { name: "Follow" }).count()).toBe(0);
    expect(await bell(anon).count()).toBe(0);

    const token = await t.identity("mia", { name: "Mia" });
    const p = await open(url, token);
    await bell(p).waitFor();
    expect(await bell(p).getAttribute("aria-label")).toBe("Notifications");

    // a reply elsewhere reaches the bell through the reader's own stream
    await zed.post(`/api/v1/discussions/${d}/comments`, { body: "A reply to Mia", parentId: mine });
    await thread(p).getByRole("button", { name: "Notifications, 1 unread" }).waitFor();

    // a second tab of the same reader
    const p2 = await open(url, token);
    await thread(p2).getByRole("button", { name: "Notifications, 1 unread" }).waitFor();

    // opening the list shows the reply and marks it read, here and in the other tab
    await bell(p).click();
    const list = thread(p).getByRole("region", { name: "Notifications" });
    await list.getByRole("link", { name: "Zed replied to you" }).waitFor();
    await thread(p).getByRole("button", { name: "Notifications", exact: true }).waitFor();
    expect((await mia.get("/api/v1/me/inbox")).body.unreadCount).toBe(0);
    await thread(p2).getByRole("button", { name: "Notifications", exact: true }).waitFor();
    await expectAccessible(p, "embed-inbox");
    await screenshot(p, { path: join(SHOTS, "inbox.png") });

    // the item links to the comment in this thread; one of another discussion, to that discussion's address
    expect(await list.getByRole("link", { name: "Zed replied to you" }).getAttribute("href")).toMatch(/^#comment-/);
    expect((await t.api.put("/api/v1/discussions/inbox-embed-2", { title: "Lakes", url: "https://news.example/lakes" })).status).toBe(201);
    const there = (await mia.post("/api/v1/discussions/inbox-embed-2/comments", { body: "On lakes" })).body.id as string;
    const answer = (await zed.post("/api/v1/discussions/inbox-embed-2/comments", { body: "Lakes too", parentId: there })).body.id as string;
    await thread(p).getByRole("button", { name: "Notifications, 1 unread" }).waitFor();
    await bell(p).click(); // closes
    await bell(p).click(); // opens afresh
    // the list is fetched afresh on opening: wait for it rather than read the previous one's link
    await expect
      .poll(() => list.getByRole("link", { name: "Zed replied to you" }).first().getAttribute("href"))
      .toBe(`https://news.example/lakes#comment-${encodeURIComponent(answer)}`);

    // Follow: a pressed toggle that sets the subscription
    const follow = thread(p).getByRole("button", { name: "Follow" });
    expect(await follow.getAttribute("aria-pressed")).toBe("false");
    await follow.click();
    await expect.poll(() => follow.getAttribute("aria-pressed")).toBe("true");
    expect((await mia.get(`/api/v1/discussions/${d}/subscription`)).body).toEqual({ mode: "all" });
    await follow.click();
    await expect.poll(() => follow.getAttribute("aria-pressed")).toBe("false");
    expect((await mia.get(`/api/v1/discussions/${d}/subscription`)).body).toEqual({ mode: "replies" });
    await p.close();
    await p2.close();
    await anon.close();
  });

  it("counts a reply written after the list was read and before the reader's stream began", async () => {
    const d = "inbox-embed-gap";
    const ivy = await t.reader("ivy", { name: "Ivy" });
    const kai = await t.reader("kai", { name: "Kai" });
    const mine = (await ivy.post(`/api/v1/discussions/${d}/comments`, { body: "Ivy's thought" })).body.id as string;
    const url = await hostPage(d);
    // the reader's list has been read (it comes first); their stream's ticket is held while Kai replies
    let held = false;
    const p = await open(url, await t.identity("ivy", { name: "Ivy" }), (tab) =>
      tab.route("**/api/v1/stream/ticket", async (route) => {
        if (!held && /"scope"\s*:\s*"me"/.test(route.request().postData() ?? "")) {
          held = true;
          await kai.post(`/api/v1/discussions/${d}/comments`, { body: "Kai answers", parentId: mine });
        }
        await route.continue();
      }),
    );
    await thread(p).getByRole("button", { name: "Notifications, 1 unread" }).waitFor();
    expect(held).toBe(true);
    // a later reply counts once more, live
    await kai.post(`/api/v1/discussions/${d}/comments`, { body: "Kai again", parentId: mine });
    await thread(p).getByRole("button", { name: "Notifications, 2 unread" }).waitFor();
    await p.close();
  });
});
