// The console's Settings › Import and export (contract sections 16 and 27), in headless Chromium: an
// owner uploads a Disqus export, follows it to its summary (with the bad record and its position), sees
// the comments arrive, and downloads the NDJSON export; every format is offered, an isso database
// asks for the site's address and its thread is found by its page's URL; the list of imports shows
// those made over the API and by the CLI too; axe-core at 1280 and 390 px. A moderator is not shown
// the screen. Screenshot: docs/console/settings-portability.png with UPDATE_SCREENSHOTS=1.
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing } from "../support/chromium.js";
import { expectAccessible, openConsole, operatorLink, overflow, settled, shoot } from "../support/console-page.js";
import { disqusXml } from "../support/import-files.js";
import { MORE } from "../support/import-readings.js";
import { importFinished, postImport } from "../support/imports.js";
import { importWith } from "../../src/cli/portability.js";
import { IMPORT_FORMATS } from "../../src/modules/portability/source.js";

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

  it("offers every format; an isso database with the site's address; lists the imports made over the API and by the CLI", async () => {
    // one over the API (a key), one by the CLI (on the server's own services, as through its control socket)
    const viaApi = await importFinished(
      t,
      await postImport(server, t, "json", JSON.stringify([{ type: "discussion", id: "from-api", title: "From the API" }])),
    );
    expect(viaApi).toMatchObject({ state: "succeeded", via: "api" });
    const viaCli = await importWith(
      server.app.runtime.services,
      { tenant: t.tenantId, format: "github", idFrom: "identifier", onError: "skip", keepEmails: false, site: null, bytesTotal: null },
      Readable.from([await readFile(`${MORE}github/piotrmurach-github-issue-61-comments.json`)]),
    );
    expect(viaCli.summary.state).toBe("succeeded");

    await page.goto(`${server.url}/console/#/settings/portability`);
    await page.reload(); // the screen afresh, without the last test's import
    await page.getByRole("heading", { level: 1, name: "Import and export" }).waitFor();
    const offered = await page
      .getByLabel("Format")
      .locator("option")
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(offered.sort()).toEqual([...IMPORT_FORMATS].sort());
    await page.getByLabel("Format").selectOption("isso");
    const site = page.getByLabel("Site address (required)");
    await site.waitFor();
    expect(await site.getAttribute("required")).not.toBeNull();
    await page.getByLabel("Export file").setInputFiles({
      name: "comments.db",
      mimeType: "application/octet-stream",
      buffer: await readFile(`${MORE}isso/isso-radiot-576.db`),
    });
    // without the address the browser holds the form back
    await page.getByRole("button", { name: "Import", exact: true }).click();
    expect(await site.evaluate((el) => (el as HTMLInputElement).validity.valueMissing)).toBe(true);
    await site.fill("https://radio-t.com");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const progress = page.getByRole("region", { name: "Import progress" });
    await progress.getByText("Import finished.").waitFor();
    const found = await t.api.get(`/api/v1/discussions/lookup?url=${encodeURIComponent("https://radio-t.com/p/2017/12/16/podcast-576/")}`);
    expect(found.body).toMatchObject({ commentCount: 56 });

    // the list: newest first, each with its format, how it was made and its counts
    const list = page.getByRole("region", { name: "Imports" });
    await list.getByText("isso database (SQLite)").waitFor();
    await settled(page);
    const rows = await list
      .locator("tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].slice(1, 6).map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim())),
      );
    expect(rows.slice(0, 3)).toEqual([
      ["isso database (SQLite)https://radio-t.com", "Console", "Finished", "1", "57"],
      ["GitHub comments: utterances, giscus (JSON)", "CLI", "Finished", "1", "7"],
      ["Generic JSON (the documented import format)", "API", "Finished", "1", "0"],
    ]);
    await expectAccessible(page, "Settings › Import and export, with its imports");
    expect(await overflow(page)).toEqual([0]);
    await shoot(page, "settings-portability-imports");
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
