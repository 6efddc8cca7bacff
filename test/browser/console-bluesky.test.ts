// The console's Bluesky screen (contract section 30), in headless Chromium against the real server: in
// the navigation as "Bluesky"; "Post to Bluesky" while Bluesky is off says so (409 bluesky_disabled);
// the settings saved from the form — autoPost without an app password refused beside its field (422),
// then the account with its app password, which is write-only: never in the page nor in any answer,
// its field empty with the stored-password help, removed by its box; the linked posts (rows written here through Prisma: how
// the poller reads threads against a real AT Protocol network is test/bluesky.test.ts) with their
// replies, reads and a failed read's error; linking refused for an unknown discussion, one without a
// page and a string that names no post (beside its field); a discussion posted before answered as it
// is; Unlink; the moderation section, whose link opens the queue, where a reply from Bluesky has its
// badge. axe-core at 1280 and 390 px; screenshots bluesky and bluesky-narrow.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, overflow, settled, shoot } from "../support/console-page.js";

const OWNER = "bluesky.owner@example.com";
const APP_PASSWORD = "bsky-console-pass-7q2x";
const DID = "did:plc:skytimesconsoleabcdefghi";
const POST_URI = `at://${DID}/app.bsky.feed.post/3kconsolepost1`;
const SHARED_URI = "at://did:plc:someoneelsesharedbyhandx/app.bsky.feed.post/3ksharedbyhand";
const READ_ERROR = "the AppView https://public.api.bsky.app did not answer: request timed out after 10000 ms";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
/** every GraphQL answer the page was given */
const answers: Promise<string>[] = [];

