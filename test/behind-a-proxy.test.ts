// Behind a proxy (contract section 31): with TRUST_PROXY naming the proxy, a request from it is from
// the right-most X-Forwarded-For address not itself trusted, and every per-address limit counts that
// address (the hosted sign-in's budget, presence's reader-less streams on the SSE route answered
// before fastify). From any other peer (or with TRUST_PROXY unset) X-Forwarded-For is ignored. And
// no URL the service writes comes from the request's Host or X-Forwarded-Host (even from a trusted
// proxy): PUBLIC_URL, else the address the service listens on.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { openSse, type SseClient } from "./support/sse.js";
import { newId } from "../src/lib/ids.js";
import { loadConfig } from "../src/config.js";
import { testEnv } from "./support/server.js";

const BUDGET = 3;
let trusting: TestServer;
let plain: TestServer;
const open: SseClient[] = [];

beforeAll(async () => {
  const env = { SIGN_IN_REQUESTS_PER_ADDRESS: String(BUDGET), STREAM_PRESENCE_PER_ADDRESS: "1" };
  [trusting, plain] = await Promise.all([startServer({ ...env, TRUST_PROXY: "127.0.0.1, 10.0.0.0/8" }), startServer(env)]);
});
afterAll(async () => {
  for (const c of open) c.close();
  await Promise.all([trusting?.stop(), plain?.stop()]);
});

/** The hosted sign-in page of a site that does not exist: 404 while the address's budget lasts, then 429. */
async function signIn(server: TestServer, site: string, forwardedFor?: string): Promise<number> {
  const r = await fetch(`${server.url}/auth/v1/${site}/sign-in`, { headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {} });
  await r.arrayBuffer();
  return r.status;
}

async function spend(server: TestServer, site: string, forwardedFor: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i <= BUDGET; i++) statuses.push(await signIn(server, site, forwardedFor));
  return statuses;
}

const SPENT = [...Array<number>(BUDGET).fill(404), 429];

describe("TRUST_PROXY", () => {
  it("is a list of addresses and CIDRs; anything else is refused at start", () => {
    expect(loadConfig(testEnv({ TRUST_PROXY: "10.0.0.1, fd00::/8,loopback" })).TRUST_PROXY).toEqual(["10.0.0.1", "fd00::/8", "loopback"]);
    expect(() => loadConfig(testEnv({ TRUST_PROXY: "proxy.example" }))).toThrow(/TRUST_PROXY/);
  });

  it("gives each client a proxy forwards its own sign-in budget", async () => {
    const site = newId("site");
    expect(await spend(trusting, site, "203.0.113.1")).toEqual(SPENT);
    // another client behind the same proxy is not shut out
    expect(await signIn(trusting, site, "203.0.113.2")).toBe(404);
    // nor is the proxy's own address
    expect(await signIn(trusting, site)).toBe(404);
  });

  it("takes the right-most address of a chain that is not itself trusted", async () => {
    const site = newId("site");
    expect(await spend(trusting, site, "198.51.100.9, 10.1.2.3")).toEqual(SPENT);
    // whatever the client wrote further left, it is still 198.51.100.9 behind the trusted 10.1.2.3
    expect(await signIn(trusting, site, "192.0.2.50, 198.51.100.9, 10.1.2.3")).toBe(429);
    expect(await signIn(trusting, site, "198.51.100.9")).toBe(429);
    // a different client through the same two proxies
    expect(await signIn(trusting, site, "198.51.100.10, 10.1.2.3")).toBe(404);
  });

  it("without TRUST_PROXY, X-Forwarded-For is ignored: every caller from one peer shares its budget", async () => {
    const site = newId("site");
    expect(await spend(plain, site, "203.0.113.1")).toEqual(SPENT);
    expect(await signIn(plain, site, "203.0.113.2")).toBe(429);
    expect(await signIn(plain, site)).toBe(429);
  });

  it("counts presence of the stream (answered before fastify) by the forwarded client's address", async () => {
    async function readingOf(server: TestServer, clients: string[]): Promise<number> {
      const t = await createTestTenant(server);
      const id = newId("proxy");
      expect((await t.api.put(`/api/v1/discussions/${id}`, {})).status).toBe(201);
      for (const xff of clients) {
        const c = openSse(`${server.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey, "x-forwarded-for": xff });
        open.push(c);
        await c.waitFor((f) => f.some((x) => x.event === "connected"));
      }
      let n = -1;
      await vi.waitFor(
        async () => {
          const r = await fetch(`${server.url}/api/v1/discussions/counts?ids=${id}&presence=true`, { headers: { "x-api-key": t.apiKey } });
          n = ((await r.json()) as { reading: Record<string, number> }).reading[id] ?? -1;
          expect(n).toBeGreaterThan(0);
        },
        { timeout: 5_000, interval: 50 },
      );
      return n;
    }
    // three clients behind the proxy are three readers; without the proxy trusted, one address (counted once)
    expect(await readingOf(trusting, ["203.0.113.1", "203.0.113.2", "203.0.113.3"])).toBe(3);
    expect(await readingOf(plain, ["203.0.113.1", "203.0.113.2", "203.0.113.3"])).toBe(1);
  });
});

/** A GET with headers fetch will not forge (Host): status, headers and body. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const FORGED = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" };

describe("the service's own address", () => {
  it("never takes a written URL from Host or X-Forwarded-Host, even from a trusted proxy", async () => {
    for (const server of [trusting, plain]) {
      const t = await createTestTenant(server);
      const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "proxy" })).body.key as string;
      const id = newId("host");
      expect((await t.api.put(`/api/v1/discussions/${id}`, { title: "Hosts" })).status).toBe(201);
      const ann = await t.reader("ann", { name: "Ann" });
      // a second page, for the fragment's rel="next"
      for (let i = 0; i < 21; i++) expect((await ann.post(`/api/v1/discussions/${id}/comments`, { body: `c${i}` })).status).toBe(201);

      const fragment = await get(`${server.url}/embed/v1/discussions/${id}.html?key=${pk}`, FORGED);
      expect(fragment.status).toBe(200);
      expect(/api-base="([^"]*)"/.exec(fragment.body)?.[1]).toBe(server.url);
      expect(/<a rel="next" href="([^"]*)"/.exec(fragment.body)?.[1]?.startsWith(`${server.url}/embed/v1/discussions/`)).toBe(true);

      const feed = await get(`${server.url}/api/v1/feeds/discussions/${id}.atom?key=${pk}`, FORGED);
      expect(feed.status).toBe(200);
      expect(feed.body).toContain(`href="${server.url}/api/v1/feeds/discussions/${id}.atom?key=${pk}"`);

      const openapi = await get(`${server.url}/api/v1/openapi.json`, FORGED);
      expect((JSON.parse(openapi.body) as { servers: unknown }).servers).toEqual([{ url: server.url }]);

      const index = await get(`${server.url}/`, { ...FORGED, accept: "text/html" });
      expect(index.status).toBe(200);
      for (const answer of [fragment, feed, openapi, index]) expect(answer.body).not.toContain("evil.example");
    }
  });
});
