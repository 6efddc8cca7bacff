// Every rendering of the XSS corpus (test/support/xss-corpus.ts) put into a page by innerHTML, as a
// thread would show a comment's bodyHtml, in headless Chromium: nothing runs. Each element then gets
// the events a reader would cause (pointer, focus, click; a click on a link with a safe scheme is
// not followed, one with any other scheme is), and the page waits for what loads. A payload calls
// alert() or sets window.__xss: no dialog opens and the flag stays unset. A control page with the
// raw vector shows that the harness sees a payload that does run. The sanitizer alone, fed the
// vectors as HTML, is shown too (what it would keep if the parser ever let raw HTML through).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { renderBody, sanitizeBodyHtml } from "../../src/lib/markdown.js";
import { FORMATTINGS, XSS_CORPUS } from "../support/xss-corpus.js";
import { chromiumMissing, chromiumRequired, launchChromium, servePage } from "../support/chromium.js";

let browser: Browser;
let served: Awaited<ReturnType<typeof servePage>>;

beforeAll(async () => {
  if (chromiumMissing && !chromiumRequired) return;
  [browser, served] = await Promise.all([
    launchChromium(),
    servePage("<!doctype html><html><head><title>t</title></head><body></body></html>"),
  ]);
});
afterAll(() => Promise.all([browser?.close(), served?.close()]));

interface Outcome {
  dialogs: string[];
  flag: unknown;
}

/** Puts each HTML into a div of its own on a fresh page, stirs every element, and reports what ran. */
async function show(htmls: readonly string[]): Promise<Outcome> {
  const page: Page = await browser.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  // nothing leaves the page: images and frames fail at once (their error events still fire)
  await page.route("**/*", (route) => (route.request().url() === served.url ? route.continue() : route.abort()));
  await page.goto(served.url);
  await page.evaluate((all) => {
    const safe = ["http:", "https:", "mailto:"];
    document.body.addEventListener(
      "click",
      (e) => {
        const a = (e.target as Element).closest("a");
        if (a?.href && safe.includes(new URL(a.href).protocol)) e.preventDefault();
      },
      true,
    );
    for (const html of all) {
      const div = document.createElement("div");
      div.innerHTML = html;
      document.body.append(div);
    }
    for (const el of document.body.querySelectorAll("*")) {
      for (const type of ["mouseover", "mouseenter", "mousemove", "mousedown", "mouseup", "focus", "focusin", "toggle", "animationstart"]) {
        el.dispatchEvent(new Event(type, { bubbles: true }));
      }
      (el as HTMLElement).click?.();
    }
  }, htmls);
  await page.waitForLoadState("load");
  await page.waitForTimeout(300);
  const flag = await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss);
  await page.close();
  return { dialogs, flag };
}

describe.skipIf(chromiumMissing && !chromiumRequired)("the XSS corpus in Chromium", () => {
  it("sees a payload that runs (the raw vector, unsanitized, on a control page)", async () => {
    const control = await show([
      "<img src=x onerror=window.__xss=1>",
      "<img src=x onerror=alert(1)>",
      '<a href="javascript:alert(2)">x</a>',
      "<b onmouseover=alert(3)>x</b>",
    ]);
    expect({ ...control, dialogs: control.dialogs.sort() }).toEqual({ dialogs: ["1", "2", "3"], flag: 1 });
  });

  it.each([...FORMATTINGS, "the sanitizer alone"] as const)("runs nothing of any rendering (%o)", async (formatting) => {
    const htmls = XSS_CORPUS.map((body) =>
      typeof formatting === "string" ? sanitizeBodyHtml(body, true) : renderBody(body, formatting).html,
    );
    const outcome = await show(htmls);
    if (outcome.dialogs.length || outcome.flag !== undefined) {
      // name the vectors that ran
      const ran: string[] = [];
      for (const [i, html] of htmls.entries()) {
        const one = await show([html]);
        if (one.dialogs.length || one.flag !== undefined) ran.push(`${XSS_CORPUS[i]} → ${html}`);
      }
      expect(ran).toEqual([]);
    }
    expect(outcome).toEqual({ dialogs: [], flag: undefined });
  });
});
