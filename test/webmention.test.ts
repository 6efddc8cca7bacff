// Webmention (contract section 24): POST /webmention answers 202 and the webhook worker verifies it
// later, fetching a real source page from a loopback HTTP server of this test (allowed by the SSRF
// guard's development flag, ALLOW_HTTP_WEBHOOKS, which every test server sets): its h-entry becomes a
// comment of kind mention by reader wm:<origin> (author, photo, content, published), a re-send updates
// that comment, a 410 removes it; a page without the link, too large or too slow makes no comment;
// a blocked domain, an unknown target or a bad form is refused with the spec's 400s. The worker takes
// jobs of the whole database: the file has a database of its own.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
let source: Server;
let origin: string;
/** what each path of the source server answers now */
const pages = new Map<string, { status?: number; html?: string; delayMs?: number; bytes?: number }>();

const TARGET = "https://blog.example/posts/webmention";

const entry = (content: string, link = TARGET) => `<!doctype html><html><body>
<article class="h-entry">
  <a class="p-author h-card" href="/"><img class="u-photo" src="https://img.example/ada.png" alt=""><span class="p-name">Ada Lovelace</span></a>
  <div class="e-content">${content} <a class="u-in-reply-to" href="${link}">the post</a></div>
  <time class="dt-published" datetime="2026-01-02T03:04:05Z">2 January</time>
</article></body></html>`;

