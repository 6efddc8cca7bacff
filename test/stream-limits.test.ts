// Heartbeats, the maximum connection time, connection caps (429), slow readers and shutdown.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse, patchSettings, rawSse, seqsOf, writeEvent, WAIT } from "./support/sse.js";

let server: TestServer;
let n = 0;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

async function setup(s = server): Promise<{ t: TestTenant; id: string }> {
  const t = await createTestTenant(s);
  const id = `l-${++n}`;
  await t.api.put(`/api/v1/discussions/${id}`, {});
  return { t, id };
}

const url = (s: TestServer, id: string, q = "") => `${s.url}/api/v1/stream/${id}${q}`;

describe("heartbeat and maximum connection time", () => {
  it("sends `: heartbeat` comments every heartbeatSeconds and `connection-timeout` after maxConnectionSeconds, then closes", async () => {
    const { t, id } = await setup();
    await patchSettings(server, t.tenantId, { stream: { heartbeatSeconds: 1, maxConnectionSeconds: 2 } });
    const started = Date.now();
    const s = await rawSse(url(server, id), { "x-api-key": t.apiKey });
    await s.waitForEnd(6000);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    const frames = s.text().split("\n\n").filter(Boolean);
    expect(frames[0]).toBe(`id: 0\nevent: connected\ndata: {"discussionId":"${id}","replayed":0,"truncated":false,"heartbeatSeconds":1}`);
    expect(frames.filter((f) => f === ": heartbeat").length).toBeGreaterThanOrEqual(1);
    expect(frames.at(-1)).toBe('event: connection-timeout\ndata: {"reason":"max-connection-time"}');
    expect(server.app.streams.stats().sessions).toBe(0);
  });
});

