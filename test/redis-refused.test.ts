// An instance whose Redis refuses it for a while — its user switched off while Redis keeps running and
// keeps its state (a password rotated before the instances, an ACL change) — keeps serving: writes
// answer, an open stream gets the events written meanwhile from the log (the hub's head check), and
// once Redis lets it in again its subscriptions are live again; nothing ends the process (vitest
// fails a file on an unhandled rejection). Redis is this file's own; the database is the run's.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startOwnRedis, type OwnRedis, type OwnRedisUser } from "./support/own-services.js";
import { startServer, type TestServer } from "./support/server.js";
import { openSse, WAIT } from "./support/sse.js";

let own: OwnRedis;
let user: OwnRedisUser;
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  own = await startOwnRedis();
  user = own.user("service-refused");
  // a short head check: the events written while the bus is refused reach the stream from the log soon
  server = await startServer({ REDIS_URL: user.url }, { stream: { headCheckMs: 200 } });
  t = await createTestTenant(server);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await own?.stop();
});

describe("an instance its Redis refuses for a while", () => {
  it("answers writes, streams them from the log meanwhile, and is live on the bus again once let back in", async () => {
    const as = t.as({ key: t.apiKey, identity: await t.identity("refused") });
    expect((await as.post("/api/v1/discussions/rf-1/comments", { body: "before" })).status).toBe(201);
    const stream = openSse(`${server.url}/api/v1/stream/rf-1`, { "x-api-key": t.apiKey });
    await stream.waitFor((frames) => frames.some((f) => f.event === "connected"));
    expect((await as.post("/api/v1/discussions/rf-1/comments", { body: "live" })).status).toBe(201);
    await stream.waitForEvents(1);

    user.cut();
    // Redis is refused now: the write still answers (the limits count in process), its event is in the log
    await vi.waitFor(async () => {
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
    }, WAIT);
    expect((await as.post("/api/v1/discussions/rf-1/comments", { body: "while refused" })).status).toBe(201);
    await stream.waitForEvents(2);

    user.restore();
    await vi.waitFor(async () => expect((await fetch(`${server.url}/readyz`)).status).toBe(200), { timeout: 20_000, interval: 50 });
    expect((await as.post("/api/v1/discussions/rf-1/comments", { body: "after" })).status).toBe(201);
    const events = await stream.waitForEvents(3);
    expect(events.map((e) => e.data.data.comment.body)).toEqual(["live", "while refused", "after"]);
    stream.close();
  });
});
