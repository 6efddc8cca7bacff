// The console's Fediverse screen (contract section 28), in headless Chromium against a federating
// instance and a real fediverse peer (test/support/fedi-peer.ts): the site's address and followers
// (GET /api/v1/federation, GraphQL federationStatus), the settings that make the account (handle,
// the site's own domain, icon, profile text, on or off, remote moderation, blocked domains) saved
// from the form, a bad domain refused beside its field, a follower counted once the peer follows, and
// "Announce discussions" posting the earlier discussions to the follower, followed until it ends.
// axe-core at both widths; screenshots console-fediverse and console-fediverse-narrow.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";
import { startFederatingServer } from "../support/federating-server.js";
import { startFediPeer, type FediPeer } from "../support/fedi-peer.js";

const OWNER = "fedi.owner@example.com";

let server: Awaited<ReturnType<typeof startFederatingServer>>;
let peer: FediPeer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;

const factText = async (name: string) => (await page.locator(`dl.facts dt:text-is("${name}") + dd`).textContent())?.trim() ?? "";

describe.skipIf(chromiumMissing)("the console's Fediverse screen", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    [server, peer] = await Promise.all([startFederatingServer(), startFediPeer({ names: ["alice"] })]);
    t = await createTestTenant(server, "The Fedi Times");
    ({ browser, page } = await openConsole(server, t, { as: { email: OWNER, role: "owner" } }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await peer?.close();
    await server?.stop();
  });

  it("makes the account, counts its follower and announces the earlier discussions", async () => {
    // two discussions with pages, made before the site federates: nothing announces them yet
    for (const id of ["first", "second"]) {
      expect(
        (await t.api.put(`/api/v1/discussions/${id}`, { title: `The ${id} post`, url: `https://fedi-times.example/${id}` })).status,
      ).toBe(201);
    }
    await page.getByRole("link", { name: "Fediverse", exact: true }).click();
    await page.getByRole("heading", { name: "Fediverse", level: 1 }).waitFor();
    await settled(page);
    expect(await factText("Address")).toBe("None yet: choose a handle below");
    expect(await factText("Followers")).toBe("0");
    expect(await factText("State")).toBe("Off");
    await expectAccessible(page, "the Fediverse screen, off");

    // a domain that is not one is refused beside its field, nothing saved
    await page.getByRole("textbox", { name: "Handle", exact: true }).fill("times");
    await page.getByRole("textbox", { name: "Domain", exact: true }).fill("not a domain/");
    await page.getByRole("button", { name: "Save settings" }).click();
    const domain = page.getByRole("textbox", { name: "Domain", exact: true });
    await expect.poll(() => domain.getAttribute("aria-invalid")).toBe("true");
    expect((await t.api.get("/api/v1/settings")).body.federation).toMatchObject({ handle: null, domain: null, enabled: false });

    await domain.fill("Fedi-Times.example");
    await page.getByRole("textbox", { name: "Icon", exact: true }).fill("https://fedi-times.example/icon.png");
    await page.getByRole("textbox", { name: "Profile text" }).fill("News from the Fedi Times, and what readers answer.");
    await page.getByRole("checkbox", { name: "Federate this site (ActivityPub and Webmention)" }).check();
    await page.getByRole("combobox", { name: "Remote moderation" }).selectOption("post");
    await page.getByRole("textbox", { name: "Blocked domains (one per line)" }).fill("spam.example\nworse.example");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Settings saved:" }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.federation).toEqual({
      enabled: true,
      handle: "times",
      domain: "fedi-times.example",
      url: null,
      icon: "https://fedi-times.example/icon.png",
      summary: "News from the Fedi Times, and what readers answer.",
      remoteModeration: "post",
      blockedDomains: ["spam.example", "worse.example"],
    });
    await expect.poll(() => factText("Address")).toBe("@times@fedi-times.example");
    expect(await factText("State")).toBe("Federating");

    // a follower, counted once the peer has followed the actor
    await peer.follow("alice", new URL(`${server.publicUrl}/ap/actors/${t.tenantId}`));
    await vi.waitFor(async () => expect((await t.api.get("/api/v1/federation")).body.followers).toBe(1), {
      timeout: 20_000,
      interval: 100,
    });
    expect((await t.api.get("/api/v1/federation")).body).toEqual({
      enabled: true,
      served: true,
      address: "@times@fedi-times.example",
      followers: 1,
    });
    await page.reload();
    await page.getByRole("heading", { name: "Fediverse", level: 1 }).waitFor();
    await expect.poll(() => factText("Followers")).toBe("1");

    // the earlier discussions announced to the follower, the screen following the job to its end
    await page.getByRole("button", { name: "Announce discussions" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Announced 2 discussions; 0 discussions had been announced before." })
      .waitFor({ timeout: 30_000 });
    await vi.waitFor(
      () => {
        const creates = peer.received.filter((r) => r.type === "Create");
        expect(creates.map((c) => (c.json.object as { url?: string }).url).sort()).toEqual([
          "https://fedi-times.example/first",
          "https://fedi-times.example/second",
        ]);
      },
      { timeout: 20_000, interval: 100 },
    );
    await settled(page);
    await expectAccessible(page, "the Fediverse screen, federating");
    await shoot(page, "console-fediverse");

    await page.setViewportSize({ width: 390, height: 900 });
    await settled(page);
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "the Fediverse screen at 390 px");
    await shoot(page, "console-fediverse-narrow");
  });
});