describe("connection caps", () => {
  it("per tenant (rateLimits.streamConnections): 429 rate_limited with Retry-After, a slot frees on disconnect", async () => {
    const { t, id } = await setup();
    await patchSettings(server, t.tenantId, { rateLimits: { streamConnections: 2 } });
    const a = await rawSse(url(server, id), { "x-api-key": t.apiKey });
    const b = await rawSse(url(server, id), { "x-api-key": t.apiKey });
    expect([a.status, b.status]).toEqual([200, 200]);
    const c = await fetch(url(server, id), { headers: { "x-api-key": t.apiKey } });
    expect(c.status).toBe(429);
    expect(c.headers.get("content-type")).toContain("application/problem+json");
    expect(c.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(c.headers.get("ratelimit-limit")).toBe("2");
    expect(await c.json()).toMatchObject({ status: 429, code: "rate_limited" });
    // another tenant is not affected
    const other = await setup();
    const o = await rawSse(url(server, other.id), { "x-api-key": other.t.apiKey });
    expect(o.status).toBe(200);
    await o.close();
    await a.close();
    await vi.waitFor(async () => {
      const d = await rawSse(url(server, id), { "x-api-key": t.apiKey });
      await d.close();
      expect(d.status).toBe(200);
    }, WAIT);
    await b.close();
  });

  it("per instance (MAX_STREAMS_PER_INSTANCE): 429 across tenants", async () => {
    const small = await startServer({ MAX_STREAMS_PER_INSTANCE: "2" });
    try {
      const x = await setup(small);
      const y = await setup(small);
      const a = await rawSse(url(small, x.id), { "x-api-key": x.t.apiKey });
      const b = await rawSse(url(small, y.id), { "x-api-key": y.t.apiKey });
      expect([a.status, b.status]).toEqual([200, 200]);
      const c = await fetch(url(small, y.id), { headers: { "x-api-key": y.t.apiKey } });
      expect(c.status).toBe(429);
      expect(await c.json()).toMatchObject({ code: "rate_limited" });
      await a.close();
      await b.close();
    } finally {
      await small.stop();
    }
  });
});

describe("a lowered cap (rateLimits.streamConnections)", () => {
  for (const slots of ["Redis", "in memory"] as const) {
    it(`${slots}: admits no stream while as many as the new cap are open; the open ones stay`, async () => {
      // no Redis at all: in the cluster project testEnv names the cluster's nodes instead of REDIS_URL
      const s = slots === "Redis" ? server : await startServer({ REDIS_URL: "", REDIS_CLUSTER_NODES: "" });
      try {
        expect(s.app.runtime.redis === undefined).toBe(slots === "in memory");
        const { t, id } = await setup(s);
        const headers = { "x-api-key": t.apiKey };
        const base = s.app.streams.stats().sessions;
        const open: Awaited<ReturnType<typeof rawSse>>[] = [];
        for (let i = 0; i < 3; i++) open.push(await rawSse(url(s, id), headers));
        expect(open.map((o) => o.status)).toEqual([200, 200, 200]);
        expect((await t.api.patch("/api/v1/settings", { rateLimits: { streamConnections: 2 } })).status).toBe(200);

        const refused = async () => {
          const r = await fetch(url(s, id), { headers });
          expect(r.status).toBe(429);
          expect(r.headers.get("ratelimit-limit")).toBe("2");
          expect(await r.json()).toMatchObject({ status: 429, code: "rate_limited" });
        };
        const closeOne = async () => {
          await open.pop()!.close();
          await vi.waitFor(() => expect(s.app.streams.stats().sessions).toBe(base + open.length), WAIT);
        };
        await refused(); // 3 open, cap 2
        expect(open.every((o) => !o.ended())).toBe(true);
        await closeOne();
        await refused(); // 2 open: at the cap
        await closeOne();
        const admitted = await rawSse(url(s, id), headers); // 1 open: under it
        expect(admitted.status).toBe(200);
        open.push(admitted);
        await refused(); // 2 open again
        await Promise.all(open.map((o) => o.close()));
      } finally {
        if (s !== server) await s.stop();
      }
    });
  }
});

describe("back-pressure", () => {
  it("cuts off a client that stops reading once its buffer passes the bound; others get everything", async () => {
    const { t, id } = await setup();
    const healthy = openSse(url(server, id), { "x-api-key": t.apiKey });
    await healthy.waitFor((f) => f.length === 1);
    const { port } = new URL(server.url);
    const slow = net.connect(Number(port), "127.0.0.1");
    slow.write(`GET /api/v1/stream/${id} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${t.apiKey}\r\n\r\n`);
    await new Promise((resolve) => slow.once("data", resolve));
    slow.pause(); // never reads again
    const before = server.app.streams.stats();
    expect(before.sessions).toBe(2);

    // ~20 MB in bursts of 256 KiB: more than the slow socket's kernel buffers and the 1 MiB bound
    // together, while the healthy reader keeps up between bursts
    const blob = "x".repeat(32 * 1024);
    const bursts = 80;
    const perBurst = 8;
    for (let i = 0; i < bursts; i++) await writeEvent(server, t.tenantId, id, { count: perBurst, data: { blob } });
    const count = bursts * perBurst;
    await healthy.waitForEvents(count, 30_000);
    expect(seqsOf(healthy.events())).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    await vi.waitFor(() => expect(server.app.streams.stats().overflows).toBe(before.overflows + 1), WAIT);
    expect(server.app.streams.stats().sessions).toBe(1);
    healthy.close();
    slow.destroy();
  }, 60_000);
});

describe("graceful shutdown", () => {
  it("sends connection-timeout to every stream and closes it before the server stops", async () => {
    const s = await startServer();
    const { t, id } = await setup(s);
    const a = await rawSse(url(s, id), { "x-api-key": t.apiKey });
    const b = await rawSse(url(s, id), { "x-api-key": t.apiKey });
    await a.waitForText((x) => x.includes("connected"));
    await b.waitForText((x) => x.includes("connected"));
    await s.stop();
    for (const c of [a, b]) {
      await c.waitForEnd();
      expect(c.text().endsWith('event: connection-timeout\ndata: {"reason":"shutdown"}\n\n')).toBe(true);
    }
  });
});
