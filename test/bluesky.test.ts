// Bluesky (contract section 30) against a real local AT Protocol network (test/support/atproto-network.ts:
// @atproto/dev-env's PLC, PDS and AppView on loopback), never a mock of XRPC. The site's account posts a
// discussion (POST /api/v1/discussions/{id}/bluesky); accounts there reply, reply to a reply, delete one;
// the poller (driven pass by pass: BLUESKY_POLL_INTERVAL_MS=0) brings in exactly what is left, threaded,
// as comments of kind bluesky by readers at:<did>, with the comments' own events. A post of a reader is
// linked by its bsky.app URL; an AppView that does not answer loses nothing; autoPost posts a new
// discussion; an erased reader's reply never comes back; the app password is never answered or logged.
// The poller claims across tenants: the file has a database of its own. The network itself is checked
// first, as the service reads it: two accounts post and reply over XRPC, and the AppView's public
// getPostThread shows the reply once indexed and none once it is deleted (one network for the file:
// starting one is a process, three servers and the AppView's schema migrated, ~6 s of CPU).
import { AtpAgent } from "@atproto/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { startAtprotoNetwork, type AtprotoNetwork } from "./support/atproto-network.js";

let network: AtprotoNetwork;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
type Account = Awaited<ReturnType<AtprotoNetwork["account"]>>;
let site: Account;
let carol: Account;
let erin: Account;
let appPassword: string;

beforeAll(async () => {
  const schema = `bsky_svc_${process.pid}_${Date.now().toString(36)}`.replace(/[0-9]/g, (d) => "abcdefghij"[Number(d)]!);
  [network, own] = await Promise.all([startAtprotoNetwork(schema), isolatedDatabase("bluesky")]);
  server = await startServer({ ...own.env });
  site = await network.account("alice");
  carol = await network.account("carol");
  erin = await network.account("erin");
  appPassword = (await site.agent.com.atproto.server.createAppPassword({ name: "engagement" })).data.password;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await network?.stop();
  await own?.drop();
});

describe("the local AT Protocol network", () => {
  it("indexes a post and a reply, and forgets the reply once it is deleted", async () => {
    const post = await site.agent.post({ text: "A new article: https://blog.example/a", createdAt: new Date().toISOString() });
    const ref = { uri: post.uri, cid: post.cid };
    const reply = await carol.agent.post({ text: "A reply", reply: { root: ref, parent: ref }, createdAt: new Date().toISOString() });
    await network.indexed();
    const appView = new AtpAgent({ service: network.appView });
    const thread = await appView.app.bsky.feed.getPostThread({ uri: post.uri });
    const replies =
      (thread.data.thread as { replies?: Array<{ post: { uri: string; author: { did: string; handle: string } } }> }).replies ?? [];
    expect(replies.map((r) => r.post.uri)).toEqual([reply.uri]);
    expect(replies[0]!.post.author).toMatchObject({ did: carol.did, handle: "carol.test" });
    await carol.agent.deletePost(reply.uri);
    await network.indexed();
    const after = await appView.app.bsky.feed.getPostThread({ uri: post.uri });
    expect((after.data.thread as { replies?: unknown[] }).replies ?? []).toEqual([]);
  }, 60_000);
});

const poll = () => server.app.bluesky.runOnce();
const now = () => new Date().toISOString();
/** the link's next read made due now (the pace is tested on its own: test/bluesky-units.test.ts) */
const due = (tenantId: string, discussionId: string) =>
  server.app.runtime.services.prisma.blueskyLink.update({
    where: { tenantId_discussionId: { tenantId, discussionId } },
    data: { nextPollAt: new Date(Date.now() - 1000) },
  });
