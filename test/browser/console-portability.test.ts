// The console's Settings › Import and export (contract section 16), in headless Chromium: an owner
// uploads a Disqus export, follows it to its summary (with the bad record and its position), sees
// the comments arrive, and downloads the NDJSON export; axe-core at 1280 and 390 px. A moderator is
// not shown the screen. Screenshot: docs/console/settings-portability.png with UPDATE_SCREENSHOTS=1.
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, operatorLink, overflow, settled, shoot } from "../support/console-page.js";
import { disqusXml } from "../support/import-files.js";

const OWNER = "portability.owner@example.com";
const MODERATOR = "portability.moderator@example.com";

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let page: Page;
const link = (email: string) => operatorLink(server, t.tenantId, email);

describe.skipIf(chromiumMissing)("the console's import and export", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server);
    ({ browser, page } = await openConsole(server, t, {
      as: { email: OWNER, role: "owner" },
      operators: { [MODERATOR]: "moderator" },
      context: { acceptDownloads: true },
    }));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("imports a Disqus file with live progress and a summary, and downloads the export", async () => {
    const xml = disqusXml(
      [
        { id: "11", identifier: "garden-party", link: "https://blog.example/garden-party", title: "The garden party" },
        { id: "12", identifier: "new-park", link: "https://blog.example/new-park", title: "The new park" },
      ],
      [
        {
          id: "101",
          thread: "11",
          message: "<p>Lovely afternoon.</p>",
          author: { name: "Ann", username: "ann", email: "ann@blog.example" },
        },
        { id: "102", thread: "11", parent: "101", message: "<p>It was!</p>", author: { name: "Bo", username: "bo" } },
        { id: "103", thread: "12", message: "<p>Finally some green.</p>", author: { name: "Cy", username: "cy" } },
        { id: "104", thread: "99", message: "<p>A thread nobody knows.</p>", author: { name: "Dee", username: "dee" } },
      ],
    );
    await page.goto(`${server.url}/console/#/settings`);
    await page.getByRole("navigation", { name: "Settings views" }).getByRole("link", { name: "Import and export" }).click();
    await page.getByRole("heading", { level: 1, name: "Import and export" }).waitFor();
    await page.getByLabel("Format").selectOption("disqus");
    await page.getByLabel("Export file").setInputFiles({ name: "disqus.xml", mimeType: "text/xml", buffer: Buffer.from(xml) });
    await page.getByRole("checkbox", { name: /Keep authors' email addresses/ }).check();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const progress = page.getByRole("region", { name: "Import progress" });
    await progress.getByText("Import finished.").waitFor();
    await settled(page);
    const summary = await progress.locator("dl.summary").innerText();
    expect(summary.replace(/\s+/g, " ")).toContain("Discussions 2 Comments 3 Readers 3");
    await expect(progress.getByRole("listitem").count()).resolves.toBe(1);
    expect(await progress.getByRole("listitem").innerText()).toMatch(/99/);
    // the comments are there, threaded
    const park = await t.api.get("/api/v1/discussions/garden-party/comments?topLevel=true");
    expect(park.body.items.map((c: { replyCount: number }) => c.replyCount)).toEqual([1]);
    // the box was ticked: Ann's address is her reader's
    const ann = await server.app.runtime.services.prisma.reader.findFirst({ where: { tenantId: t.tenantId, id: "disqus:ann" } });
    expect(ann?.email).toBe("ann@blog.example");
    await expectAccessible(page, "Settings › Import and export");
    expect(await overflow(page)).toEqual([0]);
    await shoot(page, "settings-portability");
    // the export downloads as NDJSON, our own format, with what was imported
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download export (NDJSON)" }).click(),
    ]);
    const lines = (await readFile((await download.path())!, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]!.type).toBe("export");
    expect(lines.filter((l) => l.type === "comment")).toHaveLength(3);
    // at 390 px the screen fits
    const narrow = await browser!.newPage({ viewport: { width: 390, height: 844 } });
    await narrow.goto(link(OWNER));
    await narrow.getByRole("button", { name: "Sign out" }).waitFor();
    await narrow.goto(`${server.url}/console/#/settings/portability`);
    await narrow.getByRole("heading", { level: 1, name: "Import and export" }).waitFor();
    await expectAccessible(narrow, "Settings › Import and export at 390 px");
    expect(await overflow(narrow)).toEqual([0]);
    await narrow.close();
  });

  it("does not show a moderator the screen", async () => {
    const mod = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    await mod.goto(link(MODERATOR));
    await mod.getByRole("button", { name: "Sign out" }).waitFor();
    await mod.goto(`${server.url}/console/#/settings/portability`);
    await settled(mod);
    expect(await mod.getByRole("heading", { level: 1, name: "Import and export" }).count()).toBe(0);
    expect(await mod.getByRole("button", { name: "Import", exact: true }).count()).toBe(0);
    await mod.close();
  });
});