beforeAll(async () => {
  own = await isolatedDatabase("webmention");
  server = await startServer({ ...own.env, RUN_WEBHOOK_WORKER: "1", WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN: "12" });
  source = createServer((req, res) => {
    const page = pages.get(req.url ?? "") ?? { status: 404 };
    const answer = () => {
      if (page.bytes) {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<html><body><a href="${TARGET}">x</a>${"x".repeat(page.bytes)}</body></html>`);
        return;
      }
      res.writeHead(page.status ?? 200, { "content-type": "text/html; charset=utf-8" });
      res.end(page.html ?? "");
    };
    if (page.delayMs) setTimeout(answer, page.delayMs).unref();
    else answer();
  });
  await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  source?.closeAllConnections();
  await new Promise((r) => source?.close(r));
  await own?.drop();
});

let n = 0;
/** a site with federation on, a discussion whose url is TARGET (or `url`), and one attempt per job within 1 s */
async function site(more: Record<string, unknown> = {}, url = TARGET): Promise<{ t: TestTenant; discussion: string }> {
  const t = await createTestTenant(server);
  const handle = `wm_${Date.now().toString(36)}_${++n}`;
  const s = await t.api.patch("/api/v1/settings", {
    federation: { enabled: true, handle, remoteModeration: "post", ...more },
    delivery: { maxAttempts: 1, attemptTimeoutMs: 1000 },
  });
  expect(s.status).toBe(200);
  const discussion = `wm-d${n}`;
  expect((await t.api.put(`/api/v1/discussions/${discussion}`, { title: "A post", url })).status).toBeLessThan(300);
  return { t, discussion };
}

const send = (form: Record<string, string>) =>
  fetch(`${server.url}/webmention`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

const mentionRow = (tenantId: string, src: string, target = TARGET) =>
  server.app.runtime.services.prisma.webmention.findUnique({ where: { tenantId_source_target: { tenantId, source: src, target } } });

/** polls until `check` answers something truthy (the worker runs every 250 ms at most) */
async function until<T>(check: () => Promise<T | null | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("POST /webmention", () => {
  it("refuses what the spec calls a bad request, and a target no site with federation on has", async () => {
    await site();
    const missing = await send({ source: `${origin}/x` });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toMatchObject({ code: "invalid_parameter", errors: [{ path: "target" }] });
    expect((await send({ source: "ftp://x.example/a", target: TARGET })).status).toBe(400);
    expect(JSON.parse((await send({ source: TARGET, target: TARGET })).text).code).toBe("invalid_parameter");
    const unknown = await send({ source: `${origin}/x`, target: "https://blog.example/nowhere" });
    expect([unknown.status, JSON.parse(unknown.text).code]).toEqual([400, "webmention_target_unsupported"]);
    // a site with federation off takes none
    const off = await createTestTenant(server);
    await off.api.put("/api/v1/discussions/off-d", { title: "Off", url: "https://off.example/post" });
    expect(JSON.parse((await send({ source: `${origin}/x`, target: "https://off.example/post" })).text).code).toBe(
      "webmention_target_unsupported",
    );
    const json = await fetch(`${server.url}/webmention`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(json.status).toBe(415);
  });

  it("turns a linking h-entry into a mention comment; a re-send updates it; a 410 removes it", async () => {
    const url = "https://blog.example/posts/round-trip";
    const { t, discussion } = await site({}, url);
    const src = `${origin}/post-ok`;
    pages.set("/post-ok", { html: entry("Great <b>post</b>!", url) });
    const r = await send({ source: src, target: url });
    expect(r.status).toBe(202);
    const list = () => t.api.get(`/api/v1/discussions/${discussion}/comments`).then((x) => x.body.items as any[]);
    const [c] = await until(async () => ((await list()).length ? list() : null), "the mention comment");
    expect(c).toMatchObject({
      kind: "mention",
      status: "approved",
      author: { id: `wm:${origin}`, name: "Ada Lovelace", avatarUrl: "https://img.example/ada.png" },
      createdAt: "2026-01-02T03:04:05.000Z",
    });
    expect(c.body).toContain("Great post!");
    // the source's HTML through the one sanitizer: <b> is not on its list (its text stays), a link is
    expect(c.bodyHtml).toContain(`Great post! <a href="${url}"`);
    expect(c.bodyHtml).not.toContain("<b>");
    expect((await mentionRow(t.tenantId, src, url))?.status).toBe("accepted");
    // the same events as a local comment: comment_created with the comment's JSON
    const events = await server.app.runtime.services.prisma.event.findMany({ where: { tenantId: t.tenantId, type: "comment_created" } });
    expect(events.map((e) => (e.payload as any).data.comment.kind)).toEqual(["mention"]);

    // sent again with new content: the same comment, edited
    pages.set("/post-ok", { html: entry("Changed my mind.", url) });
    expect((await send({ source: src, target: url })).status).toBe(202);
    const edited = await until(async () => {
      const items = await list();
      return items.length === 1 && items[0].body.includes("Changed") ? items[0] : null;
    }, "the edit");
    expect(edited.id).toBe(c.id);
    expect(edited.editedAt).not.toBeNull();

    // gone: removed
    pages.set("/post-ok", { status: 410, html: "gone" });
    expect((await send({ source: src, target: url })).status).toBe(202);
    await until(async () => (await mentionRow(t.tenantId, src, url))?.status === "removed", "the removal");
    expect(await list()).toEqual([]);
    expect((await t.api.get(`/api/v1/comments/${c.id}`)).body.status).toBe("deleted");
  });

  it("holds a mention as pending under remoteModeration pre", async () => {
    const url = "https://blog.example/posts/held";
    const { t, discussion } = await site({ remoteModeration: "pre" }, url);
    pages.set("/held", { html: entry("Held please", url) });
    expect((await send({ source: `${origin}/held`, target: url })).status).toBe(202);
    await until(async () => (await mentionRow(t.tenantId, `${origin}/held`, url))?.status === "accepted", "the verification");
    expect((await t.api.get(`/api/v1/discussions/${discussion}/comments`)).body.items).toEqual([]);
    const pending = await t.api.get(`/api/v1/discussions/${discussion}/comments?status=pending`);
    expect(pending.body.items.map((x: any) => x.kind)).toEqual(["mention"]);
  });

  it("makes no comment of a page without the link, too large or too slow", async () => {
    const url = "https://blog.example/posts/refusals";
    const { t, discussion } = await site({}, url);
    pages.set("/no-link", { html: entry("No link here", "https://elsewhere.example/") });
    pages.set("/big", { bytes: 2 * 1024 * 1024 });
    pages.set("/slow", { html: entry("Slow", url), delayMs: 3_000 });
    for (const p of ["/no-link", "/big", "/slow"]) expect((await send({ source: `${origin}${p}`, target: url })).status).toBe(202);
    const noLink = await until(async () => {
      const row = await mentionRow(t.tenantId, `${origin}/no-link`, url);
      return row?.status !== "pending" && row;
    }, "no-link's verification");
    expect(noLink.error).toContain("does not link");
    const big = await until(async () => {
      const row = await mentionRow(t.tenantId, `${origin}/big`, url);
      return row?.status !== "pending" && row;
    }, "big's verification");
    expect([big.status, big.error]).toEqual(["rejected", expect.stringContaining("larger than")]);
    const slow = await until(async () => (await mentionRow(t.tenantId, `${origin}/slow`, url))?.error, "slow's attempt");
    expect(slow).toContain("timeout");
    expect((await mentionRow(t.tenantId, `${origin}/slow`, url))?.commentId).toBeNull();
    expect((await t.api.get(`/api/v1/discussions/${discussion}/comments?status=pending`)).body.items).toEqual([]);
    expect((await t.api.get(`/api/v1/discussions/${discussion}/comments`)).body.items).toEqual([]);
  });

  it("blocking a domain hides its comments already here, as a moderator's rejection; other comments stay", async () => {
    const url = "https://blog.example/posts/block-later";
    const { t, discussion } = await site({}, url);
    const src = `${origin}/post-block-later`;
    pages.set("/post-block-later", { html: entry("Mentioned you", url) });
    expect((await send({ source: src, target: url })).status).toBe(202);
    const local = t.as({ key: t.apiKey, identity: await t.identity("local-reader", { name: "Local" }) });
    expect((await local.post(`/api/v1/discussions/${discussion}/comments`, { body: "a local comment" })).status).toBe(201);
    const list = () => t.api.get(`/api/v1/discussions/${discussion}/comments`).then((x) => x.body.items as any[]);
    await until(async () => (await list()).length === 2, "the mention beside the local comment");
    const mention = (await list()).find((c) => c.kind === "mention")!;
    expect(mention.author.id).toBe(`wm:${origin}`);
    // an unrelated domain blocks nothing
    expect((await t.api.patch("/api/v1/settings", { federation: { blockedDomains: ["elsewhere.example"] } })).status).toBe(200);
    expect((await list()).map((c) => c.kind).sort()).toEqual(["comment", "mention"]);
    // the mention's host: hidden from the list and the count, rejected for moderators, audited
    const host = new URL(origin).hostname;
    expect((await t.api.patch("/api/v1/settings", { federation: { blockedDomains: ["elsewhere.example", host] } })).status).toBe(200);
    expect((await list()).map((c) => c.body)).toEqual(["a local comment"]);
    expect((await t.api.get(`/api/v1/discussions/${discussion}`)).body.counts.comments).toBe(1);
    expect((await t.api.get(`/api/v1/comments/${mention.id}`)).body.status).toBe("rejected");
  });

  it("refuses a blocked domain, and a source domain past its budget", async () => {
    const url = "https://blog.example/posts/blocked";
    await site({ blockedDomains: ["LOCALHOST"] }, url);
    const port = new URL(origin).port;
    const blocked = await send({ source: `http://localhost:${port}/x`, target: url });
    expect([blocked.status, JSON.parse(blocked.text).code]).toEqual([400, "webmention_source_blocked"]);
    // 12 in 10 minutes per source domain (WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN); this file's other tests used a few
    const budget = "https://blog.example/posts/budget";
    await site({}, budget);
    const answers: number[] = [];
    for (let i = 0; i < 13; i++) answers.push((await send({ source: `http://budget.localhost:${port}/p${i}`, target: budget })).status);
    expect(answers.slice(0, 12).every((s) => s === 202)).toBe(true);
    expect(answers[12]).toBe(429);
  });
});
