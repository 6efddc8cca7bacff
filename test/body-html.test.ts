// bodyHtml (contract section 18): every comment carries the service's sanitized rendering of its body,
// rendered when it is written and stored — in REST and GraphQL answers, stream and webhook payloads,
// the export and a reader's export; an edit renders again, a deletion empties it; the tenant's
// formatting settings decide how; the word rules and maxLinks judge the rendering; comments written
// before the column are rendered by the start-up backfill (src/modules/comments/engine/render-backfill.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse } from "./support/sse.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";
import { renderUnrenderedBodies } from "../src/modules/comments/engine/render-backfill.js";
import { loggedEvents } from "./support/event-log.js";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { migrationsDir } from "../src/db/paths.js";

const REL = "nofollow ugc noopener noreferrer";
const BODY = "Hello **world** <script>alert(1)</script> see [docs](https://docs.example/x) and [bad](javascript:alert(1))";
const HTML = `<p>Hello <strong>world</strong> &lt;script&gt;alert(1)&lt;/script&gt; see <a href="https://docs.example/x" rel="${REL}">docs</a> and [bad](javascript:alert(1))</p>`;

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startWebhookServer();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

const services = () => server.app.runtime.services;

async function readerOf(t: TestTenant, sub: string) {
  return t.as({ key: t.apiKey, identity: await t.identity(sub) });
}

describe("bodyHtml on every surface", () => {
  it("REST, GraphQL, the stream, webhooks, the export and the reader's export carry the stored rendering", async () => {
    const t = await createTestTenant(server);
    await createVerifiedEndpoint(t, receiver, { events: ["comment_created", "comment_edited", "comment_deleted"] });
    expect((await t.api.put("/api/v1/discussions/bh-1", { title: "One" })).status).toBe(201);
    const es = openSse(`${server.url}/api/v1/stream/bh-1`, { "x-api-key": t.apiKey });
    await es.waitFor((f) => f.some((x) => x.event === "connected"));
    const ann = await readerOf(t, "ann");

    const posted = await ann.post("/api/v1/discussions/bh-1/comments", { body: BODY });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({ body: BODY, bodyHtml: HTML });
    const id = posted.body.id as string;
    expect((await t.api.get(`/api/v1/comments/${id}`)).body.bodyHtml).toBe(HTML);
    expect((await t.api.get("/api/v1/discussions/bh-1/comments")).body.items[0].bodyHtml).toBe(HTML);
    const gql = await t.api.raw("POST", "/graphql", { query: `{ comment(id: "${id}") { body bodyHtml } }` });
    expect(gql.body).toEqual({ data: { comment: { body: BODY, bodyHtml: HTML } } });
    // stored, not rendered per read: the column holds it
    const row = await services().prisma.comment.findUniqueOrThrow({ where: { id } });
    expect(row.bodyHtml).toBe(HTML);

    // an edit renders again; a deletion empties both
    const edited = await ann.patch(`/api/v1/comments/${id}`, { body: "now _quiet_" });
    expect(edited.body.bodyHtml).toBe("<p>now <em>quiet</em></p>");
    const events = await es.waitForEvents(2);
    expect(events.map((e) => [e.event, e.data.data.comment.bodyHtml])).toEqual([
      ["comment_created", HTML],
      ["comment_edited", "<p>now <em>quiet</em></p>"],
    ]);
    // the event's comment is the REST one, bodyHtml included
    expect(events[1]!.data.data.comment).toEqual((await t.api.get(`/api/v1/comments/${id}`)).body);
    await receiver.waitFor(() => receiver.deliveries().filter((d) => d.json?.data?.comment?.id === id).length >= 2);
    const delivered = receiver.deliveries().filter((d) => d.json?.data?.comment?.id === id);
    expect(delivered.map((d) => d.json.data.comment.bodyHtml)).toEqual([HTML, "<p>now <em>quiet</em></p>"]);

    // the export and the reader's export
    const ndjson = await (await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": t.apiKey } })).text();
    const exported = ndjson
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((r) => r.type === "comment" && r.id === id);
    expect(exported).toMatchObject({ body: "now _quiet_", bodyHtml: "<p>now <em>quiet</em></p>" });
    const mine = await ann.get("/api/v1/me/export");
    expect(mine.status).toBe(200);
    expect(mine.body.comments.find((c: any) => c.id === id)).toMatchObject({ bodyHtml: "<p>now <em>quiet</em></p>" });

    expect((await ann.del(`/api/v1/comments/${id}`)).status).toBeLessThan(300);
    expect((await t.api.get(`/api/v1/comments/${id}`)).body).toMatchObject({ status: "deleted", body: "", bodyHtml: "" });
    await es.waitForEvents(3);
    expect(es.events()[2]!.data.data.comment).toMatchObject({ body: "", bodyHtml: "" });
    es.close();
  });

  it("renders as the tenant's formatting settings say: plain text with markdown off, https images with images on", async () => {
    const t = await createTestTenant(server);
    const ann = await readerOf(t, "ann");
    expect((await t.api.patch("/api/v1/settings", { formatting: { markdown: false } })).status).toBe(200);
    const plain = await ann.post("/api/v1/discussions/bh-2/comments", { body: "**not bold**\nline <i>two</i>" });
    expect(plain.body.bodyHtml).toBe("<p>**not bold**<br />\nline &lt;i&gt;two&lt;/i&gt;</p>");
    expect((await t.api.patch("/api/v1/settings", { formatting: { markdown: true, images: true } })).status).toBe(200);
    const img = await ann.post("/api/v1/discussions/bh-2/comments", {
      body: "![cat](https://img.example/c.png) ![x](http://img.example/x.png)",
    });
    expect(img.body.bodyHtml).toBe(
      '<p><img src="https://img.example/c.png" alt="cat" loading="lazy" referrerpolicy="no-referrer" /> x</p>',
    );
    // a comment keeps the rendering it was written with
    expect((await t.api.get(`/api/v1/comments/${plain.body.id}`)).body.bodyHtml).toBe(plain.body.bodyHtml);
  });
});

describe("a reader's erasure", () => {
  it("leaves no rendering of their words: their comments show the marker rendered, the events keep none of it", async () => {
    const t = await createTestTenant(server);
    const ann = await readerOf(t, "ann");
    const kept = await ann.post("/api/v1/discussions/bh-5/comments", { body: "my **secret** words" });
    await ann.patch(`/api/v1/comments/${kept.body.id}`, { body: "my **other secret** words" });
    expect((await t.api.del("/api/v1/readers/ann")).status).toBe(204);
    expect((await t.api.get(`/api/v1/comments/${kept.body.id}`)).body).toMatchObject({ body: "[erased]", bodyHtml: "<p>[erased]</p>" });
    const events = await loggedEvents(services().prisma, { where: { tenantId: t.tenantId, discussionId: "bh-5" } });
    const comments = events.map((e) => (e.payload as any).data?.comment).filter(Boolean);
    expect(comments.length).toBeGreaterThanOrEqual(2);
    for (const c of comments) {
      expect(["", "<p>[erased]</p>"]).toContain(c.bodyHtml);
      expect(JSON.stringify(c)).not.toContain("secret");
    }
  });
});

describe("the safety rules judge the rendering", () => {
  it("a banned word split by markup or entities, or in a link's target, is found; maxLinks counts rendered links", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { safety: { bannedWords: ["scam"], maxLinks: 1 } })).status).toBe(200);
    const ann = await readerOf(t, "ann");
    for (const body of ["what a s**ca**m", "what a s&#99;am", "[a fine site](https://scam.example/)"]) {
      const r = await ann.post("/api/v1/discussions/bh-3/comments", { body });
      expect([body, r.status, r.body.status]).toEqual([body, 201, "rejected"]);
    }
    // text that only looks like links is not counted; two rendered links are over the limit
    const fine = await ann.post("/api/v1/discussions/bh-3/comments", { body: "a.com b.org `https://in.code/x` [x](javascript:void(0))" });
    expect(fine.body.status).toBe("approved");
    const two = await ann.post("/api/v1/discussions/bh-3/comments", { body: "[one](https://a.example) and www.b.example" });
    expect(two.body.status).toBe("pending");
    const moderator = t.as({ key: t.apiKey });
    expect((await moderator.get(`/api/v1/comments/${two.body.id}`)).body.moderationReason).toEqual({
      source: "rule",
      rule: "maxLinks",
      links: 2,
      maxLinks: 1,
    });
  });
});

