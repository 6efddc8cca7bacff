// Contract section 7 in a real browser: a page holding only a publishable key and a reader's
// identity assertion lists comments, posts, reacts, reads counts and streams (ticket + EventSource)
// from an origin the tenant allows; the same page on an origin nobody lists is refused by the
// browser itself (CORS), before the page can read anything.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { chromiumMissing, launchChromium, servePage } from "../support/chromium.js";

// Everything the page does, with nothing but what a frontend team has: the service URL, a pk_ key,
// an identity assertion from its own backend, and a discussion id.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>comments</title></head>
<body>
<ul id="live"></ul>
<script>
  window.run = async ({ api, key, identity, discussionId }) => {
    const headers = { "X-API-Key": key, "X-Service-Identity": identity };
    const json = { ...headers, "Content-Type": "application/json" };
    const out = {};
    try {
      const posted = await fetch(api + "/api/v1/discussions/" + discussionId + "/comments", {
        method: "POST", headers: json, body: JSON.stringify({ body: "posted from the page" }) });
      out.postStatus = posted.status;
      const comment = await posted.json();
      const list = await fetch(api + "/api/v1/discussions/" + discussionId + "/comments", { headers });
      out.listed = (await list.json()).items.map((c) => c.body);
      const reacted = await fetch(api + "/api/v1/comments/" + comment.id + "/reactions", {
        method: "POST", headers: json, body: JSON.stringify({ kind: "like" }) });
      out.reaction = await reacted.json();
      const counts = await fetch(api + "/api/v1/discussions/counts?ids=" + discussionId, { headers });
      out.counts = (await counts.json()).counts;
      const ticket = await fetch(api + "/api/v1/stream/ticket", {
        method: "POST", headers: json, body: JSON.stringify({ discussionId }) });
      const { ticket: t } = await ticket.json();
      await new Promise((resolve, reject) => {
        const es = new EventSource(api + "/api/v1/stream/" + discussionId + "?ticket=" + t);
        es.addEventListener("connected", () => resolve());
        es.addEventListener("comment_created", (e) => {
          const li = document.createElement("li");
          li.textContent = JSON.parse(e.data).data.comment.body;
          document.getElementById("live").append(li);
        });
        es.onerror = () => reject(new Error("stream failed"));
      });
      out.streaming = true;
    } catch (err) {
      out.error = String(err);
    }
    return out;
  };
</script>
</body></html>`;

let server: TestServer;
let t: TestTenant;
let browser: Browser | undefined;
let allowed: Awaited<ReturnType<typeof servePage>>;
let unlisted: Awaited<ReturnType<typeof servePage>>;

describe.skipIf(chromiumMissing)("a page with a publishable key, in headless Chromium", () => {
  beforeAll(async () => {
    allowed = await servePage(PAGE);
    unlisted = await servePage(PAGE);
    server = await startServer();
    t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [allowed.origin] })).status).toBe(200);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await allowed?.close();
    await unlisted?.close();
    await server?.stop();
  });

  it("lists, posts, reacts, counts and streams from an allowed origin; is refused by the browser on an unlisted one", async () => {
    const id = "pk-browser";
    expect((await t.api.put(`/api/v1/discussions/${id}`, { title: "Browser" })).status).toBe(201);
    const key = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const args = { api: server.url, key, identity: await t.identity("pat", { name: "Pat" }), discussionId: id };

    const page = await browser!.newPage();
    await page.goto(allowed.url);
    const result = await page.evaluate((a) => (window as any).run(a), args);
    expect(result).toEqual({
      postStatus: 201,
      listed: ["posted from the page"],
      reaction: { kind: "like", active: true, counts: { like: 1 } },
      counts: { [id]: 1 },
      streaming: true,
    });
    // the live stream shows what others write
    await t.as({ key: t.apiKey, identity: await t.identity("sam") }).post(`/api/v1/discussions/${id}/comments`, { body: "live reply" });
    await page.waitForSelector("li >> text=live reply", { timeout: 10_000 });
    await page.close();

    const refused = await browser!.newPage();
    await refused.goto(unlisted.url);
    const blocked = await refused.evaluate((a) => (window as any).run(a), args);
    expect(blocked).toEqual({ error: "TypeError: Failed to fetch" });
    await refused.close();
    // nothing was written from the unlisted origin
    expect((await t.api.get(`/api/v1/discussions/${id}/comments`)).body.items).toHaveLength(2);
  }, 60_000);
});
