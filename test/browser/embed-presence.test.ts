// "n reading" in <engagement-thread> (contract section 19): the element shows the discussion's
// readers from the stream's `event: presence` once another stream is open, in the page's language,
// and hides it again when the other reader leaves (a lone reader sees nothing). Short presence
// intervals on the server. Screenshot in a scratch folder (engagement-embed-shots/presence.png).
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";
import { hostPages, type HostPage } from "../support/embed.js";
import { openSse } from "../support/sse.js";

const SHOTS = join(tmpdir(), "engagement-embed-shots");

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer({}, { stream: { presenceIntervalMs: 300, presenceRefreshMs: 300, presenceTtlMs: 1_500 } });
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("<engagement-thread> presence", () => {
  let browser: Browser | undefined;
  let host: HostPage;

  beforeAll(async () => {
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key as string;
    host = await hostPages(server.url, key);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [host.origin] })).status).toBe(200);
    browser = await launchChromium();
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  async function open(discussionId: string, attrs = ""): Promise<Page> {
    const p = await browser!.newPage({ viewport: { width: 900, height: 600 } });
    await p.goto(host.url(discussionId, attrs));
    await p.locator("engagement-thread ol[part=comments]").waitFor({ state: "attached" });
    return p;
  }

  it("shows “n reading” while another stream of the discussion is open, and hides it for a lone reader", async () => {
    const id = "presence-1";
    await t.api.put(`/api/v1/discussions/${id}`, { title: "An article" });
    await t.api.post(`/api/v1/discussions/${id}/comments`, { body: "First!" }, { identity: await t.identity("ada", { name: "Ada" }) });
    const page = await open(id);
    const reading = page.locator("engagement-thread [part=reading]");
    // alone: nothing shown
    await page.waitForTimeout(1_000);
    expect(await reading.count()).toBe(0);

    // another reader's page opens: both show 2
    const other = await open(id);
    await reading.waitFor();
    expect(await reading.textContent()).toBe("2 reading");
    await other.locator("engagement-thread [part=reading]").waitFor();
    // a third stream (a server-side client): 3
    const sse = openSse(`${server.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey });
    await expect.poll(() => reading.textContent(), { timeout: 10_000 }).toBe("3 reading");
    await screenshot(page, { path: join(SHOTS, "presence.png") });

    sse.close();
    await other.close();
    await reading.waitFor({ state: "detached", timeout: 10_000 });
    await page.close();
  });

  it("says it in the element's language", async () => {
    const id = "presence-2";
    await t.api.put(`/api/v1/discussions/${id}`, {});
    const page = await open(id, 'lang="de"');
    const sse = openSse(`${server.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey });
    const reading = page.locator("engagement-thread [part=reading]");
    await expect.poll(() => reading.textContent(), { timeout: 10_000 }).toBe("2 lesen gerade");
    sse.close();
    await page.close();
  });
});