describe("comments written before bodies were rendered", () => {
  it("are rendered by the start-up backfill with their tenant's settings; until then reads render them", async () => {
    const t = await createTestTenant(server);
    const plainTenant = await createTestTenant(server);
    expect((await plainTenant.api.patch("/api/v1/settings", { formatting: { markdown: false } })).status).toBe(200);
    const a = await (await readerOf(t, "ann")).post("/api/v1/discussions/bh-4/comments", { body: "**old**" });
    const b = await (await readerOf(plainTenant, "bob")).post("/api/v1/discussions/bh-4/comments", { body: "**old**" });
    const gone = await (await readerOf(t, "ann")).post("/api/v1/discussions/bh-4/comments", { body: "bye" });
    await (await readerOf(t, "ann")).del(`/api/v1/comments/${gone.body.id}`);
    const prisma = services().prisma;
    // as a row written before the column was
    await prisma.comment.updateMany({ where: { id: { in: [a.body.id, b.body.id, gone.body.id] } }, data: { bodyHtml: null } });
    // listed for the start-up render as the migration that dropped their partial index listed them (*_index_diet)
    const migration = readFileSync(
      join(
        migrationsDir,
        readdirSync(migrationsDir).find((d) => d.endsWith("_index_diet"))!,
        "migration.sql",
      ),
      "utf8",
    );
    const listing = /^INSERT INTO "comment_render_backlog".*;$/m.exec(migration)![0];
    await services().sql.query(listing, []);
    expect((await t.api.get(`/api/v1/comments/${a.body.id}`)).body.bodyHtml).toBe("<p><strong>old</strong></p>");

    expect(await renderUnrenderedBodies(services().sql)).toBeGreaterThanOrEqual(3);
    const rows = await prisma.comment.findMany({ where: { id: { in: [a.body.id, b.body.id, gone.body.id] } } });
    const html = Object.fromEntries(rows.map((r) => [r.id, r.bodyHtml]));
    expect(html).toEqual({ [a.body.id]: "<p><strong>old</strong></p>", [b.body.id]: "<p>**old**</p>", [gone.body.id]: "" });
    expect(await prisma.comment.count({ where: { bodyHtml: null } })).toBe(0);
    expect(await prisma.commentRenderBacklog.count()).toBe(0);
    // again: nothing left to do
    expect(await renderUnrenderedBodies(services().sql)).toBe(0);
  });
});