describe.skipIf(chromiumMissing)("the console's Bluesky screen", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server, "The Sky Times");
    ({ browser, page } = await openConsole(server, t, {
      as: { email: OWNER, role: "owner" },
      onPage: (p) => p.on("response", (r) => void (r.url().endsWith("/graphql") && answers.push(r.text().catch(() => "")))),
    }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const form = (name: string) => page.getByRole("form", { name });
  const linksTable = () => page.getByRole("region", { name: "Linked posts", exact: true }).getByRole("table");
  const row = (id: string) =>
    linksTable()
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: id, exact: true }) });
  const cell = async (id: string, column: number) => ((await row(id).getByRole("cell").nth(column).textContent()) ?? "").trim();

  it("posts nothing while Bluesky is off, saves the account with a write-only app password, and lists the linked posts", async () => {
    for (const [id, body] of Object.entries({
      "first-post": { title: "The first post", url: "https://sky-times.example/first" },
      "shared-post": { title: "Shared by hand", url: "https://sky-times.example/shared" },
      "waiting-post": { title: "Waiting", url: "https://sky-times.example/waiting" },
      "no-page": { title: "No page" },
    })) {
      expect((await t.api.put(`/api/v1/discussions/${id}`, body)).status).toBe(201);
    }

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Bluesky", exact: true }).click();
    await page.getByRole("heading", { name: "Bluesky", level: 1 }).waitFor();
    await settled(page);
    expect(await page.title()).toBe("Bluesky · Engagement console");
    await page.getByText("No discussion is linked to a Bluesky post yet.").waitFor();
    await expectAccessible(page, "the Bluesky screen, off");

    // Bluesky off: posting is refused (409 bluesky_disabled), in words
    const post = form("Post a discussion");
    await post.getByRole("textbox", { name: "Discussion id" }).fill("first-post");
    const refused = page.waitForResponse(
      (r) => r.url().endsWith("/graphql") && (r.request().postData() ?? "").includes("PostDiscussionToBluesky"),
    );
    await post.getByRole("button", { name: "Post to Bluesky" }).click();
    expect(JSON.parse(await (await refused).text()).errors[0].extensions.code).toBe("bluesky_disabled");
    await expect
      .poll(() => post.getByRole("alert").textContent())
      .toBe("Bluesky is off for this site: tick “Bring in replies from Bluesky” under Account and save, then try again.");

    // autoPost without the account's app password: refused beside its field, nothing saved
    const account = page.getByRole("region", { name: "Account", exact: true });
    await account.getByRole("checkbox", { name: "Bring in replies from Bluesky" }).check();
    await account.getByRole("textbox", { name: "Handle" }).fill("sky-times.bsky.social");
    await account.getByRole("checkbox", { name: "Post each new discussion" }).check();
    await account.getByRole("button", { name: "Save settings" }).click();
    const autoPost = account.getByRole("checkbox", { name: "Post each new discussion" });
    await expect.poll(() => autoPost.getAttribute("aria-invalid")).toBe("true");
    expect(await account.locator(".field-error").textContent()).toBe("needs the site's account: a handle and an app password");
    expect((await t.api.get("/api/v1/settings")).body.bluesky).toMatchObject({ enabled: false, handle: null, appPasswordSet: false });
    await expectAccessible(page, "the Bluesky screen, a problem beside its field");

    // the account, its app password typed once
    await autoPost.uncheck();
    const password = account.getByLabel("App password", { exact: true });
    expect(await password.getAttribute("type")).toBe("password");
    await password.fill(APP_PASSWORD);
    await account.getByRole("combobox", { name: "Moderation of replies" }).selectOption("pre");
    await account.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Settings saved:" }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.bluesky).toEqual({
      enabled: true,
      handle: "sky-times.bsky.social",
      service: "https://bsky.social",
      appView: "https://public.api.bsky.app",
      remoteModeration: "pre",
      autoPost: false,
      appPasswordSet: true,
    });
    // write-only: the field is empty again and says a password is stored; it is nowhere in the page or an answer
    await expect
      .poll(async () => (await page.locator("#help-bluesky\\.appPassword").textContent())?.trim())
      .toBe("A password is stored; it is never shown. Leave this empty to keep it, or type a new one to replace it.");
    expect(await account.getByLabel("App password", { exact: true }).inputValue()).toBe("");
    expect(await account.getByLabel("App password", { exact: true }).getAttribute("placeholder")).toBe("stored");
    expect(await page.content()).not.toContain(APP_PASSWORD);
    const settingsAnswer = await t.api.get("/api/v1/settings");
    expect(JSON.stringify(settingsAnswer.body)).not.toContain(APP_PASSWORD);
    expect((await Promise.all(answers)).filter((a) => a.includes(APP_PASSWORD))).toEqual([]);
    expect(await page.locator("dl.facts dt:text-is('Account') + dd").textContent()).toBe("@sky-times.bsky.social");

    // the links, written as the service writes them (the poller's reads against a network are test/bluesky.test.ts's)
    const prisma = server.app.runtime.services.prisma;
    const at = (iso: string) => new Date(iso);
    await prisma.blueskyLink.create({
      data: {
        tenantId: t.tenantId,
        discussionId: "first-post",
        uri: POST_URI,
        cid: "bafyreiconsolepost",
        posted: true,
        createdAt: at("2025-03-01T09:00:00Z"),
        polledAt: at("2025-03-02T10:00:00Z"),
        nextPollAt: at("2025-03-02T10:05:00Z"),
      },
    });
    await prisma.blueskyReply.createMany({
      data: [1, 2].map((n) => ({
        tenantId: t.tenantId,
        uriHash: `console-reply-${n}`,
        uri: `at://did:plc:reader000${n}/app.bsky.feed.post/3kreply${n}`,
        discussionId: "first-post",
        commentId: `console-comment-${n}`,
        readerId: `at:did:plc:reader000${n}`,
        createdAt: at("2025-03-02T09:30:00Z"),
      })),
    });
    await prisma.blueskyLink.create({
      data: {
        tenantId: t.tenantId,
        discussionId: "shared-post",
        uri: SHARED_URI,
        cid: "bafyreisharedbyhand",
        posted: false,
        createdAt: at("2025-03-03T09:00:00Z"),
        polledAt: at("2025-03-03T12:00:00Z"),
        nextPollAt: at("2025-03-03T12:04:00Z"),
        failures: 2,
        lastError: READ_ERROR,
      },
    });
    await prisma.blueskyLink.create({
      data: {
        tenantId: t.tenantId,
        discussionId: "waiting-post",
        uri: null,
        posted: true,
        createdAt: at("2025-03-04T09:00:00Z"),
        nextPollAt: at("2025-03-04T09:00:00Z"),
      },
    });
    await page.reload();
    await page.getByRole("heading", { name: "Bluesky", level: 1 }).waitFor();
    await settled(page);
    // newest first
    expect(
      await linksTable()
        .locator("tbody tr td:first-child a")
        .evaluateAll((tds) => tds.map((td) => td.textContent)),
    ).toEqual(["waiting-post", "shared-post", "first-post"]);
    expect(await row("first-post").getByRole("link", { name: "first-post", exact: true }).getAttribute("href")).toBe(
      "#/discussions/first-post",
    );
    const open = row("first-post").getByRole("link", { name: /^Open on Bluesky/ });
    expect(await open.getAttribute("href")).toBe(`https://bsky.app/profile/${DID}/post/3kconsolepost1`);
    expect(await cell("first-post", 1)).toContain("Posted");
    expect(await cell("first-post", 2)).toBe("2");
    expect(await cell("first-post", 5)).toBe("None");
    expect(await cell("shared-post", 1)).toContain("Linked");
    expect(await cell("shared-post", 2)).toBe("0");
    expect(await cell("shared-post", 5)).toBe(`Failed: ${READ_ERROR}`);
    expect(await cell("shared-post", 0)).toBe("shared-postread failed");
    expect(await page.locator(".bluesky .warning").textContent()).toContain("The last read of 1 linked post failed");
    expect(await cell("waiting-post", 1)).toContain("Waiting to be posted");
    expect(await cell("waiting-post", 3)).toBe("Not yet");

    // linking: an unknown discussion, one without a page, a string that names no post (beside its field)
    const link = form("Link a discussion to a post");
    const linkId = link.getByRole("textbox", { name: "Discussion id" });
    const linkPost = link.getByRole("textbox", { name: "Post" });
    const linkButton = link.getByRole("button", { name: "Link discussion" });
    await linkId.fill("missing");
    await linkPost.fill("https://bsky.app/profile/sky-times.bsky.social/post/3kanything");
    await linkButton.click();
    await expect.poll(() => link.getByRole("alert").textContent()).toBe("No discussion has the id “missing”.");
    expect((await t.api.get("/api/v1/discussions/missing")).status).toBe(404);
    await linkId.fill("no-page");
    await linkButton.click();
    await expect.poll(() => link.getByRole("alert").textContent()).toContain("The discussion “no-page” has no page address (url)");
    await linkId.fill("first-post");
    await linkPost.fill("not a post");
    await linkButton.click();
    await expect.poll(() => linkPost.getAttribute("aria-invalid")).toBe("true");
    expect(await link.getByRole("alert").textContent()).toBe("The post was not linked; see the message beside it.");
    expect(await link.locator(".field-error").textContent()).not.toBe("");

    // posting a discussion that has its post: answered as it is, nothing posted
    await post.getByRole("textbox", { name: "Discussion id" }).fill("first-post");
    await post.getByRole("button", { name: "Post to Bluesky" }).click();
    await page
      .getByRole("status")
      .filter({
        hasText: `“first-post” was linked to a post already (https://bsky.app/profile/${DID}/post/3kconsolepost1): nothing was posted.`,
      })
      .waitFor();
    expect(await post.getByRole("alert").count()).toBe(0);

    // Unlink: the row leaves, the link is gone
    await row("waiting-post").getByRole("button", { name: "Unlink waiting-post" }).click();
    await page.getByRole("status").filter({ hasText: "Unlinked “waiting-post”" }).waitFor();
    await expect.poll(() => row("waiting-post").count()).toBe(0);
    expect((await t.api.get("/api/v1/bluesky/links")).body.items.map((l: { discussionId: string }) => l.discussionId)).toEqual([
      "shared-post",
      "first-post",
    ]);

    // moderation: how replies are moderated, and the way to the queue
    const moderation = page.getByRole("region", { name: "Moderation", exact: true });
    expect(await moderation.textContent()).toContain("Each reply from Bluesky is held as pending until a moderator approves it");
    expect(await moderation.getByRole("link", { name: "Open the moderation queue (pending comments)" }).getAttribute("href")).toBe(
      "#/moderation",
    );

    await settled(page);
    await expectAccessible(page, "the Bluesky screen");
    expect(await page.content()).not.toContain(APP_PASSWORD);
    await shoot(page, "bluesky");

    await page.setViewportSize({ width: 390, height: 900 });
    await settled(page);
    expect(await overflow(page)).toEqual([0]);
    await expectAccessible(page, "the Bluesky screen at 390 px");
    await shoot(page, "bluesky-narrow");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("removes the stored app password when its box is ticked, and keeps it when the box is not", async () => {
    await page.goto(`${server.url}/console/#/bluesky`);
    const account = page.getByRole("region", { name: "Account", exact: true });
    const remove = account.getByRole("checkbox", { name: "Remove the stored app password (the site's account can then no longer post)" });
    await remove.waitFor();
    // saved without ticking it: the password stays
    await account.getByRole("combobox", { name: "Moderation of replies" }).selectOption("post");
    await account.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("status").filter({ hasText: "Settings saved:" }).waitFor();
    expect((await t.api.get("/api/v1/settings")).body.bluesky).toMatchObject({ remoteModeration: "post", appPasswordSet: true });
    // ticked: removed, and the page says the account cannot post
    await account.getByRole("checkbox", { name: "Remove the stored app password (the site's account can then no longer post)" }).check();
    await account.getByRole("button", { name: "Save settings" }).click();
    await expect
      .poll(async () => (await page.locator("dl.facts dt:text-is('Account') + dd").textContent())?.trim())
      .toBe("@sky-times.bsky.social (no app password yet: it cannot post)");
    expect((await t.api.get("/api/v1/settings")).body.bluesky).toMatchObject({ handle: "sky-times.bsky.social", appPasswordSet: false });
    expect(await account.getByRole("checkbox", { name: /Remove the stored app password/ }).count()).toBe(0);
    expect(await account.getByLabel("App password", { exact: true }).getAttribute("placeholder")).toBe("xxxx-xxxx-xxxx-xxxx");
    await expectAccessible(page, "the Bluesky screen, no app password");
    // the audit entry names the change without a password
    const audit = (await t.admin.get("/api/v1/audit?action=settings.update")).body.items;
    expect(JSON.stringify(audit[0].details)).not.toContain(APP_PASSWORD);
  });

  it("leads to the moderation queue, where a reply from Bluesky held for approval has its badge", async () => {
    const prisma = server.app.runtime.services.prisma;
    await prisma.reader.create({ data: { tenantId: t.tenantId, id: "at:did:plc:reader0001", name: "Ada" } });
    await prisma.comment.create({
      data: {
        id: "console-comment-1",
        tenantId: t.tenantId,
        discussionId: "first-post",
        authorId: "at:did:plc:reader0001",
        body: "Replied on Bluesky",
        status: "pending",
        kind: "bluesky",
      },
    });
    await page.goto(`${server.url}/console/#/bluesky`);
    const moderation = page.getByRole("region", { name: "Moderation", exact: true });
    await moderation.getByRole("link", { name: "Open the moderation queue (pending comments)" }).click();
    const card = page.getByRole("listitem", { name: "Comment by Ada in The first post" });
    await card.waitFor();
    const badge = card.locator(".remote-badge");
    expect(await badge.textContent()).toBe("bluesky");
    expect(await badge.getAttribute("title")).toBe("A reply on Bluesky");
    expect(await card.getByRole("button", { name: "Block domain" }).count()).toBe(0);
  });
});
