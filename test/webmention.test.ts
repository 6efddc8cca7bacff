// Webmention (contract section 24): POST /webmention answers 202 and the webhook worker verifies it
// later, fetching a real source page from a loopback HTTP server of this test (allowed by the SSRF
// guard's development flag, ALLOW_HTTP_WEBHOOKS, which every test server sets): its h-entry becomes a
// comment of kind mention by reader wm:<origin> (author, photo, content, published), a re-send updates
// that comment, a 410 removes it; a page without the link, too large or too slow makes no comment;
// a blocked domain, an unknown target or a bad form is refused with the spec's 400s. The worker takes
// jobs of the whole database: the file has a database of its own. A sender's client address is chosen
// by the local address a request is sent from (any of 127.0.0.0/8).
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { loggedEvents } from "./support/event-log.js";

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
  server = await startServer({
    ...own.env,
    RUN_WEBHOOK_WORKER: "1",
    WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN: "12",
    WEBMENTION_REQUESTS_PER_ADDRESS: "40",
  });
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

/** POST /webmention from the client address `from` (a loopback address; 127.0.0.1 unless given) */
const send = (form: Record<string, string>, from = "127.0.0.1") =>
  new Promise<{ status: number; text: string; retryAfter: string | undefined }>((resolve, reject) => {
    const body = new URLSearchParams(form).toString();
    const req = request(
      `${server.url}/webmention`,
      { method: "POST", localAddress: from, headers: { "content-type": "application/x-www-form-urlencoded" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, retryAfter: res.headers["retry-after"] as string | undefined }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });

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
    // a site with federation off takes none: its pages are not served here (404, as every federation route of it)
    const off = await createTestTenant(server);
    await off.api.put("/api/v1/discussions/off-d", { title: "Off", url: "https://off.example/post" });
    const toOff = await send({ source: `${origin}/x`, target: "https://off.example/post" });
    expect([toOff.status, JSON.parse(toOff.text).code]).toEqual([404, "not_found"]);
    expect(await server.app.runtime.services.prisma.webmention.count({ where: { tenantId: off.tenantId } })).toBe(0);
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
    const events = await loggedEvents(server.app.runtime.services.prisma, { where: { tenantId: t.tenantId, type: "comment_created" } });
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

  it("refuses a blocked domain, and a source domain past a site's budget for the mentions verified", async () => {
    const url = "https://blog.example/posts/blocked";
    await site({ blockedDomains: ["LOCALHOST"] }, url);
    const port = new URL(origin).port;
    const blocked = await send({ source: `http://localhost:${port}/x`, target: url });
    expect([blocked.status, JSON.parse(blocked.text).code]).toEqual([400, "webmention_source_blocked"]);
    // 12 linking mentions in 10 minutes per site and source domain (WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN), sent from several addresses
    const budget = "https://blog.example/posts/budget";
    const { t } = await site({}, budget);
    for (let i = 0; i < 12; i++) {
      pages.set(`/budget-${i}`, { html: entry(`Mention ${i}`, budget) });
      expect((await send({ source: `${origin}/budget-${i}`, target: budget }, `127.0.0.${20 + i}`)).status).toBe(202);
    }
    for (let i = 0; i < 12; i++) {
      await until(async () => (await mentionRow(t.tenantId, `${origin}/budget-${i}`, budget))?.status === "accepted", `mention ${i}`);
    }
    const past = await send({ source: `${origin}/budget-12`, target: budget }, "127.0.0.40");
    expect([past.status, past.retryAfter]).toEqual([429, "600"]);
    // another site's budget for the same domain is its own
    const other = "https://blog.example/posts/budget-other";
    const o = await site({}, other);
    pages.set("/budget-other", { html: entry("Elsewhere", other) });
    expect((await send({ source: `${origin}/budget-other`, target: other }, "127.0.0.41")).status).toBe(202);
    await until(async () => (await mentionRow(o.t.tenantId, `${origin}/budget-other`, other))?.status === "accepted", "the other site's");
  });

  it("charges what nobody verified to the sender's address: forged mentions naming a domain on one site leave it open on every site", async () => {
    const urlA = "https://blog.example/posts/forged-a";
    const urlB = "https://blog.example/posts/forged-b";
    const a = await site({}, urlA);
    const b = await site({}, urlB);
    // 30 mentions naming this test's source domain whose pages do not exist, from one address
    for (let i = 0; i < 30; i++) expect((await send({ source: `${origin}/forged-${i}`, target: urlA }, "127.0.0.2")).status).toBe(202);
    // a genuine one from the same domain, on the other site and on the forged one's
    pages.set("/genuine-b", { html: entry("Genuine on B", urlB) });
    pages.set("/genuine-a", { html: entry("Genuine on A", urlA) });
    expect((await send({ source: `${origin}/genuine-b`, target: urlB })).status).toBe(202);
    await until(async () => (await mentionRow(b.t.tenantId, `${origin}/genuine-b`, urlB))?.status === "accepted", "B's genuine mention");
    await until(
      async () => (await mentionRow(a.t.tenantId, `${origin}/forged-29`, urlA))?.status === "rejected",
      "the forgeries' verification",
    );
    expect((await send({ source: `${origin}/genuine-a`, target: urlA })).status).toBe(202);
    await until(async () => (await mentionRow(a.t.tenantId, `${origin}/genuine-a`, urlA))?.status === "accepted", "A's genuine mention");
  });

  it("counts every webmention against its sender's client address (WEBMENTION_REQUESTS_PER_ADDRESS), each address apart", async () => {
    const form = { source: `${origin}/nowhere`, target: "https://blog.example/not-a-discussion" };
    for (let i = 0; i < 40; i++) expect((await send(form, "127.0.0.3")).status).toBe(400);
    const refused = await send(form, "127.0.0.3");
    expect([refused.status, JSON.parse(refused.text).code]).toEqual([429, "rate_limited"]);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect((await send(form, "127.0.0.4")).status).toBe(400);
  });

  it("finds each site once by the target: a url names one discussion of a site (another with it is refused)", async () => {
    const url = "https://shared.example/post";
    const a = await site({}, url);
    const b = await site({}, url);
    const ids = await server.app.runtime.services.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM tenants WHERE id IN (${a.t.tenantId}, ${b.t.tenantId}) ORDER BY id`;
    const [first, second] = ids.map((r) => (r.id === a.t.tenantId ? a : b));
    // a site cannot give the url to another discussion of its own (contract section 27)
    const again = await first!.t.api.put(`/api/v1/discussions/${first!.discussion}-more`, { title: "Again", url });
    expect([again.status, again.body.code]).toEqual([409, "url_taken"]);
    const src = `${origin}/shared-source`;
    expect((await send({ source: src, target: url })).status).toBe(202);
    // each site's oldest discussion with the url
    expect((await mentionRow(second!.t.tenantId, src, url))?.discussionId).toBe(second!.discussion);
    expect((await mentionRow(first!.t.tenantId, src, url))?.discussionId).toBe(first!.discussion);

    // at most five sites: those that list the target's origin among allowedOrigins first, then the oldest discussions
    const page = "https://own.example/post";
    const others = [];
    for (let i = 0; i < 5; i++) others.push(await site({}, page));
    const owner = await site({}, page);
    expect((await owner.t.api.patch("/api/v1/settings", { allowedOrigins: ["https://own.example"] })).status).toBe(200);
    const src2 = `${origin}/own-source`;
    expect((await send({ source: src2, target: page })).status).toBe(202);
    expect(await mentionRow(owner.t.tenantId, src2, page)).not.toBeNull();
    for (const o of others.slice(0, 4)) expect(await mentionRow(o.t.tenantId, src2, page)).not.toBeNull();
    expect(await mentionRow(others[4]!.t.tenantId, src2, page)).toBeNull();
  });

  it("refuses for good, with the reason, a source nested too deep or an h-entry published out of range", async () => {
    const url = "https://blog.example/posts/unreadable";
    const { t } = await site({ remoteModeration: "post" }, url);
    const deep = 5_000;
    pages.set("/deep", { html: `<html><body>${"<div>".repeat(deep)}${entry("Deep", url)}${"</div>".repeat(deep)}</body></html>` });
    pages.set("/ancient", { html: entry("Ancient", url).replace("2026-01-02T03:04:05Z", "-010000-01-01T00:00:00Z") });
    for (const p of ["/deep", "/ancient"]) expect((await send({ source: `${origin}${p}`, target: url })).status).toBe(202);
    for (const [p, why] of [
      ["/deep", "nest deeper than"],
      ["/ancient", "published out of range"],
    ] as const) {
      const row = await until(async () => {
        const r = await mentionRow(t.tenantId, `${origin}${p}`, url);
        return r?.status !== "pending" && r;
      }, `${p}'s verification`);
      expect([row.status, row.error]).toEqual(["rejected", expect.stringContaining(why)]);
      // done with, not retried: its job ended (recorded just after the verification's own write), one attempt
      const jobs = await until(async () => {
        const found = await server.app.runtime.services.prisma.webhookDelivery.findMany({
          where: { tenantId: t.tenantId, kind: "webmention", message: { path: ["source"], equals: `${origin}${p}` } },
        });
        return found.length > 0 && found.every((j) => j.status !== "pending") && found;
      }, `${p}'s job's end`);
      expect(jobs.map((j) => [j.status, j.attempts])).toEqual([["succeeded", 1]]);
    }
    // an ordinary page nested a little is read
    pages.set("/nested", { html: `<html><body>${"<div>".repeat(100)}${entry("Nested", url)}${"</div>".repeat(100)}</body></html>` });
    expect((await send({ source: `${origin}/nested`, target: url })).status).toBe(202);
    await until(async () => (await mentionRow(t.tenantId, `${origin}/nested`, url))?.status === "accepted", "the nested page's");
  });
});
