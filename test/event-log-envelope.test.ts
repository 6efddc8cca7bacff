// The event log keeps an envelope as text (`events.envelope`); rows written by releases before that
// column keep theirs as json in `payload` until retention drops their days (docs/scaling.md, "The
// envelope as text"). Such a row is replayed, delivered and erased as any other: each read takes
// whichever column holds it, and the erasure writes what it scrubs back as text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { openSse } from "./support/sse.js";
import { startReceiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startWebhookServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const sql = () => server.app.runtime.services.sql;

/** Appends a comment_created event as a release before the envelope column wrote it: json in `payload`, no `envelope`. */
async function appendAsBefore(discussionId: string, commentId: string, author: string, body: string) {
  const [d] = await sql().query<{ seq: number }>(`UPDATE discussions SET seq = seq + 1 WHERE tenant_id = $1 AND id = $2 RETURNING seq`, [
    t.tenantId,
    discussionId,
  ]);
  const id = randomUUID();
  const at = new Date();
  const [existing] = await sql().query<{ c: Record<string, unknown> }>(
    `SELECT envelope::json #> '{data,comment}' AS c FROM events WHERE tenant_id = $1 AND discussion_id = $2 AND type = 'comment_created' LIMIT 1`,
    [t.tenantId, discussionId],
  );
  const comment = { ...existing!.c, id: commentId, author: { id: author, name: "Old Ann", avatarUrl: null, badge: null }, body };
  const envelope = {
    id,
    seq: d!.seq,
    type: "comment_created",
    tenantId: t.tenantId,
    discussionId,
    occurredAt: at.toISOString(),
    data: { comment },
  };
  await sql().query(
    `INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, reader_id, payload, occurred_at)
     VALUES ($1, $2, $3, $4, 'comment_created', 'all', NULL, $5::json, $6)`,
    [id, t.tenantId, discussionId, d!.seq, JSON.stringify(envelope), at],
  );
  return { id, seq: d!.seq, envelope };
}

describe("an event a release before stored as json", () => {
  it("is replayed, delivered and erased as one stored as text", async () => {
    const ann = await t.reader("env-ann", { name: "Ann" });
    const first = await ann.post("/api/v1/discussions/env-1/comments", { body: "written now" });
    expect(first.status).toBe(201);
    const old = await appendAsBefore("env-1", "cmt_old", "env-ann", "written before the upgrade");

    // replay: both rows, in order, each as its envelope
    const replay = openSse(`${server.url}/api/v1/stream/env-1`, { "x-api-key": t.apiKey, "last-event-id": "0" });
    await replay.waitForEvents(2);
    expect(replay.events().map((f) => [f.id, f.data.data.comment.id, f.data.data.comment.body])).toEqual([
      ["1", first.body.id, "written now"],
      [String(old.seq), "cmt_old", "written before the upgrade"],
    ]);
    replay.close();

    // a webhook: the older row's envelope, as stored
    const receiver = await startReceiver();
    const hook = await createVerifiedEndpoint(t, receiver);
    expect((await t.api.post(`/api/v1/webhooks/${hook.webhookId}/redeliver`, { eventIds: [old.id] })).status).toBeLessThan(300);
    await receiver.waitFor((r) => r.some((x) => x.event !== "verification"));
    const delivered = receiver.deliveries().find((d) => d.json?.id === old.id)!;
    expect(delivered.json).toEqual(old.envelope);
    await receiver.close();

    // the erasure scrubs it and writes it back as text
    const manager = t.as({ key: (await keyWith(t, ["manage_readers"])).key });
    expect((await manager.del("/api/v1/readers/env-ann")).status).toBe(204);
    const rows = await sql().query<{ envelope: string | null; payload: unknown }>(
      `SELECT envelope, payload FROM events WHERE tenant_id = $1 AND discussion_id = 'env-1' AND type = 'comment_created' ORDER BY seq`,
      [t.tenantId],
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.payload).toBeNull();
      const scrubbed = JSON.parse(r.envelope!);
      expect(scrubbed.data.comment.author).toEqual({ id: "", name: "[erased]", avatarUrl: null, badge: null });
      expect(r.envelope).not.toContain("Old Ann");
    }
  });
});

describe("a post appends its own event", () => {
  it("and queues its webhook jobs, a reader's first post (no row yet to say whether the tenant has an endpoint) as their next", async () => {
    const site = await createTestTenant(server);
    const receiver = await startReceiver();
    await createVerifiedEndpoint(site, receiver, { events: ["comment_created"] });
    const newcomer = await site.reader(`env-new-${randomUUID().slice(0, 8)}`, { name: "New" });
    const first = await newcomer.post("/api/v1/discussions/env-2/comments", { body: "my first" });
    const second = await newcomer.post("/api/v1/discussions/env-2/comments", { body: "my second" });
    expect([first.status, second.status]).toEqual([201, 201]);
    await receiver.waitFor((r) => r.filter((x) => x.event !== "verification").length >= 2);
    expect(
      receiver
        .deliveries()
        .map((d) => d.json.data.comment.id)
        .sort(),
    ).toEqual([first.body.id, second.body.id].sort());
    await receiver.close();
  });
});
