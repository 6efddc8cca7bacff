// Last-Event-ID replay from the event log: the window (count and age), `truncated`, and the merge of
// replayed and live events without duplicates or gaps.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse, patchSettings, rawSse, seqsOf, writeEvent } from "./support/sse.js";

let server: TestServer;
let n = 0;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

async function setup(): Promise<{ t: TestTenant; id: string }> {
  const t = await createTestTenant(server);
  const id = `r-${++n}`;
  await t.api.put(`/api/v1/discussions/${id}`, {});
  return { t, id };
}

const url = (id: string, q = "") => `${server.url}/api/v1/stream/${id}${q}`;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("replay after Last-Event-ID", () => {
  it("replays the events after the id, then goes live", async () => {
    const { t, id } = await setup();
    await writeEvent(server, t.tenantId, id, { count: 5 });
    const es = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "2" });
    await es.waitForEvents(3);
    // `connected` carries the id the replay starts after: ids on the stream never go backwards
    expect(es.frames[0]).toMatchObject({ event: "connected", id: "2", data: { discussionId: id, replayed: 3, truncated: false } });
    await writeEvent(server, t.tenantId, id);
    await es.waitForEvents(4);
    expect(seqsOf(es.events())).toEqual([3, 4, 5, 6]);
    es.close();
  });

  it("takes ?lastEventId= too (the header wins when both are sent)", async () => {
    const { t, id } = await setup();
    await writeEvent(server, t.tenantId, id, { count: 4 });
    const s = await rawSse(url(id, "?lastEventId=1"), { "x-api-key": t.apiKey });
    await s.waitForText((x) => x.includes("id: 4\n"));
    expect(s.text()).toContain('"replayed":3');
    await s.close();
    const both = await rawSse(url(id, "?lastEventId=1"), { "x-api-key": t.apiKey, "last-event-id": "3" });
    await both.waitForText((x) => x.includes("id: 4\n"));
    expect(both.text()).toContain('"replayed":1');
    expect(both.text()).not.toContain("id: 2\n");
    await both.close();
  });

  it("without Last-Event-ID replays nothing: live only", async () => {
    const { t, id } = await setup();
    await writeEvent(server, t.tenantId, id, { count: 3 });
    const es = openSse(url(id), { "x-api-key": t.apiKey });
    await es.waitFor((f) => f.length === 1);
    expect(es.frames[0]).toMatchObject({ id: "3", data: { replayed: 0, truncated: false } }); // the head
    await writeEvent(server, t.tenantId, id);
    await es.waitForEvents(1);
    expect(seqsOf(es.events())).toEqual([4]);
    es.close();
  });

  it("an id at or past the head replays nothing and misses nothing after it", async () => {
    const { t, id } = await setup();
    await writeEvent(server, t.tenantId, id, { count: 2 });
    for (const [i, last] of ["2", "999"].entries()) {
      const es = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": last });
      await es.waitFor((f) => f.length === 1);
      expect(es.frames[0]!.data).toMatchObject({ replayed: 0, truncated: false });
      // an id past the head continues after the head (a later position would make the next ids go backwards)
      expect(es.frames[0]!.id).toBe(String(2 + i)); // the head (each round writes one more event)
      const [seq] = await writeEvent(server, t.tenantId, id);
      await es.waitForEvents(1);
      expect(seqsOf(es.events())).toEqual([seq]);
      es.close();
    }
  });

  it("keeps at most replay.maxEvents: an older id gets what is kept and truncated: true", async () => {
    const { t, id } = await setup();
    await patchSettings(server, t.tenantId, { replay: { maxEvents: 3 } });
    await writeEvent(server, t.tenantId, id, { count: 6 });
    const old = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "1" });
    await old.waitForEvents(3);
    expect(old.frames[0]!.data).toMatchObject({ replayed: 3, truncated: true });
    expect(old.frames[0]!.id).toBe("3"); // truncated: the seq just before the oldest kept event
    expect(seqsOf(old.events())).toEqual([4, 5, 6]);
    old.close();
    const inside = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "3" });
    await inside.waitForEvents(3);
    expect(inside.frames[0]).toMatchObject({ id: "3", data: { replayed: 3, truncated: false } });
    inside.close();
    const zero = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "0" });
    await zero.waitForEvents(3);
    expect(zero.frames[0]!.data).toMatchObject({ replayed: 3, truncated: true });
    zero.close();
  });

  it("keeps only events younger than replay.maxAgeSeconds", async () => {
    const { t, id } = await setup();
    await patchSettings(server, t.tenantId, { replay: { maxAgeSeconds: 3600 } });
    await writeEvent(server, t.tenantId, id, { count: 5 });
    await server.app.runtime.services.prisma.event.updateMany({
      where: { tenantId: t.tenantId, discussionId: id, seq: { lte: 3 } },
      data: { occurredAt: new Date(Date.now() - 2 * 3600_000) },
    });
    const es = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "1" });
    await es.waitForEvents(2);
    expect(es.frames[0]).toMatchObject({ id: "3", data: { replayed: 2, truncated: true } });
    expect(seqsOf(es.events())).toEqual([4, 5]);
    es.close();
    const all = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "0" });
    await all.waitFor((f) => f.length >= 1);
    await all.waitForEvents(2);
    expect(all.frames[0]!.data).toMatchObject({ truncated: true });
    all.close();
  });

  it("paces a replay larger than the client's buffer bound instead of cutting the client off", async () => {
    const { t, id } = await setup();
    await writeEvent(server, t.tenantId, id, { count: 300, data: { blob: "y".repeat(8192) } }); // ~2.5 MB > 1 MiB
    const overflows = server.app.streams.stats().overflows;
    const es = openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "0" });
    await es.waitForEvents(300, 20_000);
    expect(es.frames[0]!.data).toMatchObject({ replayed: 300, truncated: false });
    expect(seqsOf(es.events())).toEqual(range(1, 300));
    expect(server.app.streams.stats().overflows).toBe(overflows);
    es.close();
  });

  it("merges replay and live without duplicates or gaps while events are being written", async () => {
    const { t, id } = await setup();
    const total = 120;
    const clients: ReturnType<typeof openSse>[] = [];
    const writer = (async () => {
      for (let i = 0; i < total; i++) await writeEvent(server, t.tenantId, id);
    })();
    // clients join at different moments, each asking for everything since the start
    for (let i = 0; i < 12; i++) {
      clients.push(openSse(url(id), { "x-api-key": t.apiKey, "last-event-id": "0" }));
      await new Promise((r) => setTimeout(r, 15));
    }
    await writer;
    for (const c of clients) {
      await c.waitForEvents(total);
      expect(seqsOf(c.events())).toEqual(range(1, total));
      expect(c.frames.filter((f) => f.event === "connected")).toHaveLength(1);
      c.close();
    }
  });

  it("an EventSource reconnects after connection-timeout with Last-Event-ID and misses nothing", async () => {
    const { t, id } = await setup();
    await patchSettings(server, t.tenantId, { stream: { maxConnectionSeconds: 1 } });
    const es = openSse(url(id), { "x-api-key": t.apiKey });
    await es.waitFor((f) => f.length === 1);
    await writeEvent(server, t.tenantId, id, { count: 2 });
    await es.waitFor((f) => f.some((x) => x.event === "connection-timeout"), 5000);
    // written while the client is away (eventsource waits 3 s before reconnecting)
    await writeEvent(server, t.tenantId, id, { count: 3 });
    await es.waitFor((f) => f.filter((x) => x.event === "connected").length === 2, 8000);
    await es.waitForEvents(5);
    expect(seqsOf(es.events())).toEqual([1, 2, 3, 4, 5]);
    const connected = es.frames.filter((f) => f.event === "connected");
    expect(connected[1]!.data).toMatchObject({ replayed: 3, truncated: false });
    es.close();
  }, 20_000);
});
