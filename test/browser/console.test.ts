// The admin console in headless Chromium (contract section 10): sign in through `engagement
// console-link`; create a key, see it once, use it, revoke it and see the API refuse it; approve a
// pending comment that arrived live and see it reach a reader's SSE stream; bring a webhook endpoint
// disabled by failures back with "Enable"; no serious or critical axe-core violation on any screen,
// at 1280 px and 390 px. Screenshots of each screen go to docs/console/.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { openSse } from "../support/sse.js";
import { eventually, startReceiver, type Receiver } from "../support/receiver.js";
import { startWebhookServer } from "../support/receiver-app.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
let receiver: Receiver;
/** errors the page logs (a CSP violation among them) */
const consoleErrors: string[] = [];

describe.skipIf(chromiumMissing)("the admin console in headless Chromium", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    receiver = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json?.challenge } } : { status: 500, body: "down" },
    );
    server = await startWebhookServer();
    t = await createTestTenant(server);
    await t.api.patch("/api/v1/settings", { moderation: "pre" });
    // the console runs under its own Content-Security-Policy (no bypass): what users get
    ({ browser, page } = await openConsole(server, t, {
      as: "cli",
      onPage: (p) =>
        p.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(m.text());
        }),
    }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  it("signs in through console-link and shows every screen, accessible at 1280 px and 390 px", async () => {
    expect(new URL(page.url()).pathname).toBe("/console/");
    const nav = page.getByRole("navigation", { name: "Main" });
    // the Moderation link shows the pending count beside its name ("Moderation (0)"), its description for a screen reader
    const link = (name: string) => nav.getByRole("link", { name, exact: true });
    for (const name of ["Moderation", "Discussions", "Keys", "Webhooks", "Settings", "Analytics", "Audit log"]) {
      await link(name).click();
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await settled(page);
      await expectAccessible(page, name);
      await shoot(page, name.toLowerCase().replace(" ", "-"));
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const name of ["Moderation", "Discussions", "Keys", "Webhooks", "Settings", "Analytics", "Audit log"]) {
      await link(name).click();
      await settled(page);
      await expectAccessible(page, `${name} at 390 px`);
      expect(await overflow(page), `${name} fits 390 px`).toEqual([0]);
    }
    await shoot(page, "settings-390");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("keeps the navigation on one row with Sign out at 1280 px", async () => {
    const nav = page.getByRole("navigation", { name: "Main" });
    const tops = await nav.getByRole("link").evaluateAll((links) => links.map((l) => Math.round(l.getBoundingClientRect().top)));
    expect(tops.length).toBe(10); // Safety (test/browser/console-safety.test.ts), Fediverse (console-fediverse.test.ts) and Bluesky (console-bluesky.test.ts) among them
    expect(new Set(tops).size, "the links wrap").toBe(1);
    const box = (await nav.boundingBox())!;
    const out = (await page.getByRole("button", { name: "Sign out" }).boundingBox())!;
    expect(out.y).toBeLessThan(box.y + box.height);
    expect(out.y + out.height).toBeGreaterThan(box.y);
  });

  it("creates a key, shows it once, the API takes it; revoking it makes the API refuse it", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click();
    await page.getByRole("button", { name: "Create key" }).click();
    await expectAccessible(page, "the new key form");
    await page.getByLabel("Label").fill("from the console");
    await page.getByLabel("moderate_content").check();
    await page.getByRole("button", { name: "Create", exact: true }).click();
    const region = page.getByRole("region", { name: "Your new API key" });
    const raw = (await region.locator("code").textContent())!;
    expect(raw).toMatch(/^ek_[0-9a-f]{64}$/);
    await expect.poll(() => region.getByRole("button", { name: "Copy" }).count()).toBe(1);
    await shoot(page, "keys-created");

    const use = () => fetch(`${server.url}/api/v1/comments?status=pending`, { headers: { "x-api-key": raw } });
    expect((await use()).status).toBe(200);
    await region.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(raw); // shown once

    const row = page.getByRole("row", { name: /from the console/ });
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Confirm revoke" }).click();
    await row.getByRole("cell", { name: "revoked" }).waitFor();
    const refused = await use();
    expect(refused.status).toBe(401);
    expect((await refused.json()).code).toBe("key_revoked");
  });

  it("shows a new pending comment live; Approve sends it to a reader's stream", async () => {
    await t.api.put("/api/v1/discussions/console-d", { title: "Console" });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Moderation" }).click();
    await page.getByText("Nothing to moderate.").waitFor();
    const reader = openSse(`${server.url}/api/v1/stream/console-d`, {
      "x-api-key": t.apiKey,
      "x-service-identity": await t.identity("watcher"),
    });
    await reader.waitFor((f) => f.some((x) => x.event === "connected"));

    const posted = await t
      .as({ key: t.apiKey, identity: await t.identity("ann", { name: "Ann" }) })
      .post("/api/v1/discussions/console-d/comments", {
        body: "Please approve me",
      });
    expect(posted.body.status).toBe("pending");
    const item = page.getByRole("listitem", { name: "Comment by Ann in Console" });
    await item.waitFor({ timeout: 15_000 }); // arrived without a reload
    await expect.poll(() => item.textContent()).toContain("Please approve me");
    await shoot(page, "moderation-pending");
    await item.getByRole("button", { name: "Approve" }).click();
    await reader.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.id === posted.body.id));
    await item.waitFor({ state: "detached" });
    reader.close();

    // page reactions: counted on the discussion's page (and in analytics, below)
    await t.api.patch("/api/v1/settings", { pageReactionKinds: ["up", "heart"] });
    for (const [sub, kind] of [
      ["pr-a", "up"],
      ["pr-b", "up"],
      ["pr-b", "heart"],
    ] as const) {
      const r = await (await t.reader(sub)).post("/api/v1/discussions/console-d/reactions", { kind });
      expect(r.status).toBe(200);
    }

    // the discussion's own page: its thread, with the approved comment
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Discussions" }).click();
    // the list names discussions by their titles (the id a detail beside)
    await page.getByRole("link", { name: "Console", exact: true }).click();
    await page.getByText("Please approve me").waitFor();
    await page.getByText("Page reactions: 2 up · 1 heart").waitFor();
    await expectAccessible(page, "a discussion");
    await shoot(page, "discussion");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Moderation" }).click();
    await settled(page);

    // the keyboard: j/k move, r rejects
    const second = await t
      .as({ key: t.apiKey, identity: await t.identity("bo", { name: "Bo" }) })
      .post("/api/v1/discussions/console-d/comments", {
        body: "Reject me",
      });
    const other = page.getByRole("listitem", { name: "Comment by Bo in Console" });
    await other.waitFor({ timeout: 15_000 });
    await other.focus();
    await page.keyboard.press("r");
    await other.waitFor({ state: "detached" });
    expect((await t.api.get(`/api/v1/comments/${second.body.id}`)).body.status).toBe("rejected");
  });

  it("brings an endpoint disabled by failures back with Enable", async () => {
    const created = await t.api.post("/api/v1/webhooks", {
      url: receiver.url,
      events: ["*"],
      delivery: { maxAttempts: 1, breakerThreshold: 100, disableThreshold: 1 },
    });
    expect(created.status).toBe(201);
    const id = created.body.webhookId as string;
    // the handshake is the worker's next pass: seconds under a loaded CI machine
    await eventually(async () => (await t.api.get(`/api/v1/webhooks/${id}`)).body.verified === true, 20_000);
    await t.api.post("/api/v1/discussions/console-d/lock");
    await eventually(async () => (await t.api.get(`/api/v1/webhooks/${id}`)).body.state === "disabled", 10_000);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("link", { name: receiver.url }).click();
    await page.getByRole("heading", { name: receiver.url }).waitFor();
    await page.getByRole("cell", { name: "discussion_locked" }).first().waitFor();
    await expectAccessible(page, "an endpoint");
    await shoot(page, "webhook-disabled");

    // redelivering since a time says how many first (a dry run), and sends only when told
    const before = (await t.api.get(`/api/v1/webhooks/${id}/deliveries`)).body.items.length;
    const hourAgo = new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel("Redeliver since", { exact: true }).fill(hourAgo);
    await page.getByRole("button", { name: "Redeliver", exact: true }).click();
    const confirm = page.getByRole("group", { name: "Confirm the redelivery" });
    await confirm.waitFor();
    const send = confirm.getByRole("button", { name: /^Send \d+ again$/ });
    const n = Number((await send.textContent())!.match(/\d+/)![0]);
    expect(n).toBeGreaterThan(0);
    const dry = await t.api.post(`/api/v1/webhooks/${id}/redeliver`, {
      since: new Date(Date.now() - 3_600_000).toISOString(),
      dryRun: true,
    });
    expect(dry.body.queued).toBe(n);
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await t.api.get(`/api/v1/webhooks/${id}/deliveries`)).body.items.length).toBe(before);
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("status").filter({ hasText: "Enabled again" }).waitFor();
    expect((await t.api.get(`/api/v1/webhooks/${id}`)).body.state).toBe("active");
  });

  it("follows an endpoint added in the console until its handshake ends: verified (or not) without a reload", async () => {
    // a receiver that takes a moment to echo the challenge, and one that refuses it
    const slow = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json?.challenge }, delayMs: 600 } : { status: 200 },
    );
    const refusing = await startReceiver(() => ({ status: 500, body: "no" }));
    try {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
      for (const r of [refusing, slow]) {
        await page.getByRole("button", { name: "Add endpoint" }).click();
        const form = page.getByRole("form", { name: "New endpoint" });
        await form.getByLabel("URL").fill(r.url);
        await form.getByRole("button", { name: "Add" }).click();
        await page.getByRole("region", { name: "The endpoint's signing secret" }).getByRole("button", { name: "Done" }).click();
      }
      const verified = (url: string) =>
        page
          .getByRole("row", { name: new RegExp(url) })
          .getByRole("cell")
          .nth(2);
      await expect.poll(() => verified(slow.url).textContent(), { timeout: 10_000 }).toBe("yes");
      await expect.poll(() => verified(refusing.url).textContent(), { timeout: 10_000 }).toBe("no");
      expect(slow.handshakes()).toHaveLength(1);
      await expectAccessible(page, "webhooks after a handshake");
      await shoot(page, "webhooks-verified");
    } finally {
      await slow.close();
      await refusing.close();
    }
  });

  it("shows the server's settings and saves only what changed: a tenant on pre stays on pre", async () => {
    expect((await t.api.get("/api/v1/settings")).body.moderation).toBe("pre");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    const moderation = page.getByLabel("Moderation");
    await expect.poll(() => moderation.inputValue()).toBe("pre");
    const windowField = page.getByLabel("Edit window (seconds, 0 = no limit)");
    await windowField.fill("600");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Settings saved: editWindowSeconds." }).waitFor();
    const stored = (await t.api.get("/api/v1/settings")).body;
    expect(stored).toMatchObject({ moderation: "pre", editWindowSeconds: 600 });
    // the form shows what was stored, still pre; saving it untouched sends nothing
    await expect.poll(() => page.getByLabel("Moderation").inputValue()).toBe("pre");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Nothing changed" }).waitFor();
    // the audit entry says what changed, from what to what
    const entry = (await t.admin.get("/api/v1/audit?action=settings.update")).body.items[0];
    expect(entry.actor).toMatchObject({ type: "operator", label: "owner@localhost" });
    expect(entry.details.changes).toEqual([{ field: "editWindowSeconds", from: 900, to: 600 }]);
  });

  it("edits a webhook endpoint sending only what changed: overrides and url kept", async () => {
    const created = await t.api.post("/api/v1/webhooks", {
      url: receiver.url,
      events: ["comment_created"],
      description: "before",
      delivery: { maxAttempts: 2, backoffBaseMs: 500 },
    });
    const id = created.body.webhookId as string;
    await page.goto(`${server.url}/console/#/webhooks/${id}`);
    const form = page.getByRole("form", { name: "Edit endpoint" });
    await expect.poll(() => form.getByLabel("maxAttempts").inputValue()).toBe("2");
    await form.getByLabel("Description").fill("after");
    await form.getByLabel("backoffBaseMs").fill(""); // emptied: the tenant's value again
    await form.getByRole("button", { name: "Save endpoint" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const stored = (await t.api.get(`/api/v1/webhooks/${id}`)).body;
    expect(stored).toMatchObject({ url: receiver.url, events: ["comment_created"], description: "after" });
    expect(stored.delivery).toEqual({ maxAttempts: 2 });
    const updates = (await t.admin.get("/api/v1/audit?action=webhook.update")).body.items;
    expect([...updates[0].details.fields].sort()).toEqual(["delivery", "description"]); // not url, not events
    await t.api.del(`/api/v1/webhooks/${id}`);
  });

  it("shows the problem document's errors beside the settings they name", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("Maximum body length").fill("0");
    await page.getByLabel("Allowed origins (one per line)").fill("not an origin");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").waitFor();
    const body = page.getByLabel("Maximum body length");
    await expect.poll(() => body.getAttribute("aria-invalid")).toBe("true");
    // described by its problem (and its line of help)
    const errorId = (await body.getAttribute("aria-describedby"))!.split(" ").find((id) => id.startsWith("err-"))!;
    expect(await page.locator(`#${errorId.replace(".", "\\.")}`).textContent()).toMatch(/\d/);
    expect(await page.getByLabel("Allowed origins (one per line)").getAttribute("aria-invalid")).toBe("true");
    await shoot(page, "settings-errors");
  });

  it("reads as a product: labels in words with units, a line of help each, ms shown as seconds, the outcome beside Save; rotating asks first", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await page.reload(); // the form afresh: the test before left problems in it
    // delivery, streams, limits and idempotency are their own view, not General's
    const views = page.getByRole("navigation", { name: "Settings views" });
    await page.getByLabel("Inbox items kept (days)").waitFor();
    expect(await page.getByLabel("Attempt timeout (seconds)").count()).toBe(0);
    await views.getByRole("link", { name: "Delivery & limits" }).click();
    await page.getByRole("heading", { level: 1, name: "Delivery & limits" }).waitFor();
    const timeout = page.getByLabel("Attempt timeout (seconds)");
    const before = (await t.api.get("/api/v1/settings")).body.delivery.attemptTimeoutMs as number;
    await expect.poll(() => timeout.inputValue()).toBe(String(before / 1000));
    const help = (await timeout.getAttribute("aria-describedby"))!;
    expect(await page.locator(`#${help.replace(".", "\\.")}`).textContent()).toMatch(/how long one attempt waits/i);
    for (const label of [
      "Attempts per event",
      "Open streams (whole tenant)",
      "Replay window (seconds)",
      "Heartbeat (seconds)",
      "Delivery log kept (days)",
      "Idempotency keys kept (hours)",
    ])
      expect(await page.getByLabel(label).count(), label).toBe(1);
    expect(await page.getByLabel("Moderation").count()).toBe(0);
    await timeout.fill("2.5");
    await page.getByRole("button", { name: "Save settings" }).click();
    // the outcome stands beside the button that saved
    await page.locator(".save-bar").getByRole("status").filter({ hasText: "Settings saved: delivery.attemptTimeoutMs." }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.delivery.attemptTimeoutMs).toBe(2500);
    await expect.poll(() => page.getByLabel("Attempt timeout (seconds)").inputValue()).toBe("2.5");
    await expectAccessible(page, "Delivery & limits");
    await shoot(page, "settings-delivery");

    await views.getByRole("link", { name: "General" }).click();
    await page.getByLabel("Inbox items kept (days)").fill("30");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator(".save-bar").getByRole("status").filter({ hasText: "Settings saved: inbox.retentionDays." }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.inbox.retentionDays).toBe(30);
    await shoot(page, "settings-general");

    // the identity secret: the text says the old one keeps working; rotating asks first, and Cancel changes nothing
    const rotations = async () => (await t.admin.get("/api/v1/audit?action=settings.rotate_identity_secret")).body.items.length as number;
    const rotated = await rotations();
    await page.getByText(/the old one keeps\s+working for the overlap/).waitFor();
    await page.getByRole("button", { name: "Rotate identity secret" }).click();
    const ask = page.getByRole("group", { name: "Rotate the identity secret?" });
    await ask.getByRole("button", { name: "Cancel" }).click();
    expect(await rotations()).toBe(rotated);
    await page.getByRole("button", { name: "Rotate identity secret" }).click();
    await shoot(page, "settings-rotate-ask");
    await ask.getByRole("button", { name: "Rotate now" }).click();
    const shown = page.getByRole("region", { name: "The new identity secret" });
    await shown.getByText(/The old secret keeps working until/).waitFor();
    expect(await rotations()).toBe(rotated + 1);
    await (
      await t.api.patch("/api/v1/settings", { delivery: { attemptTimeoutMs: before } })
    ).body;
  });

  it("lists what was done in the audit log, filterable by action", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("cell", { name: "api_key.create" }).first().waitFor();
    // who by label (the bootstrap key set pre-moderation), and what a settings change changed
    await page.getByRole("cell", { name: "editWindowSeconds: 900 → 600" }).waitFor();
    await page.getByRole("cell", { name: "moderation: post → pre" }).waitFor();
    await expect.poll(() => page.getByRole("cell", { name: /^bootstrap \(key / }).count()).toBeGreaterThan(0);
    await shoot(page, "audit-log");
    await page.getByLabel("Action").fill("webhook.");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByRole("cell", { name: "webhook.enable" }).waitFor();
    await expect.poll(() => page.getByRole("cell", { name: "api_key.create" }).count()).toBe(0);
    // by now there is something to chart
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics" }).click();
    await settled(page);
    await expect.poll(() => page.locator("canvas").count()).toBe(7);
    await page.getByRole("img", { name: "Page reactions by kind: 1 heart, 2 up" }).waitFor();
    await shoot(page, "analytics");
  });

  it("signs out", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
    await expectAccessible(page, "sign-in");
    await shoot(page, "sign-in");
    expect(await page.evaluate(() => fetch("/console/auth/session").then((r) => r.status))).toBe(401);
  });
});
