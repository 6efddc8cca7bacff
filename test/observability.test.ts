// Request ids, access log and Prometheus metrics (contract section 9).
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { testEnv, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse, rawSse } from "./support/sse.js";

const lines: any[] = [];
const raw: string[] = [];
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l));
      }
      done();
    },
  });
  const app = await buildApp(loadConfig(testEnv({ LOG_LEVEL: "info", METRICS_TOKEN: "metrics-token-0123456789" })), {
    migrate: false,
    log: pino({ level: "info" }, sink),
  });
  const url = await app.start();
  server = { url, app, stop: () => app.stop() };
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe("request ids", () => {
  it("every response carries X-Request-Id (the caller's when safe), problem documents carry it as requestId", async () => {
    const own = await fetch(`${server.url}/api/v1/discussions`, { headers: { "x-api-key": t.apiKey, "x-request-id": "req-abc.123" } });
    expect(own.headers.get("x-request-id")).toBe("req-abc.123");
    const unsafe = await fetch(`${server.url}/api/v1/discussions`, {
      headers: { "x-api-key": t.apiKey, "x-request-id": "bad id\twith spaces" },
    });
    expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const problem = await fetch(`${server.url}/api/v1/comments/nope`, { headers: { "x-api-key": t.apiKey, "x-request-id": "trace-42" } });
    expect(problem.status).toBe(404);
    expect(((await problem.json()) as any).requestId).toBe("trace-42");
    const gql = await fetch(`${server.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(gql.headers.get("x-request-id")).toBeTruthy();
  });

  it("each request writes one access-log line at info", async () => {
    const before = lines.filter((l) => l.msg === "request").length;
    await fetch(`${server.url}/api/v1/discussions`, { headers: { "x-api-key": t.apiKey, "x-request-id": "log-1" } });
    await fetch(`${server.url}/api/v1/nowhere`, { headers: { "x-request-id": "log-2" } });
    await expect.poll(() => lines.filter((l) => l.msg === "request").length).toBe(before + 2);
    const mine = lines.filter((l) => l.msg === "request" && (l.reqId === "log-1" || l.reqId === "log-2"));
    expect(mine.map((l) => [l.reqId, l.status, l.level])).toEqual([
      ["log-1", 200, 30],
      ["log-2", 404, 30],
    ]);
    // one reqId key per line (not one from the request's logger and one from the fields)
    for (const l of raw.filter((r) => r.includes('"log-1"') || r.includes('"log-2"'))) expect(l.match(/"reqId"/g)).toHaveLength(1);
  });
});

describe("the stream route (served before fastify's pipeline)", () => {
  it("echoes X-Request-Id, answers refusals as problem documents, and is counted and logged like any route", async () => {
    const metrics = async () =>
      (await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } })).text();
    const count = (text: string, status: number) =>
      Number(
        new RegExp(`http_requests_total\\{route="/api/v1/stream/:discussionId",method="GET",status="${status}"\\} (\\d+)`).exec(
          text,
        )?.[1] ?? 0,
      );
    const before = await metrics();
    expect((await t.api.put("/api/v1/discussions/obs-stream", {})).status).toBe(201);

    const s = await rawSse(`${server.url}/api/v1/stream/obs-stream`, { "x-api-key": t.apiKey, "x-request-id": "stream-1" });
    expect(s.status).toBe(200);
    expect(s.headers.get("x-request-id")).toBe("stream-1");
    await s.waitForText((x) => x.includes("event: connected"));

    const refused = await fetch(`${server.url}/api/v1/stream/obs-stream`, { headers: { "x-request-id": "stream-2" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toBe("stream-2");
    expect(refused.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await refused.json()).toMatchObject({ code: "unauthenticated", requestId: "stream-2" });
    const undecodable = await fetch(`${server.url}/api/v1/stream/%E0%A4%A`, { headers: { "x-api-key": t.apiKey } });
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toMatchObject({ code: "invalid_parameter" });
    // more path segments, or none, are not the stream's: fastify's 404
    expect((await fetch(`${server.url}/api/v1/stream/obs-stream/x`, { headers: { "x-api-key": t.apiKey } })).status).toBe(404);
    expect((await fetch(`${server.url}/api/v1/stream/`, { headers: { "x-api-key": t.apiKey } })).status).toBe(404);

    const after = await metrics();
    expect(count(after, 200)).toBe(count(before, 200) + 1);
    expect(count(after, 401)).toBe(count(before, 401) + 1);
    expect(count(after, 400)).toBe(count(before, 400) + 1);
    await expect
      .poll(() => lines.filter((l) => l.reqId === "stream-1" || l.reqId === "stream-2").map((l) => [l.route, l.status]))
      .toEqual([
        ["/api/v1/stream/:discussionId", 200],
        ["/api/v1/stream/:discussionId", 401],
      ]);
    await s.close();
  });
});

describe("GET /metrics", () => {
  it("needs the Bearer METRICS_TOKEN when set, and shows requests, operations, events, streams, queue, breakers, pool and refusals", async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    const as = t.as({ key: t.apiKey, identity: await t.identity("metrics") });
    expect((await as.post("/api/v1/discussions/m1/comments", { body: "counted" })).status).toBe(201);
    // an event written to a stream: the fan-out's time is measured
    const stream = openSse(`${server.url}/api/v1/stream/m1`, { "x-api-key": t.apiKey });
    await stream.waitFor((frames) => frames.some((f) => f.event === "connected"));
    expect((await as.post("/api/v1/discussions/m1/comments", { body: "streamed" })).status).toBe(201);
    await stream.waitForEvents(1);
    stream.close();
    await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": t.apiKey },
      body: JSON.stringify({ query: "query ListForMetrics { discussions { items { id } } }" }),
    });
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{route="\/api\/v1\/discussions\/:id\/comments",method="POST",status="201"\} \d+/);
    expect(text).toContain("http_request_duration_seconds_bucket");
    expect(text).toMatch(/graphql_operations_total\{operation="ListForMetrics",outcome="ok"\} 1/);
    expect(text).toMatch(/events_appended_total [1-9]/);
    expect(text).toMatch(/stream_fanout_seconds_count [1-9]/);
    for (const name of [
      "streams_open",
      "webhook_queue_depth",
      "webhook_oldest_job_age_seconds",
      "webhook_endpoints",
      "db_pool_connections",
      "rate_limit_refusals_total",
      "fanout_lag_seconds",
      "webhook_deliveries_total",
    ]) {
      expect(text, name).toContain(name);
    }
  });
});
