// Remote comments in the console (contract section 24), in headless Chromium: a comment by a
// fediverse reader (`ap:<actor URL>`) shows a "fediverse" badge, one by a webmention's reader
// (`wm:<site origin>`) a "webmention" badge, a local one neither; "Block domain" on the fediverse
// one adds its domain to the settings' federation.blockedDomains (read back over REST), keeping the
// domains already there, and the queue is read again: the domain's held comment, now rejected, leaves it. The readers are asserted by the site's backend with those ids (what the
// badge reads is the id). axe-core; screenshot console-remote.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, settled, shoot } from "../support/console-page.js";

const OWNER = "remote.owner@example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;

describe.skipIf(chromiumMissing)("remote comments in the console", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server, "The Remote Times");
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("badges fediverse and webmention comments; Block domain adds the domain to blockedDomains", async () => {
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre", federation: { blockedDomains: ["spam.example"] } })).status).toBe(
      200,
    );
    expect((await t.api.put("/api/v1/discussions/fedi", { title: "Fediverse post" })).status).toBe(201);
    const ap = await t.reader("ap:https://Social.Example/users/bob", { name: "Bob" });
    expect((await ap.post("/api/v1/discussions/fedi/comments", { body: "Hello from Mastodon" })).status).toBe(201);
    const wm = await t.reader("wm:https://alice.example", { name: "Alice" });
    expect((await wm.post("/api/v1/discussions/fedi/comments", { body: "I wrote about this" })).status).toBe(201);
    const local = await t.reader("carol", { name: "Carol" });
    expect((await local.post("/api/v1/discussions/fedi/comments", { body: "Local" })).status).toBe(201);

    await page.goto(`${server.url}/console/#/moderation`);
    const bob = page.getByRole("listitem", { name: "Comment by Bob in Fediverse post" });
    const alice = page.getByRole("listitem", { name: "Comment by Alice in Fediverse post" });
    const carol = page.getByRole("listitem", { name: "Comment by Carol in Fediverse post" });
    await bob.waitFor();
    await settled(page);
    await expect(bob.locator(".remote-badge").textContent()).resolves.toBe("fediverse");
    await expect(alice.locator(".remote-badge").textContent()).resolves.toBe("webmention");
    expect(await carol.locator(".remote-badge").count()).toBe(0);
    expect(await carol.getByRole("button", { name: "Block domain", exact: true }).count()).toBe(0);
    await expectAccessible(page, "the queue with remote comments");

    await bob.getByRole("button", { name: "Block domain", exact: true }).click();
    // the block rejected bob's held comment: the queue is read again and his card leaves it, the
    // screen saying what was done; the others stay
    await bob.waitFor({ state: "detached" });
    await page.getByRole("status").filter({ hasText: "Blocked social.example: its comments here are rejected" }).waitFor();
    await alice.waitFor();
    await carol.waitFor();
    expect(await page.getByRole("list", { name: "Pending comments" }).getByRole("listitem").count()).toBe(2);
    // and the shell's Moderation (n) counts it out
    await expect.poll(() => page.getByRole("link", { name: /^Moderation/ }).textContent()).toBe("Moderation (2)");
    await settled(page);
    await shoot(page, "console-remote");
    expect((await t.api.get("/api/v1/settings")).body.federation.blockedDomains).toEqual(["spam.example", "social.example"]);
    await expectAccessible(page, "the queue after Block domain");

    // it is with the rejected ones; Block domain again there adds nothing twice
    await page.getByRole("combobox", { name: /^Show/ }).selectOption("rejected");
    const rejectedBob = page
      .getByRole("list", { name: "Rejected comments" })
      .getByRole("listitem", { name: "Comment by Bob in Fediverse post" });
    await rejectedBob.waitFor();
    await rejectedBob.getByRole("button", { name: "Block domain", exact: true }).click();
    await rejectedBob.getByRole("status").filter({ hasText: "Blocked social.example" }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.federation.blockedDomains).toEqual(["spam.example", "social.example"]);
    await rejectedBob.waitFor();
  });
});
