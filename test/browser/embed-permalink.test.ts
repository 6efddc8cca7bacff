// <engagement-thread>'s permalinks, Link action and Write/Preview tabs (contract section 18) in headless
// Chromium, on the strict-CSP host pages of test/browser/embed-thread.test.ts: a cold load of a page
// whose hash names a reply three levels deep under a top-level comment on page 7 of 300 opens the
// page that begins with that thread, the replies down to it placed, and shows it marked and in view;
// a reply email's link (commentLink, what the email templates link to) and the `comment-id`
// attribute do the same; a later hashchange moves there; an unknown comment leaves the thread as it
// is, with a polite status. Each comment's Link action copies its address (the Clipboard API, and
// the fallback when that refuses); the tabs show the service's rendering, the help opens, and a
// preview's refusal is shown where a post's is. Screenshots (tabs and help, a highlighted comment)
// go to a scratch folder.
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContextOptions, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commentLink } from "../../src/modules/email/templates.js";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, screenshot } from "../support/chromium.js";
import { hostPages, type HostPage } from "../support/embed.js";

const SHOTS = join(tmpdir(), "engagement-permalink-shots");
const VIEWPORT = { width: 900, height: 900 };

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe.skipIf(chromiumMissing)("<engagement-thread> permalinks, Link action and Write/Preview tabs", () => {
  let browser: Browser | undefined;
  let host: HostPage;
  const violations: string[] = [];

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
    expect(violations).toEqual([]);
  });

  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const p = await browser!.newPage({ viewport: VIEWPORT, ...options });
    p.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return p;
  }

  const thread = (p: Page) => p.locator("engagement-thread");
  const article = (p: Page, id: string) => thread(p).locator(`article[data-comment-id="${id}"]`);
  const topLevelIds = (p: Page) =>
    thread(p)
      .locator("ol[part=comments] > li > article")
      .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.commentId));
  const highlighted = (p: Page) => thread(p).locator("article[part~=highlighted]");

  /** Whether the whole of an element is inside the viewport. */
  async function inView(l: Locator): Promise<boolean> {
    const box = await l.boundingBox();
    return !!box && box.y >= 0 && box.y + box.height <= VIEWPORT.height && box.height > 0;
  }

  /** The comments a comment's element hangs from, its top-level comment first, itself last. */
  const chainOf = (p: Page, id: string) =>
    p.evaluate((id) => {
      const root = document.querySelector("engagement-thread")!.shadowRoot!;
      const chain: string[] = [];
      let li = root.getElementById(`comment-${id}`)?.closest("li") ?? null;
      while (li) {
        chain.unshift((li.querySelector(":scope > article") as HTMLElement).dataset.commentId ?? "");
        li = li.parentElement?.closest("li") ?? null;
      }
      return chain;
    }, id);

  describe("permalinks", () => {
    const d = "permalink-300";
    const top = (i: number) => `cmt_pl_${String(i).padStart(3, "0")}`;
    // newest first, 20 a page: the top-level comment at index 130 of the list is on page 7
    const root = top(169);
    let replies: string[] = [];
    let deep = "";
    let target = "";

    beforeAll(async () => {
      const prisma = server.app.runtime.services.prisma;
      const now = Date.now();
      await prisma.discussion.create({ data: { tenantId: t.tenantId, id: d, title: "Three hundred", commentCount: 300 } });
      await prisma.reader.create({ data: { tenantId: t.tenantId, id: "pl-bulk", name: "Bulk Reader" } });
      await prisma.comment.createMany({
        data: Array.from({ length: 300 }, (_, i) => ({
          id: top(i),
          tenantId: t.tenantId,
          discussionId: d,
          authorId: "pl-bulk",
          body: `Top-level comment ${i}`,
          status: "approved" as const,
          createdAt: new Date(now - (300 - i) * 60_000),
          publishedAt: new Date(now - (300 - i) * 60_000),
        })),
      });
      // eight replies to the root (the thread shows its first five), the seventh answered twice down
      const bob = await t.reader("pl-bob", { name: "Bob" });
      const cleo = await t.reader("pl-cleo", { name: "Cleo" });
      replies = [];
      for (let i = 1; i <= 8; i++) {
        const r = await bob.post(`/api/v1/discussions/${d}/comments`, { body: `Reply ${i} to the root`, parentId: root });
        expect(r.status).toBe(201);
        replies.push(r.body.id as string);
      }
      deep = (await cleo.post(`/api/v1/discussions/${d}/comments`, { body: "An answer to reply 7", parentId: replies[6] })).body.id;
      target = (await bob.post(`/api/v1/discussions/${d}/comments`, { body: "The reply the link is for", parentId: deep })).body.id;
      expect(target).toMatch(/^cmt_/);
      // the root is on page 7 of the element's list (top-level, newest first, 20 a page)
      let cursor: string | null = null;
      let pageOfRoot = 0;
      for (let n = 1; n <= 8 && !pageOfRoot; n++) {
        const page: any = await t.api.get(`/api/v1/discussions/${d}/comments?topLevel=true${cursor ? `&cursor=${cursor}` : ""}`);
        if (page.body.items.some((c: { id: string }) => c.id === root)) pageOfRoot = n;
        cursor = page.body.nextCursor;
      }
      expect(pageOfRoot).toBe(7);
    });

    it("a cold load with #comment-<id> of a reply deep under page 7 shows it marked and in view, its thread placed", async () => {
      const p = await newPage();
      await p.goto(`${host.url(d)}#comment-${target}`);
      await highlighted(p).waitFor();
      expect(await highlighted(p).getAttribute("data-comment-id")).toBe(target);
      expect((await highlighted(p).getAttribute("part"))?.split(" ")).toEqual(["comment", "highlighted"]);
      expect(await highlighted(p).getAttribute("id")).toBe(`comment-${target}`);
      await expect.poll(() => inView(highlighted(p))).toBe(true);
      // and seen by the page as in view (an IntersectionObserver on the element itself)
      const ratio = await highlighted(p).evaluate(
        (el) =>
          new Promise<number>((resolve) =>
            new IntersectionObserver(([e], o) => (o.disconnect(), resolve(e!.intersectionRatio))).observe(el),
          ),
      );
      expect(ratio).toBe(1);
      // a visible mark, not only a part name
      const [marked, plain] = await Promise.all([
        highlighted(p).evaluate((el) => getComputedStyle(el).backgroundColor),
        article(p, replies[0]!).evaluate((el) => getComputedStyle(el).backgroundColor),
      ]);
      expect(marked).not.toBe(plain);
      // the page that begins with the thread; the replies down to the target under their parents
      const ids = await topLevelIds(p);
      expect(ids[0]).toBe(root);
      expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => top(169 - i)));
      expect(await chainOf(p, target)).toEqual([root, replies[6], deep, target]);
      // the root's first five replies, then the seventh; the other two wait behind the button, in order once shown
      const rootReplies = () =>
        thread(p)
          .locator(`li:has(> article[data-comment-id="${root}"]) > ol > li > article`)
          .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.commentId));
      expect(await rootReplies()).toEqual([...replies.slice(0, 5), replies[6]]);
      await screenshot(p, { path: join(SHOTS, "highlighted.png") });
      await thread(p).getByRole("button", { name: "Show 2 more replies" }).click();
      await expect.poll(rootReplies).toEqual(replies);
      // Load more goes on after the page; the start is a button away
      await thread(p).getByRole("button", { name: "Load more comments" }).click();
      await expect.poll(async () => (await topLevelIds(p)).length).toBe(40);
      expect((await topLevelIds(p))[20]).toBe(top(149));
      await thread(p).getByRole("button", { name: "Show comments from the start" }).click();
      await expect.poll(async () => (await topLevelIds(p))[0]).toBe(top(299));
      await expect(thread(p).getByRole("button", { name: "Show comments from the start" }).count()).resolves.toBe(0);
      // a later hash: the element moves there, loading its page
      await p.evaluate((id) => (location.hash = `#comment-${id}`), top(0));
      await expect.poll(() => highlighted(p).getAttribute("data-comment-id")).toBe(top(0));
      await expect.poll(() => inView(highlighted(p))).toBe(true);
      expect((await topLevelIds(p))[0]).toBe(top(0));
      // a hash naming a comment the thread shows marks it without a load
      await thread(p).getByRole("button", { name: "Show comments from the start" }).click();
      await expect.poll(async () => (await topLevelIds(p))[0]).toBe(top(299));
      const contexts: string[] = [];
      p.on("request", (r) => {
        if (r.postData()?.includes("EmbedContext")) contexts.push(r.url());
      });
      await p.evaluate((id) => (location.hash = `#comment-${id}`), top(290));
      await expect.poll(() => highlighted(p).getAttribute("data-comment-id")).toBe(top(290));
      expect((await topLevelIds(p))[0]).toBe(top(299));
      expect(contexts).toEqual([]);
      await p.close();
    });

    it("a reply email's link opens at that reply; so does the comment-id attribute", async () => {
      const url = host.url(d);
      expect([200, 201]).toContain((await t.api.put(`/api/v1/discussions/${d}`, { title: "Three hundred", url })).status);
      const mailed = commentLink(url, deep);
      expect(mailed).toBe(`${url}#comment-${deep}`);
      const p = await newPage();
      await p.goto(mailed!);
      await expect.poll(() => highlighted(p).getAttribute("data-comment-id")).toBe(deep);
      await expect.poll(() => inView(highlighted(p))).toBe(true);
      expect(await chainOf(p, deep)).toEqual([root, replies[6], deep]);
      await p.close();

      const q = await newPage();
      await q.goto(host.url(d, `comment-id="${replies[7]}"`));
      await expect.poll(() => highlighted(q).getAttribute("data-comment-id")).toBe(replies[7]);
      await expect.poll(() => inView(highlighted(q))).toBe(true);
      expect(await chainOf(q, replies[7]!)).toEqual([root, replies[7]]);
      await q.close();
    });

    it("a comment that is not there: the thread as usual, and a polite status saying so", async () => {
      const p = await newPage();
      await p.goto(`${host.url(d)}#comment-cmt_not_there`);
      const status = thread(p).getByRole("status").filter({ hasText: "The comment this link points to is not available." });
      await status.waitFor();
      expect((await topLevelIds(p))[0]).toBe(top(299));
      await expect(highlighted(p).count()).resolves.toBe(0);
      await expect(thread(p).getByRole("button", { name: "Show comments from the start" }).count()).resolves.toBe(0);
      // another page's anchor is not a comment: no status
      const q = await newPage();
      await q.goto(`${host.url(d)}#comments`);
      await thread(q).locator("ol[part=comments] > li").first().waitFor();
      await expect(thread(q).getByText("The comment this link points to is not available.").count()).resolves.toBe(0);
      await p.close();
      await q.close();
    });
  });

  describe("the Link action", () => {
    const d = "link-1";
    let olga = "";

    beforeAll(async () => {
      olga = (await (await t.reader("olga", { name: "Olga" })).post(`/api/v1/discussions/${d}/comments`, { body: "Olga's comment" })).body
        .id;
    });

    async function copied(p: Page, id: string): Promise<string> {
      await article(p, id).getByRole("button", { name: "Copy link to comment" }).click();
      await thread(p).getByRole("status").filter({ hasText: "Link copied" }).waitFor();
      return p.evaluate(() => navigator.clipboard.readText());
    }

    it("copies the page's address without its hash, or the discussion-url attribute's, with #comment-<id>, and says so", async () => {
      const permissions = ["clipboard-read", "clipboard-write"];
      const p = await newPage({ permissions });
      await p.goto(`${host.url(d)}#somewhere`);
      await article(p, olga).waitFor();
      // its visible text is "Link"; its name says what it does
      expect((await article(p, olga).locator("[data-action=link]").textContent())?.trim()).toBe("Link");
      expect(await copied(p, olga)).toBe(`${host.url(d)}#comment-${olga}`);
      // the copied address opens at the comment
      const back = await newPage();
      await back.goto(await p.evaluate(() => navigator.clipboard.readText()));
      await expect.poll(() => highlighted(back).getAttribute("data-comment-id")).toBe(olga);
      await back.close();
      await p.close();

      const q = await newPage({ permissions });
      await q.goto(host.url(d, 'discussion-url="https://blog.example/posts/link-1#intro"'));
      await article(q, olga).waitFor();
      expect(await copied(q, olga)).toBe(`https://blog.example/posts/link-1#comment-${olga}`);
      await q.close();

      // where the Clipboard API refuses, the fallback copies all the same
      const r = await newPage({ permissions });
      await r.addInitScript(() => {
        navigator.clipboard.writeText = () => Promise.reject(new DOMException("refused", "NotAllowedError"));
      });
      await r.goto(host.url(d));
      await article(r, olga).waitFor();
      expect(await copied(r, olga)).toBe(`${host.url(d)}#comment-${olga}`);
      await r.close();
    });
  });

  describe("Write/Preview tabs", () => {
    const d = "format-1";

    it("show the service's rendering of the draft, with a formatting help, on new comments, replies and edits", async () => {
      const olga = (await (await t.reader("olga", { name: "Olga" })).post(`/api/v1/discussions/${d}/comments`, { body: "Olga's" })).body
        .id as string;
      const p = await newPage();
      await p.goto(host.url(d));
      await p.evaluate(
        async (tok) => {
          (document.querySelector("engagement-thread") as HTMLElement & { identity: string }).identity = tok;
        },
        await t.identity("wanda", { name: "Wanda" }),
      );
      await article(p, olga).waitFor();
      const composer = thread(p).locator("form[part=composer]").first();
      const write = composer.getByRole("tab", { name: "Write" });
      const preview = composer.getByRole("tab", { name: "Preview" });
      await expect(composer.getByRole("tablist").count()).resolves.toBe(1);
      expect([await write.getAttribute("aria-selected"), await preview.getAttribute("aria-selected")]).toEqual(["true", "false"]);
      const draft = "Some **bold** words, _leaning_ ones and `code`\n\n> a quote\n\n- one\n- two";
      await composer.getByRole("textbox", { name: "Write a comment" }).fill(draft);
      await preview.click();
      const panel = composer.getByRole("tabpanel", { name: "Preview" });
      await panel.locator("strong", { hasText: "bold" }).waitFor();
      await expect(panel.locator("em", { hasText: "leaning" }).count()).resolves.toBe(1);
      await expect(panel.locator("code", { hasText: "code" }).count()).resolves.toBe(1);
      await expect(panel.locator("blockquote", { hasText: "a quote" }).count()).resolves.toBe(1);
      await expect(panel.locator("li").allTextContents()).resolves.toEqual(["one", "two"]);
      expect(await panel.textContent()).not.toContain("**");
      expect(await preview.getAttribute("aria-selected")).toBe("true");
      expect(await panel.getAttribute("aria-labelledby")).toBe(await preview.getAttribute("id"));
      expect(await preview.getAttribute("aria-controls")).toBe(await panel.getAttribute("id"));
      await expect(composer.getByRole("textbox", { name: "Write a comment" }).isVisible()).resolves.toBe(false);
      // the help: a disclosure
      const help = composer.getByRole("button", { name: "Formatting help" });
      expect(await help.getAttribute("aria-expanded")).toBe("false");
      await help.click();
      expect(await help.getAttribute("aria-expanded")).toBe("true");
      const list = composer.locator(`#${await help.getAttribute("aria-controls")}`);
      await expect(list.isVisible()).resolves.toBe(true);
      const helpText = await list.textContent();
      for (const form of ["**bold**", "_italic_", "`code`", "> a quote", "- a list item", "[a link](https://example.com)"]) {
        expect(helpText).toContain(form);
      }
      await screenshot(p, { path: join(SHOTS, "tabs-preview-help.png") });
      // keys: ← to Write (focused and selected), End to Preview
      await preview.focus();
      await p.keyboard.press("ArrowLeft");
      await expect.poll(() => write.getAttribute("aria-selected")).toBe("true");
      expect(await p.evaluate(() => document.querySelector("engagement-thread")!.shadowRoot!.activeElement?.textContent?.trim())).toBe(
        "Write",
      );
      await expect(composer.getByRole("textbox", { name: "Write a comment" }).inputValue()).resolves.toBe(draft);
      await p.keyboard.press("End");
      await expect.poll(() => preview.getAttribute("aria-selected")).toBe("true");
      await help.click();
      await expect(list.isVisible()).resolves.toBe(false);
      // posting from the Preview tab posts the draft and goes back to writing
      await composer.getByRole("button", { name: "Post comment" }).click();
      await thread(p).locator("article", { hasText: "a quote" }).waitFor();
      await expect.poll(() => write.getAttribute("aria-selected")).toBe("true");
      // the comment may reach the thread by the stream before the POST's answer empties the draft
      await expect.poll(() => composer.getByRole("textbox", { name: "Write a comment" }).inputValue()).toBe("");
      await preview.click();
      await panel.getByText("Nothing to preview yet.").waitFor();
      await write.click();

      // a reply's form has its own tabs
      await article(p, olga).getByRole("button", { name: "Reply" }).click();
      // (found by its field's id: a form in its Preview tab hides its text field from the accessibility tree)
      const replyForm = thread(p).locator("form[part=composer]", { has: p.locator(`textarea[id="field-reply:${olga}"]`) });
      await replyForm.getByRole("textbox", { name: "Reply to Olga" }).fill("~~gone~~ kept");
      await replyForm.getByRole("tab", { name: "Preview" }).click();
      await replyForm.getByRole("tabpanel", { name: "Preview" }).locator("s", { hasText: "gone" }).waitFor();
      await replyForm.getByRole("button", { name: "Cancel" }).click();

      // and so has an edit
      const mine = thread(p).locator("article", { hasText: "a quote" });
      await mine.getByRole("button", { name: "Edit" }).click();
      const editForm = thread(p).locator("form[part=composer]", { has: p.locator('textarea[id^="field-edit:"]') });
      await editForm.getByRole("textbox", { name: "Edit your comment" }).fill("Now with a [link](https://example.com/x)");
      await editForm.getByRole("tab", { name: "Preview" }).click();
      const link = editForm.getByRole("tabpanel", { name: "Preview" }).getByRole("link", { name: "link" });
      await link.waitFor();
      expect(await link.getAttribute("href")).toBe("https://example.com/x");
      expect(await link.getAttribute("rel")).toBe("nofollow ugc noopener noreferrer");
      await editForm.getByRole("button", { name: "Cancel" }).click();

      // a preview the service refuses says so where a post's refusal is, in the same words
      expect((await t.api.patch("/api/v1/settings", { maxBodyLength: 20 })).status).toBe(200);
      try {
        await composer.getByRole("textbox", { name: "Write a comment" }).fill("This draft is longer than twenty");
        await preview.click();
        const refusal = composer.getByRole("alert");
        await refusal.waitFor();
        const said = await refusal.textContent();
        expect(said).toContain("at most 20 characters");
        await write.click();
        await expect.poll(() => refusal.count()).toBe(0);
        await composer.getByRole("button", { name: "Post comment" }).click();
        await refusal.waitFor();
        expect(await refusal.textContent()).toBe(said);
      } finally {
        await t.api.patch("/api/v1/settings", { maxBodyLength: 10_000 });
      }
      await p.close();
    });

    it("a comment shows the service's rendering of its body (bodyHtml): Markdown formatted, raw HTML as text", async () => {
      const rhea = await t.reader("rhea", { name: "Rhea" });
      const rich = (await rhea.post(`/api/v1/discussions/${d}/comments`, { body: "Rhea's **rich** one" })).body.id as string;
      const raw = (await rhea.post(`/api/v1/discussions/${d}/comments`, { body: "<img src=x onerror=alert(1)> _raw_" })).body.id as string;
      const p = await newPage();
      await p.goto(host.url(d));
      const body = article(p, rich).locator("[part=body]");
      await body.locator("strong", { hasText: "rich" }).waitFor();
      expect(await body.textContent()).toBe("Rhea's rich one");
      const shown = article(p, raw).locator("[part=body]");
      await shown.locator("em", { hasText: "raw" }).waitFor();
      expect(await shown.locator("img").count()).toBe(0);
      expect(await shown.textContent()).toBe("<img src=x onerror=alert(1)> raw");
      await p.close();
    });
  });
});