/** the discussion's comments as stored, every status (the API's shape is checked on its own below) */
async function comments(t: TestTenant, d: string): Promise<Array<Record<string, any>>> {
  const { prisma } = server.app.runtime.services;
  const rows = await prisma.comment.findMany({ where: { tenantId: t.tenantId, discussionId: d }, orderBy: { createdAt: "asc" } });
  const readers = await prisma.reader.findMany({ where: { tenantId: t.tenantId, id: { in: rows.map((c) => c.authorId) } } });
  const names = new Map(readers.map((r) => [r.id, r.name]));
  return rows.map((c) => ({ ...c, author: { id: c.authorId, name: names.get(c.authorId) } }));
}

let n = 0;
/** a site with Bluesky on (the account and the local network's servers), a discussion with a url */
async function blueskySite(more: Record<string, unknown> = {}): Promise<{ t: TestTenant; d: string }> {
  const t = await createTestTenant(server);
  const s = await t.api.patch("/api/v1/settings", {
    bluesky: {
      enabled: true,
      handle: site.handle,
      appPassword,
      service: network.pds,
      appView: network.appView,
      remoteModeration: "post",
      ...more,
    },
  });
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  const d = `bsky-d${++n}`;
  expect((await t.api.put(`/api/v1/discussions/${d}`, { title: `Article ${n}`, url: `https://blog.example/a/${n}` })).status).toBe(201);
  return { t, d };
}

describe("the bluesky settings", () => {
  it("keep the app password write-only: sealed, answered as set, masked in the audit log", async () => {
    const { t } = await blueskySite();
    const read = await t.api.get("/api/v1/settings");
    expect(read.body.bluesky).toEqual({
      enabled: true,
      handle: "alice.test",
      service: network.pds,
      appView: network.appView,
      remoteModeration: "post",
      autoPost: false,
      appPasswordSet: true,
    });
    expect(JSON.stringify(read.body)).not.toContain(appPassword);
    const audit = await t.admin.get("/api/v1/audit");
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).not.toContain(appPassword);
    expect(JSON.stringify(audit.body)).toContain('"appPassword":"****"');
    const stored = await server.app.runtime.services.prisma.tenant.findUniqueOrThrow({ where: { id: t.tenantId } });
    expect(JSON.stringify(stored.settings)).not.toContain(appPassword);
    // autoPost needs the account; a server the SSRF guard refuses is refused
    const bare = await createTestTenant(server);
    const refused = await bare.api.patch("/api/v1/settings", { bluesky: { enabled: true, autoPost: true } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: "bluesky.autoPost" })]);
    const metadata = await bare.api.patch("/api/v1/settings", { bluesky: { appView: "http://169.254.169.254" } });
    expect(metadata.status).toBe(422);
    expect(metadata.body.errors[0].path).toBe("bluesky.appView");
    expect((await t.api.patch("/api/v1/settings", { bluesky: { appPassword: null } })).body.bluesky.appPasswordSet).toBe(false);
  });
});

