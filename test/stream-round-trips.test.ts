// Opening a stream costs at most one database round trip: auth comes from the key cache,
// a discussion with a live channel on the instance needs only its replay (none without
// Last-Event-ID), and one with none is checked, headed and replayed in one statement. Counted on the
// wire: every statement any pg client of this process sends while the stream opens.
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { rawSse, writeEvent } from "./support/sse.js";
import { hashTicket, ticketTenant } from "../src/stream-engine/ticket-redemption.js";

let server: TestServer;
let t: TestTenant;
const statements: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  // the periodic head check is the one background reader of a stream, and the search projector
  // (woken by every write, sweeping every SEARCH_POLL_MS) a background reader of the log: out of the way here
  server = await startServer({ RUN_SEARCH_PROJECTOR: "0" }, { stream: { headCheckMs: 3_600_000 } });
  t = await createTestTenant(server);
  (pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
    const q = args[0];
    statements.push(typeof q === "string" ? q : (q?.text ?? String(q)));
    return (originalQuery as any).apply(this, args);
  };
});
afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await server?.stop();
});

const open: Awaited<ReturnType<typeof rawSse>>[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const url = (id: string, q = "") => `${server.url}/api/v1/stream/${id}${q}`;

/** Opens a stream, waits for `until` in its text; the statements sent meanwhile. */
async function counted(u: string, headers: Record<string, string>, until: string): Promise<{ sql: string[]; text: string }> {
  statements.length = 0;
  const s = await rawSse(u, headers);
  open.push(s);
  expect(s.status).toBe(200);
  await s.waitForText((x) => x.includes(until));
  return { sql: [...statements], text: s.text() };
}

describe("stream connects", () => {
  it("cost at most one database round trip: one statement for a new channel, the replay alone for a live one", async () => {
    const ids = ["rt-1", "rt-warm"];
    for (const id of ids) await t.api.put(`/api/v1/discussions/${id}`, {});
    await writeEvent(server, t.tenantId, "rt-1", { count: 5 });
    // warm: the key cache and the stream settings cache (steady state)
    const warm = await rawSse(url("rt-warm"), { "x-api-key": t.apiKey });
    await warm.waitForText((x) => x.includes("event: connected"));
    await warm.close();

    const first = await counted(url("rt-1"), { "x-api-key": t.apiKey, "last-event-id": "2" }, "id: 5\n");
    expect(first.text).toContain('"replayed":3');
    expect(first.sql).toHaveLength(1);
    expect(first.sql[0]).toMatch(/FROM discussions d\s+LEFT JOIN LATERAL/);

    const replay = await counted(url("rt-1"), { "x-api-key": t.apiKey, "last-event-id": "1" }, "id: 5\n");
    expect(replay.text).toContain('"replayed":4');
    expect(replay.sql).toHaveLength(1);
    expect(replay.sql[0]).toMatch(/FROM events WHERE/);

    const live = await counted(url("rt-1"), { "x-api-key": t.apiKey }, "event: connected");
    expect(live.text).toContain("id: 5\n");
    expect(live.sql).toHaveLength(0);
  });

  it("a 404 for an unknown discussion is one statement too, and leaves no channel behind", async () => {
    // the streams of the test before have gone (closed by the client)
    await vi.waitFor(() => expect(server.app.streams.stats().channels).toBe(0), { timeout: 5_000, interval: 10 });
    statements.length = 0;
    const res = await fetch(url("rt-nowhere"), { headers: { "x-api-key": t.apiKey, "last-event-id": "3" } });
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe("not_found");
    expect(statements).toHaveLength(1);
    expect(server.app.streams.stats()).toMatchObject({ channels: 0, sessions: 0 });
  });

  it("a ticket is redeemed in the connect's one statement: with the opening read, with the replay, or alone", async () => {
    await t.api.put(`/api/v1/discussions/rt-ticket`, {});
    await writeEvent(server, t.tenantId, "rt-ticket", { count: 3 });
    expect(server.app.streams.knowsTenant(t.tenantId)).toBe(true); // the first test's streams read its settings
    const minted = await t.api.post("/api/v1/stream/ticket", { discussionId: "rt-ticket" });
    expect(minted.status).toBe(201);
    const ticketUrl = url("rt-ticket", `?ticket=${minted.body.ticket}`);

    // no channel yet: redemption (with the minting key's state), existence, head and replay
    const first = await counted(ticketUrl, { "last-event-id": "1" }, "id: 3\n");
    expect(first.text).toContain('"replayed":2');
    expect(first.sql).toHaveLength(1);
    expect(first.sql[0]).toMatch(/UPDATE stream_tickets/);
    expect(first.sql[0]).toMatch(/LEFT JOIN api_keys/);
    expect(first.sql[0]).toMatch(/FROM discussions d\s+LEFT JOIN LATERAL/);

    // the EventSource reconnects while the channel is live: redemption and replay
    const again = await counted(ticketUrl, { "last-event-id": "2" }, "id: 3\n");
    expect(again.text).toContain('"replayed":1');
    expect(again.sql).toHaveLength(1);
    expect(again.sql[0]).toMatch(/UPDATE stream_tickets[\s\S]*FROM events WHERE/);
    await open[0]!.waitForText((x) => x.includes("event: connection-timeout")); // superseded

    // a fresh ticket, live only, on the live channel: the redemption alone
    const other = await t.api.post("/api/v1/stream/ticket", { discussionId: "rt-ticket" });
    const live = await counted(url("rt-ticket", `?ticket=${other.body.ticket}`), {}, "event: connected");
    expect(live.text).toContain("id: 3\n");
    expect(live.sql).toHaveLength(1);
    expect(live.sql[0]).toMatch(/UPDATE stream_tickets/);
    expect(live.sql[0]).not.toMatch(/FROM events/);
  });

  it("a ticket of a tenant whose row the instance has not cached is redeemed first, and then the tenant is known", async () => {
    const fresh = await createTestTenant(server);
    await fresh.api.put(`/api/v1/discussions/rt-fresh`, {});
    await writeEvent(server, fresh.tenantId, "rt-fresh", { count: 2 });
    const a = await fresh.api.post("/api/v1/stream/ticket", { discussionId: "rt-fresh" });
    expect(server.app.streams.knowsTenant(fresh.tenantId)).toBe(true); // its key's row came with the tenant's
    // as after a restart or a settings change
    server.app.runtime.services.authCache.invalidateTenant(fresh.tenantId);
    expect(server.app.streams.knowsTenant(fresh.tenantId)).toBe(false);
    const first = await counted(url("rt-fresh", `?ticket=${a.body.ticket}`), { "last-event-id": "0" }, "id: 2\n");
    expect(first.text).toContain('"replayed":2');
    expect(first.sql[0]).toMatch(/UPDATE stream_tickets/);
    expect(first.sql[0]).not.toMatch(/FROM discussions/);
    expect(first.sql.length).toBeGreaterThan(1);
    expect(server.app.streams.knowsTenant(fresh.tenantId)).toBe(true);

    await fresh.api.put(`/api/v1/discussions/rt-other`, {});
    await writeEvent(server, fresh.tenantId, "rt-other", { count: 1 });
    const b = await fresh.api.post("/api/v1/stream/ticket", { discussionId: "rt-other" });
    const next = await counted(url("rt-other", `?ticket=${b.body.ticket}`), { "last-event-id": "0" }, "id: 1\n");
    expect(next.sql).toHaveLength(1);
  });

  it("a ticket that names another tenant than its own still opens its own tenant's stream", async () => {
    // tickets minted before tickets named their tenant are random: whatever tenant they seem to
    // name, the redemption decides; here one seems to name a known tenant (t) but is fresh's
    const fresh = await createTestTenant(server);
    await fresh.api.put(`/api/v1/discussions/rt-ticket`, {}); // the same id as t's, another discussion
    await writeEvent(server, fresh.tenantId, "rt-ticket", { count: 4 });
    const raw = `st_${Buffer.from(t.tenantId.slice(4), "base64url").toString("hex")}${"ab".repeat(20)}`;
    expect(ticketTenant(raw)).toBe(t.tenantId);
    await server.app.runtime.services.prisma.streamTicket.create({
      data: { id: hashTicket(raw), tenantId: fresh.tenantId, discussionId: "rt-ticket", expiresAt: new Date(Date.now() + 60_000) },
    });
    const s = await rawSse(url("rt-ticket", `?ticket=${raw}`), { "last-event-id": "2" });
    open.push(s);
    expect(s.status).toBe(200);
    await s.waitForText((x) => x.includes("id: 4\n"));
    expect(s.text()).toContain('"replayed":2');
    expect(s.text()).toContain(`"tenantId":"${fresh.tenantId}"`);
    expect(s.text()).not.toContain(`"tenantId":"${t.tenantId}"`);
  });

  it("an unknown ticket that names a known tenant is a 401 and leaves no channel or slot behind", async () => {
    await vi.waitFor(() => expect(server.app.streams.stats()).toMatchObject({ channels: 0, sessions: 0 }), {
      timeout: 5_000,
      interval: 10,
    });
    const raw = `st_${Buffer.from(t.tenantId.slice(4), "base64url").toString("hex")}${"cd".repeat(20)}`;
    const res = await fetch(url("rt-1", `?ticket=${raw}`), { headers: { "last-event-id": "1" } });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("unauthenticated");
    expect(server.app.streams.stats()).toMatchObject({ channels: 0, sessions: 0 });
  });
});
