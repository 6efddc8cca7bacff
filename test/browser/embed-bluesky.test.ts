// Replies brought in from Bluesky (contract section 30) in <engagement-thread> in headless Chromium on a
// host page of another origin with a strict CSP: each says "on Bluesky" after its date, linking to the
// discussion's post there (a new tab), in the element's language; a local comment says nothing of the
// kind. The replies are written as the poller writes them (postComment with a Bluesky reply's URI, as
// src/modules/bluesky/engine/sync.ts does; reading them from a real network is test/bluesky.test.ts).
// axe-core finds nothing. Screenshot: docs/embed/ with UPDATE_SCREENSHOTS=1, else a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, screenshot } from "../support/chromium.js";
import { expectAccessible } from "../support/console-page.js";
import { embedBrowser, type EmbedBrowser } from "../support/embed.js";
import { contextForTenant } from "../../src/context/request.js";
import { postComment } from "../../src/modules/comments/write.js";
import { sha256 } from "../../src/lib/sha256.js";

const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join("docs", "embed") : join(tmpdir(), "engagement-embed-shots");
const DID = "did:plc:abcdefghijklmnopqrstuvwx";
const POST = `at://${DID}/app.bsky.feed.post/3lpost`;
const POST_URL = `https://bsky.app/profile/${DID}/post/3lpost`;

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

/** a reply from Bluesky as the poller writes it */
async function blueskyReply(discussionId: string, did: string, name: string, body: string, rkey: string): Promise<void> {
  const { services } = server.app.runtime;
  const tenant = await services.prisma.tenant.findUniqueOrThrow({ where: { id: t.tenantId } });
  const ctx = contextForTenant(
    services,
    tenant,
    { kind: "key", keyId: "bluesky", capabilities: new Set() },
    { id: `at:${did}`, name, avatarUrl: null },
  );
  const uri = `at://${did}/app.bsky.feed.post/${rkey}`;
  await postComment(
    ctx,
    discussionId,
    { body },
    { moderation: "post", bluesky: { uri, uriHash: sha256(uri, "hex"), createdAt: new Date() } },
  );
}

describe.skipIf(chromiumMissing)("replies from Bluesky in <engagement-thread>", () => {
  let embed: EmbedBrowser | undefined;

  beforeAll(async () => {
    embed = await embedBrowser(server.url, t);
    // the site has Bluesky on: its discussions' posts are shown
    expect((await t.api.patch("/api/v1/settings", { bluesky: { enabled: true } })).status).toBe(200);
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await embed?.close();
    expect(embed?.violations).toEqual([]);
  });

  async function open(discussionId: string, attrs = ""): Promise<Page> {
    const p = await embed!.newPage();
    await p.goto(embed!.host.url(discussionId, attrs));
    await p.locator("engagement-thread ol[part=comments]").waitFor({ state: "attached" });
    return p;
  }

  const article = (p: Page, text: string) => p.locator("engagement-thread article", { has: p.locator(".body", { hasText: text }) });

  it("says a reply is on Bluesky, linking to the post there; a local comment says nothing", async () => {
    const d = "bsky-embed-1";
    await t.api.put(`/api/v1/discussions/${d}`, { title: "An article", url: `${embed!.host.origin}/a` });
    await server.app.runtime.services.prisma.blueskyLink.create({
      data: {
        tenantId: t.tenantId,
        discussionId: d,
        uri: POST,
        posted: true,
        createdAt: new Date(),
        nextPollAt: new Date(Date.now() + 3_600_000),
      },
    });
    await blueskyReply(d, DID, "Carol", "Great read, thanks!", "3lreply1");
    const local = await t.reader("ann", { name: "Ann" });
    await local.post(`/api/v1/discussions/${d}/comments`, { body: "Written here" });

    const p = await open(d);
    const link = article(p, "Great read").getByRole("link", { name: "on Bluesky" });
    await link.waitFor();
    await expect(link.getAttribute("href")).resolves.toBe(POST_URL);
    await expect(link.getAttribute("target")).resolves.toBe("_blank");
    await expect(link.getAttribute("rel")).resolves.toContain("noopener");
    await expect(article(p, "Written here").getByText("on Bluesky").count()).resolves.toBe(0);
    await expectAccessible(p, "engagement-thread");
    await screenshot(p.locator("engagement-thread"), { path: join(SHOTS, "thread-bluesky.png") });
    await p.close();

    // in the element's language
    const de = await open(d, 'lang="de"');
    await article(de, "Great read").getByRole("link", { name: "auf Bluesky" }).waitFor();
    await de.close();
  });

  it("says it of a reply that comes in while the page is open", async () => {
    const d = "bsky-embed-2";
    await t.api.put(`/api/v1/discussions/${d}`, { title: "Another", url: `${embed!.host.origin}/b` });
    await server.app.runtime.services.prisma.blueskyLink.create({
      data: {
        tenantId: t.tenantId,
        discussionId: d,
        uri: POST,
        posted: false,
        createdAt: new Date(),
        nextPollAt: new Date(Date.now() + 3_600_000),
      },
    });
    const p = await open(d);
    await p.locator("engagement-thread").getByText("No comments yet").waitFor();
    await blueskyReply(d, DID, "Dave", "Arrived live", "3lreply2");
    await p.locator("engagement-thread").getByRole("button", { name: "Show 1 new comment" }).click();
    await article(p, "Arrived live").getByRole("link", { name: "on Bluesky" }).waitFor();
    await p.close();
  });
});