describe("a discussion posted from the site's account", () => {
  it("brings in its replies, threaded, and removes the one deleted there", async () => {
    const { t, d } = await blueskySite();
    const posted = await t.api.post(`/api/v1/discussions/${d}/bluesky`);
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    expect(posted.body).toMatchObject({ discussionId: d, posted: true, replies: 0, lastError: null });
    expect(posted.body.uri).toMatch(new RegExp(`^at://${site.did}/app\\.bsky\\.feed\\.post/`));
    expect(posted.body.url).toBe(`https://bsky.app/profile/${site.did}/post/${posted.body.uri.split("/").pop()}`);
    // posted again: the link it has, nothing new on Bluesky
    const again = await t.api.post(`/api/v1/discussions/${d}/bluesky`);
    expect(again.status).toBe(200);
    expect(again.body.uri).toBe(posted.body.uri);

    // the post as Bluesky has it: the title, the page as an external card
    await network.indexed();
    const appView = new AtpAgent({ service: network.appView });
    const [post] = (await appView.app.bsky.feed.getPosts({ uris: [posted.body.uri] })).data.posts;
    expect((post!.record as { text: string }).text).toBe(`Article ${n}`);
    expect(post!.embed).toMatchObject({ external: { uri: `https://blog.example/a/${n}`, title: `Article ${n}` } });

    // replies there: carol to the post (with a link), erin to carol, carol to the post again
    const root = { uri: posted.body.uri as string, cid: post!.cid };
    const r1 = await carol.agent.post({
      text: "Great read, see example.org",
      facets: [
        { index: { byteStart: 16, byteEnd: 27 }, features: [{ $type: "app.bsky.richtext.facet#link", uri: "https://example.org/" }] },
      ],
      reply: { root, parent: root },
      createdAt: now(),
    });
    const r2 = await erin.agent.post({ text: "Agreed!", reply: { root, parent: { uri: r1.uri, cid: r1.cid } }, createdAt: now() });
    const r3 = await carol.agent.post({ text: "One more thing", reply: { root, parent: root }, createdAt: now() });
    await network.indexed();
    await erin.agent.upsertProfile((p) => ({ ...p, displayName: "Erin E." }));
    await network.indexed();

    await due(t.tenantId, d);
    expect(await poll()).toBeGreaterThanOrEqual(1);
    const list = await comments(t, d);
    expect(list.map((c) => c.body).sort()).toEqual(["Agreed!", "Great read, see [example.org](<https://example.org/>)", "One more thing"]);
    for (const c of list) {
      expect(c).toMatchObject({ kind: "bluesky", status: "approved" });
    }
    const byBody = new Map(list.map((c) => [c.body as string, c]));
    const first = byBody.get("Great read, see [example.org](<https://example.org/>)")!;
    expect(first.author).toMatchObject({ id: `at:${carol.did}`, name: "carol.test" });
    expect(first.bodyHtml).toContain('<a href="https://example.org/"');
    // as the API shows it: kind bluesky, the reader at:<did>
    const shown = (await t.api.get(`/api/v1/discussions/${d}/comments`)).body.items as Array<Record<string, any>>;
    expect(shown.find((c) => c.id === first.id)).toMatchObject({ kind: "bluesky", author: { id: `at:${carol.did}`, name: "carol.test" } });
    expect(byBody.get("Agreed!")!.author.name).toBe("Erin E.");
    expect(first.parentId).toBeNull();
    expect(byBody.get("Agreed!")).toMatchObject({ parentId: first.id, author: { id: `at:${erin.did}` } });
    expect(byBody.get("One more thing")!.parentId).toBeNull();

    // the same events as a local comment: comment_created for each, in the discussion's log
    const events = await server.app.runtime.services.prisma.event.findMany({
      where: { tenantId: t.tenantId, discussionId: d, type: "comment_created" },
    });
    expect(events).toHaveLength(3);

    // read again: nothing new, nothing twice
    await due(t.tenantId, d);
    await poll();
    expect(await comments(t, d)).toHaveLength(3);

    // erin deletes hers there: removed here, the rest exactly as it was
    await erin.agent.deletePost(r2.uri);
    await network.indexed();
    await due(t.tenantId, d);
    await poll();
    const after = await comments(t, d);
    expect(
      after
        .filter((c) => c.status !== "deleted")
        .map((c) => c.body)
        .sort(),
    ).toEqual(["Great read, see [example.org](<https://example.org/>)", "One more thing"]);
    expect(after.find((c) => c.id === byBody.get("Agreed!")!.id)?.status).toBe("deleted");
    expect(r3.uri).toBeTruthy();

    // the indexable thread: each reply says it is on Bluesky, linking to the post; the island carries kind and link
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const fragment = await (await fetch(`${server.url}/embed/v1/discussions/${d}.html?key=${pk}`)).text();
    expect(fragment.match(/<a href="https:\/\/bsky\.app\/profile\/[^"]+">on Bluesky<\/a>/g)).toHaveLength(2);
    expect(fragment).toContain(`href="${posted.body.url}"`);
    const island = JSON.parse(/<script type="application\/json" data-engagement-thread>(.*?)<\/script>/s.exec(fragment)![1]!);
    expect(island.thread.discussion.bluesky).toEqual({ url: posted.body.url });
    expect(island.thread.comments.edges[0].node.kind).toBe("bluesky");
    const german = await (await fetch(`${server.url}/embed/v1/discussions/${d}.html?key=${pk}&lang=de`)).text();
    expect(german).toContain(">auf Bluesky</a>");

    // the link as the console lists it, and the discussion's post
    const links = await t.api.get("/api/v1/bluesky/links");
    expect(links.body.items).toEqual([expect.objectContaining({ discussionId: d, uri: posted.body.uri, replies: 3, lastError: null })]);
    expect((await t.api.get(`/api/v1/discussions/${d}`)).body.bluesky).toEqual({ uri: posted.body.uri, url: posted.body.url });
  }, 90_000);
});

describe("a discussion linked to a post that was there", () => {
  it("is linked by its bsky.app URL, holds replies under pre-moderation, and refuses what names no post", async () => {
    const { t, d } = await blueskySite({ remoteModeration: "pre" });
    const post = await carol.agent.post({ text: "I wrote about this: https://blog.example", createdAt: now() });
    const rkey = post.uri.split("/").pop()!;
    await network.indexed();
    const linked = await t.api.put(`/api/v1/discussions/${d}`, { bluesky: `https://bsky.app/profile/carol.test/post/${rkey}` });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.bluesky).toEqual({ uri: post.uri, url: `https://bsky.app/profile/${carol.did}/post/${rkey}` });

    for (const bad of ["https://example.com/profile/carol.test/post/x", "at://carol.test/app.bsky.feed.like/abc", "not a post"]) {
      const r = await t.api.put(`/api/v1/discussions/${d}`, { bluesky: bad });
      expect(r.status, bad).toBe(422);
      expect(r.body.errors[0].path).toBe("bluesky");
    }
    const missing = await t.api.put(`/api/v1/discussions/${d}`, { bluesky: `at://${carol.did}/app.bsky.feed.post/3zzzzzzzzzzzz` });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].message).toMatch(/no such post/);
    // the link is kept through refused changes
    expect((await t.api.get(`/api/v1/discussions/${d}`)).body.bluesky.uri).toBe(post.uri);

    const ref = { uri: post.uri, cid: post.cid };
    await erin.agent.post({ text: "Held for a moderator", reply: { root: ref, parent: ref }, createdAt: now() });
    await network.indexed();
    await due(t.tenantId, d);
    await poll();
    const list = await comments(t, d);
    expect(list).toEqual([expect.objectContaining({ body: "Held for a moderator", status: "pending", kind: "bluesky" })]);

    // off for a site that has not turned it on
    const off = await createTestTenant(server);
    await off.api.put("/api/v1/discussions/x1", { url: "https://blog.example/x1" });
    const refused = await off.api.put("/api/v1/discussions/x1", { bluesky: post.uri });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("bluesky_disabled");
    expect((await off.api.post("/api/v1/discussions/x1/bluesky")).body.code).toBe("bluesky_disabled");
    // unlinked: read no more
    expect((await t.api.put(`/api/v1/discussions/${d}`, { bluesky: null })).body.bluesky).toBeNull();
  }, 90_000);

  it("loses nothing while the AppView does not answer: the read backs off and brings the replies in later", async () => {
    const { t, d } = await blueskySite();
    const post = await carol.agent.post({ text: "Another article", createdAt: now() });
    await network.indexed();
    expect((await t.api.put(`/api/v1/discussions/${d}`, { bluesky: post.uri })).status).toBe(200);
    const ref = { uri: post.uri, cid: post.cid };
    await erin.agent.post({ text: "Written while it was down", reply: { root: ref, parent: ref }, createdAt: now() });
    await network.indexed();
    // an AppView on a port nobody listens on
    await t.api.patch("/api/v1/settings", { bluesky: { appView: "http://127.0.0.1:9" } });
    await due(t.tenantId, d);
    const before = Date.now();
    await poll();
    const failed = (await t.api.get("/api/v1/bluesky/links")).body.items[0];
    expect(failed.lastError).toBeTruthy();
    expect(new Date(failed.nextPollAt).getTime()).toBeGreaterThanOrEqual(before + 55_000);
    expect(await comments(t, d)).toEqual([]);
    await t.api.patch("/api/v1/settings", { bluesky: { appView: network.appView } });
    await due(t.tenantId, d);
    await poll();
    expect((await comments(t, d)).map((c) => c.body)).toEqual(["Written while it was down"]);
    expect((await t.api.get("/api/v1/bluesky/links")).body.items[0].lastError).toBeNull();
  }, 60_000);
});

