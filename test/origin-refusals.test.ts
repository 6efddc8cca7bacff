// A refused browser origin is logged once per origin and tenant (src/auth/origins.ts), with what to
// set: a request with a publishable key from an origin its tenant does not list, a stream ticket
// redeemed from one, and a preflight from an origin no tenant lists (its tenant unknown).
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { testEnv, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";

const lines: { msg: string; origin?: string; tenantId?: string | null; level: number }[] = [];
let server: TestServer;
let t: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const app = await buildApp(loadConfig(testEnv({ LOG_LEVEL: "info" })), { migrate: false, log: pino({ level: "info" }, sink) });
  server = { url: await app.start(), app, stop: () => app.stop() };
  t = await createTestTenant(server);
  other = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: ["https://news.example"] })).status).toBe(200);
});
afterAll(() => server?.stop());

const refusals = (origin: string) => lines.filter((l) => l.origin === origin && /refused/.test(l.msg));

describe("a refused origin", () => {
  it("is logged once per origin and tenant, naming the setting, however often it is refused", async () => {
    const keyOf = async (tenant: TestTenant) => (await tenant.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const mine = client(server.url, { key: await keyOf(t) });
    const theirs = client(server.url, { key: await keyOf(other) });
    const origin = "https://blog.unlisted.example";
    for (let i = 0; i < 4; i++) {
      const r = await mine.get("/api/v1/discussions", { headers: { origin } });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("origin_not_allowed");
      const g = await mine.raw("POST", "/graphql", { query: "{ discussions { items { id } } }" }, { headers: { origin } });
      expect(g.body.errors[0].extensions.code).toBe("origin_not_allowed");
    }
    expect((await theirs.get("/api/v1/discussions", { headers: { origin } })).status).toBe(403);
    expect((await theirs.get("/api/v1/discussions", { headers: { origin } })).status).toBe(403);
    // an allowed origin is not logged
    expect((await mine.get("/api/v1/discussions", { headers: { origin: "https://news.example" } })).status).toBe(200);

    const logged = refusals(origin);
    expect(logged.map((l) => l.tenantId).sort()).toEqual([t.tenantId, other.tenantId].sort());
    expect(logged.every((l) => l.level === 40 && l.msg.includes("allowedOrigins"))).toBe(true);
    expect(refusals("https://news.example")).toEqual([]);
  });

  it("is logged once per origin when a preflight is refused (REST and /graphql), the tenant not yet known", async () => {
    const origin = "https://preflight.unlisted.example";
    for (const path of ["/api/v1/discussions", "/graphql", "/api/v1/discussions", "/graphql"]) {
      const r = await fetch(`${server.url}${path}`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-api-key" },
      });
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
    }
    const logged = refusals(origin);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.tenantId).toBeNull();
    expect(logged[0]!.msg).toContain("allowedOrigins");
    // an allowed origin's preflight is answered and not logged
    const ok = await fetch(`${server.url}/graphql`, {
      method: "OPTIONS",
      headers: { origin: "https://news.example", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key" },
    });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://news.example");
    expect(refusals("https://news.example")).toEqual([]);
  });
});
