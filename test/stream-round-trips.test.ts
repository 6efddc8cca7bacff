// Opening a stream costs at most one database round trip (issue 8): auth comes from the key cache,
// a discussion with a live channel on the instance needs only its replay (none without
// Last-Event-ID), and one with none is checked, headed and replayed in one statement. Counted on the
// wire: every statement any pg client of this process sends while the stream opens.
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { rawSse, writeEvent } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
const statements: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  // the periodic head check is the one background reader of a stream: out of the way here
  server = await startServer({}, { stream: { headCheckMs: 3_600_000 } });
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

  it("a ticket adds its redemption (with the minting key's state) and nothing else", async () => {
    await t.api.put(`/api/v1/discussions/rt-ticket`, {});
    await writeEvent(server, t.tenantId, "rt-ticket", { count: 3 });
    const minted = await t.api.post("/api/v1/stream/ticket", { discussionId: "rt-ticket" });
    expect(minted.status).toBe(201);
    const first = await counted(url("rt-ticket", `?ticket=${minted.body.ticket}`), {}, "event: connected");
    expect(first.sql).toHaveLength(2);
    expect(first.sql[0]).toMatch(/UPDATE stream_tickets/);
    expect(first.sql[0]).toMatch(/LEFT JOIN api_keys/);
  });
});
