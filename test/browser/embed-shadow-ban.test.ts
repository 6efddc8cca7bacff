// A shadow ban (contract section 21) in <engagement-thread> in headless Chromium on a host page of
// another origin with a strict CSP: the shadow-banned reader sees their own comments as published,
// in their place among the others (and one they post through the element stays shown after a
// reload); another reader, and a page with no reader, never see them.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium } from "../support/chromium.js";
import { hostPages, type HostPage } from "../support/embed.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("a shadow ban in <engagement-thread>", () => {
  let browser: Browser | undefined;
  let host: HostPage;
  const violations: string[] = [];

  beforeAll(async () => {
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    host = await hostPages(server.url, key);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    expect(violations).toEqual([]);
  });

  /** The host page with the thread, as `sub` (none: no reader). */
  async function open(discussionId: string, sub?: string): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 700, height: 700 } });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await p.goto(host.url(discussionId));
    await p
      .locator("engagement-thread")
      .getByRole("heading", { name: /Comments/ })
      .waitFor();
    if (sub) {
      const token = await t.identity(sub, { name: sub[0]!.toUpperCase() + sub.slice(1) });
      await p.evaluate((tok) => {
        (document.querySelector("engagement-thread") as HTMLElement & { identity: string | null }).identity = tok;
      }, token);
    }
    await p.locator("engagement-thread ol[part=comments]").waitFor({ state: "attached" });
    return p;
  }

  const bodies = (p: Page) => p.locator("engagement-thread article .body").allTextContents();

  it("shows the shadow-banned reader their own comments, in place; nobody else sees them", async () => {
    const d = "shadow-1";
    await t.api.put(`/api/v1/discussions/${d}`, { title: "Shadow" });
    const ann = await t.reader("ann", { name: "Ann" });
    const troll = await t.reader("troll", { name: "Troll" });
    await ann.post(`/api/v1/discussions/${d}/comments`, { body: "First, by Ann" });
    await troll.post(`/api/v1/discussions/${d}/comments`, { body: "Before the ban" });
    expect((await t.api.post("/api/v1/readers/troll/ban", { shadow: true })).status).toBe(200);
    await troll.post(`/api/v1/discussions/${d}/comments`, { body: "Only the troll sees this" });
    await ann.post(`/api/v1/discussions/${d}/comments`, { body: "Last, by Ann" });

    const asTroll = await open(d, "troll");
    await asTroll.locator("engagement-thread article .body", { hasText: "Only the troll sees this" }).waitFor();
    const trollSees = await bodies(asTroll);
    for (const b of ["First, by Ann", "Before the ban", "Only the troll sees this", "Last, by Ann"]) {
      expect(
        trollSees.some((x) => x.includes(b)),
        b,
      ).toBe(true);
    }
    // in its time's place, among the others (newest first by default)
    const order = ["Last, by Ann", "Only the troll sees this", "Before the ban", "First, by Ann"].map((b) =>
      trollSees.findIndex((x) => x.includes(b)),
    );
    expect(order.every((x, k) => x >= 0 && (k === 0 || x > order[k - 1]!))).toBe(true);
    // not marked as held: it reads as any published comment
    const text = await asTroll.locator("engagement-thread article", { hasText: "Only the troll sees this" }).textContent();
    expect(text).not.toMatch(/pending|awaiting|held|rejected/i);

    // posted through the element: shown at once, and still after a reload
    const form = asTroll.locator("engagement-thread form").first();
    await form.getByRole("textbox").first().fill("Typed in the thread");
    await form
      .getByRole("button", { name: /post|comment|send/i })
      .first()
      .click();
    await asTroll.locator("engagement-thread article .body", { hasText: "Typed in the thread" }).waitFor();
    await asTroll.close();
    const again = await open(d, "troll");
    await again.locator("engagement-thread article .body", { hasText: "Typed in the thread" }).waitFor();
    await again.close();

    for (const sub of ["ann", undefined]) {
      const p = await open(d, sub);
      await p.locator("engagement-thread article .body", { hasText: "Last, by Ann" }).waitFor();
      const seen = await bodies(p);
      expect(
        seen.some((x) => x.includes("Only the troll sees this") || x.includes("Typed in the thread")),
        String(sub),
      ).toBe(false);
      expect(seen.some((x) => x.includes("Before the ban"))).toBe(true);
      await p.close();
    }
  });
});