describe("the pace", () => {
  it("reads a linked post within the minute once a reader opens the discussion's stream", async () => {
    const { t, d } = await blueskySite();
    const post = await carol.agent.post({ text: "A quiet article", createdAt: now() });
    await network.indexed();
    expect((await t.api.put(`/api/v1/discussions/${d}`, { bluesky: post.uri })).status).toBe(200);
    await due(t.tenantId, d);
    await poll();
    const { prisma } = server.app.runtime.services;
    const key = { tenantId_discussionId: { tenantId: t.tenantId, discussionId: d } };
    // as an old, quiet discussion: read last an hour ago, next in eleven
    const hourAgo = new Date(Date.now() - 3_600_000);
    await prisma.blueskyLink.update({ where: key, data: { polledAt: hourAgo, nextPollAt: new Date(Date.now() + 11 * 3_600_000) } });
    const ac = new AbortController();
    const res = await fetch(`${server.url}/api/v1/stream/${d}`, { headers: { "x-api-key": t.apiKey }, signal: ac.signal });
    expect(res.status).toBe(200);
    let link = await prisma.blueskyLink.findUniqueOrThrow({ where: key });
    for (let i = 0; i < 50 && link.nextPollAt.getTime() > Date.now() + 60_000; i++) {
      await new Promise((r) => setTimeout(r, 100));
      link = await prisma.blueskyLink.findUniqueOrThrow({ where: key });
    }
    ac.abort();
    expect(link.nextPollAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
  }, 60_000);
});

describe("autoPost and erasure", () => {
  it("posts each new discussion with a url, and an erased reader's reply never comes back", async () => {
    const { t } = await blueskySite({ autoPost: true });
    const d = `auto-${++n}`;
    expect((await t.api.put(`/api/v1/discussions/${d}`, { title: "Posted by itself", url: `https://blog.example/auto/${n}` })).status).toBe(
      201,
    );
    await poll();
    const link = (await t.api.get(`/api/v1/discussions/${d}`)).body.bluesky;
    expect(link?.uri).toMatch(new RegExp(`^at://${site.did}/`));
    await network.indexed();
    const appView = new AtpAgent({ service: network.appView });
    const [post] = (await appView.app.bsky.feed.getPosts({ uris: [link.uri] })).data.posts;
    expect((post!.record as { text: string }).text).toBe("Posted by itself");

    const ref = { uri: post!.uri, cid: post!.cid };
    await carol.agent.post({ text: "Erase me later", reply: { root: ref, parent: ref }, createdAt: now() });
    await network.indexed();
    await due(t.tenantId, d);
    await poll();
    expect((await comments(t, d)).map((c) => c.body)).toEqual(["Erase me later"]);
    const erased = await t.api.del(`/api/v1/readers/${encodeURIComponent(`at:${carol.did}`)}`);
    expect(erased.status, JSON.stringify(erased.body)).toBe(204);
    const rows = await server.app.runtime.services.prisma.blueskyReply.findMany({ where: { tenantId: t.tenantId, discussionId: d } });
    expect(rows).toEqual([expect.objectContaining({ uri: null, readerId: null })]);
    expect(rows[0]!.uriHash).toMatch(/^[0-9a-f]{64}$/);
    await due(t.tenantId, d);
    await poll();
    const left = await comments(t, d);
    expect(left.filter((c) => c.body === "Erase me later")).toEqual([]);
  }, 60_000);
});
