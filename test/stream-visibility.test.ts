// Who sees what on a stream: audience "all" to everyone, "moderators" only to a backend's own
// stream (X-API-Key header holding moderate_content, no reader identity) — never to tickets or
// ?token= (browsers) nor to streams bound to a reader — and "reader" only to streams bound to that
// reader (ticket minted with an identity, or X-API-Key + X-Service-Identity). Replay filters the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { createKey, openSse, patchSettings, writeEvent, type SseClient } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
let plainKey: string;
let modKey: string;
let n = 0;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  plainKey = await createKey(server, t.tenantId, []);
  modKey = await createKey(server, t.tenantId, ["moderate_content"]);
});
afterAll(() => server?.stop());

const url = (id: string, q = "") => `${server.url}/api/v1/stream/${id}${q}`;

async function ticket(id: string, key: string, sub?: string): Promise<string> {
  const creds = sub ? { key, identity: await t.identity(sub) } : { key };
  const r = await t.as(creds).post("/api/v1/stream/ticket", { discussionId: id });
  expect(r.status).toBe(201);
  return r.body.ticket;
}

/** The kinds of stream, all on one discussion. */
async function streams(id: string, lastEventId?: string) {
  const extra: Record<string, string> = lastEventId ? { "last-event-id": lastEventId } : {};
  const s: Record<string, SseClient> = {
    plain: openSse(url(id), { "x-api-key": plainKey, ...extra }),
    moderator: openSse(url(id), { "x-api-key": modKey, ...extra }),
    aliceHeader: openSse(url(id), { "x-api-key": plainKey, "x-service-identity": await t.identity("alice"), ...extra }),
    aliceTicket: openSse(url(id, `?ticket=${await ticket(id, plainKey, "alice")}`), extra),
    bobTicket: openSse(url(id, `?ticket=${await ticket(id, plainKey, "bob")}`), extra),
    moderatorTicket: openSse(url(id, `?ticket=${await ticket(id, modKey)}`), extra),
    moderatorKeyAsAlice: openSse(url(id), { "x-api-key": modKey, "x-service-identity": await t.identity("alice"), ...extra }),
    moderatorToken: openSse(url(id, `?token=${modKey}`), extra),
  };
  await Promise.all(Object.values(s).map((c) => c.waitFor((f) => f.some((x) => x.event === "connected"))));
  return s;
}

/** Waits for the terminating discussion_unlocked on every stream, then returns what each saw. */
async function seen(s: Record<string, SseClient>, map: (f: SseClient["frames"][number]) => string) {
  await Promise.all(Object.values(s).map((c) => c.waitFor(() => c.events().some((f) => f.event === "discussion_unlocked"))));
  const out: Record<string, string[]> = {};
  for (const [name, c] of Object.entries(s)) {
    out[name] = c.events().map(map);
    c.close();
  }
  return out;
}

describe("stream visibility", () => {
  it("filters events written through the domain by audience, live and in replay", async () => {
    const id = `v-${++n}`;
    await t.api.put(`/api/v1/discussions/${id}`, {});
    const live = await streams(id);
    await writeEvent(server, t.tenantId, id, { type: "discussion_locked" }); // 1 all
    await writeEvent(server, t.tenantId, id, { type: "comment_rejected", audience: "moderators", data: { comment: {} } }); // 2
    await writeEvent(server, t.tenantId, id, { type: "notification_reply", audience: "reader", readerId: "alice", data: {} }); // 3
    await writeEvent(server, t.tenantId, id, { type: "comment_created", audience: "reader", readerId: "bob", data: {} }); // 4
    await writeEvent(server, t.tenantId, id, { type: "discussion_unlocked" }); // 5 all
    const expected = {
      plain: ["1", "5"],
      moderator: ["1", "2", "5"],
      aliceHeader: ["1", "3", "5"],
      aliceTicket: ["1", "3", "5"],
      bobTicket: ["1", "4", "5"],
      moderatorTicket: ["1", "5"],
      moderatorKeyAsAlice: ["1", "3", "5"],
      moderatorToken: ["1", "5"],
    };
    expect(await seen(live, (f) => f.id)).toEqual(expected);

    const replayed = await streams(id, "0");
    expect(await seen(replayed, (f) => f.id)).toEqual(expected);
    for (const [name, c] of Object.entries(replayed)) {
      expect(c.frames[0]!.data.replayed, name).toBe(expected[name as keyof typeof expected].length);
    }
  });

  it("through the comments API: a pending comment reaches only its author, a reply notification only the parent's author", async () => {
    const id = `v-${++n}`;
    await t.api.put(`/api/v1/discussions/${id}`, {});
    const s = await streams(id);
    const alice = t.as({ key: plainKey, identity: await t.identity("alice") });
    const bob = t.as({ key: plainKey, identity: await t.identity("bob") });
    const mod = t.as({ key: modKey });

    await patchSettings(server, t.tenantId, { moderation: "pre" });
    const pending = await alice.post(`/api/v1/discussions/${id}/comments`, { body: "first, pending" });
    expect(pending.status).toBe(201);
    expect(pending.body.status).toBe("pending");
    expect((await mod.post(`/api/v1/comments/${pending.body.id}/approve`)).status).toBe(200);
    await patchSettings(server, t.tenantId, { moderation: "post" });
    const reply = await bob.post(`/api/v1/discussions/${id}/comments`, { body: "a reply", parentId: pending.body.id });
    expect(reply.status).toBe(201);
    const spam = await bob.post(`/api/v1/discussions/${id}/comments`, { body: "spam" });
    expect((await mod.post(`/api/v1/comments/${spam.body.id}/reject`)).status).toBe(200);
    await mod.post(`/api/v1/discussions/${id}/lock`);
    await mod.post(`/api/v1/discussions/${id}/unlock`);

    const got = await seen(s, (f) => `${f.event}${f.data.data.comment?.status === "pending" ? "(pending)" : ""}`);
    const publicEvents = [
      "comment_approved",
      "comment_created",
      "comment_created",
      "comment_created",
      "discussion_locked",
      "discussion_unlocked",
    ];
    const withRejection = [...publicEvents.slice(0, 4), "comment_rejected", ...publicEvents.slice(4)];
    expect(got.plain).toEqual(publicEvents);
    expect(got.bobTicket).toEqual(publicEvents);
    expect(got.moderator).toEqual(withRejection);
    expect(got.moderatorTicket).toEqual(publicEvents);
    expect(got.moderatorToken).toEqual(publicEvents);
    const forAlice = ["comment_created(pending)", ...publicEvents.slice(0, 3), "notification_reply", ...publicEvents.slice(3)];
    expect(got.aliceHeader).toEqual(forAlice);
    expect(got.aliceTicket).toEqual(forAlice);
    expect(got.moderatorKeyAsAlice).toEqual(forAlice);
  });
});
