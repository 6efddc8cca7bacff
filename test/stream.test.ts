// GET /api/v1/stream/{id} and POST /api/v1/stream/ticket: framing, headers, auth, tickets, token.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { createKey, openSse, rawSse, writeEvent, WAIT } from "./support/sse.js";
import { hashApiKey } from "../src/auth/key-auth.js";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let n = 0;

beforeAll(async () => {
  server = await startServer({ TOKEN_SUNSET: "Wed, 30 Jun 2027 00:00:00 GMT" });
  t = await createTestTenant(server);
  other = await createTestTenant(server);
});
afterAll(() => server?.stop());

async function discussion(tenant = t): Promise<string> {
  const id = `d-${++n}`;
  expect((await tenant.api.put(`/api/v1/discussions/${id}`, {})).status).toBe(201);
  return id;
}

const streamUrl = (id: string, query = "") => `${server.url}/api/v1/stream/${id}${query}`;

async function mint(id: string, creds: { key?: string; identity?: string } = { key: t.apiKey }) {
  const r = await t.as(creds).post("/api/v1/stream/ticket", { discussionId: id });
  expect(r.status).toBe(201);
  return r.body as { ticket: string; expiresAt: string };
}

describe("stream framing", () => {
  it("sends the contract's headers, `connected` first, then id/event/data frames with the envelope", async () => {
    const id = await discussion();
    const s = await rawSse(streamUrl(id), { "x-api-key": t.apiKey });
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(s.headers.get("cache-control")).toContain("no-cache");
    expect(s.headers.get("x-accel-buffering")).toBe("no");
    await s.waitForText((x) => x.includes("\n\n"));
    expect(s.text()).toBe(
      `id: 0\nevent: connected\ndata: ${JSON.stringify({ discussionId: id, replayed: 0, truncated: false, heartbeatSeconds: 15 })}\n\n`,
    );
    const lock = await t.api.post(`/api/v1/discussions/${id}/lock`);
    expect(lock.status).toBe(200);
    await s.waitForText((x) => x.split("\n\n").length >= 3);
    const frame = s.text().split("\n\n")[1]!;
    const lines = frame.split("\n");
    expect(lines[0]).toBe("id: 1");
    expect(lines[1]).toBe("event: discussion_locked");
    expect(lines[2]).toMatch(/^data: \{/);
    expect(lines).toHaveLength(3);
    const env = JSON.parse(lines[2]!.slice("data: ".length));
    expect(Object.keys(env)).toEqual(["id", "seq", "type", "tenantId", "discussionId", "occurredAt", "data"]);
    expect(env).toMatchObject({ seq: 1, type: "discussion_locked", tenantId: t.tenantId, discussionId: id });
    expect(env.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(env.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(env.data.discussion).toMatchObject({ id, state: "locked" });
    await s.close();
  });

  it("delivers events to an EventSource client in seq order", async () => {
    const id = await discussion();
    const es = openSse(streamUrl(id), { "x-api-key": t.apiKey });
    await es.waitFor((f) => f[0]?.event === "connected");
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await t.api.post(`/api/v1/discussions/${id}/unlock`);
    await writeEvent(server, t.tenantId, id, { count: 3 });
    const evs = await es.waitForEvents(5);
    expect(evs.map((f) => [f.id, f.event])).toEqual([
      ["1", "discussion_locked"],
      ["2", "discussion_unlocked"],
      ["3", "discussion_locked"],
      ["4", "discussion_locked"],
      ["5", "discussion_locked"],
    ]);
    expect(evs.every((f) => f.data.seq === Number(f.id))).toBe(true);
    es.close();
  });
});

describe("browsers on other origins", () => {
  it("answers CORS (preflight, stream, problem documents) for allowed origins only, never reflecting another (the ticket is the credential)", async () => {
    // the hardening issue: browser-facing routes answer only the allow-list (CORS_ORIGINS), never `*`
    const s2 = await startServer({ CORS_ORIGINS: "https://news.example" });
    try {
      const t2 = await createTestTenant(s2);
      const id = "cors-d";
      await t2.api.put(`/api/v1/discussions/${id}`, {});
      const url = (q = "") => `${s2.url}/api/v1/stream/${id}${q}`;
      const preflight = (origin: string) =>
        fetch(url(), {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "last-event-id" },
        });
      const pre = await preflight("https://news.example");
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("https://news.example");
      expect(pre.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("last-event-id");
      expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
      const other = await preflight("https://evil.example");
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      const { ticket } = (await t2.api.post("/api/v1/stream/ticket", { discussionId: id })).body;
      const s = await rawSse(url(`?ticket=${ticket}`), { origin: "https://news.example" });
      expect(s.headers.get("access-control-allow-origin")).toBe("https://news.example");
      await s.close();
      const denied = await fetch(url(), { headers: { origin: "https://news.example" } });
      expect(denied.status).toBe(401);
      expect(denied.headers.get("access-control-allow-origin")).toBe("https://news.example");
      const elsewhere = await fetch(url(), { headers: { origin: "https://evil.example" } });
      expect(elsewhere.headers.get("access-control-allow-origin")).toBeNull();
      const gql = await fetch(`${s2.url}/graphql`, {
        method: "OPTIONS",
        headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
      });
      expect(gql.headers.get("access-control-allow-origin")).toBeNull();
      const gqlOk = await fetch(`${s2.url}/graphql`, {
        method: "OPTIONS",
        headers: { origin: "https://news.example", "access-control-request-method": "POST" },
      });
      expect(gqlOk.headers.get("access-control-allow-origin")).toBe("https://news.example");
      expect(gqlOk.headers.get("access-control-allow-credentials")).toBeNull();
    } finally {
      await s2.stop();
    }
  });
});

describe("stream errors before the stream starts are problem documents", () => {
  it("401 without credentials or with a bad key, 404 for unknown and other tenants' discussions, 400 for a bad id", async () => {
    const id = await discussion();
    const none = await fetch(streamUrl(id));
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toContain("application/problem+json");
    expect(await none.json()).toMatchObject({ status: 401, code: "unauthenticated" });

    const bad = await fetch(streamUrl(id), { headers: { "x-api-key": `ek_${"0".repeat(64)}` } });
    expect(bad.status).toBe(401);

    const unknown = await fetch(streamUrl("no-such-discussion"), { headers: { "x-api-key": t.apiKey } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "not_found" });

    const foreign = await fetch(streamUrl(id), { headers: { "x-api-key": other.apiKey } });
    expect(foreign.status).toBe(404);

    const badId = await fetch(streamUrl("has%20space"), { headers: { "x-api-key": t.apiKey } });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toMatchObject({ code: "invalid_parameter" });

    const badLastId = await fetch(streamUrl(id), { headers: { "x-api-key": t.apiKey, "last-event-id": "abc" } });
    expect(badLastId.status).toBe(400);
  });

  it("401 for an identity assertion that does not verify", async () => {
    const id = await discussion();
    const r = await fetch(streamUrl(id), { headers: { "x-api-key": t.apiKey, "x-service-identity": "not-a-jwt" } });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ code: "invalid_identity" });
  });
});

describe("stream tickets", () => {
  it("mints 201 {ticket, expiresAt} valid 60 s, stored hashed", async () => {
    const id = await discussion();
    const before = Date.now();
    const { ticket, expiresAt } = await mint(id);
    expect(ticket).toMatch(/^st_[0-9a-f]{64}$/);
    const ttl = new Date(expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
    const rows = await server.app.runtime.services.prisma.streamTicket.findMany({ where: { tenantId: t.tenantId, discussionId: id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(createHash("sha256").update(ticket).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(ticket);
  });

  it("validates the request: 401 without a key, 422 without discussionId, 404 for an unknown discussion", async () => {
    expect((await t.as({}).post("/api/v1/stream/ticket", { discussionId: "x" })).status).toBe(401);
    const missing = await t.api.post("/api/v1/stream/ticket", {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: any) => e.path)).toContain("discussionId");
    expect((await t.api.post("/api/v1/stream/ticket", { discussionId: "bad id" })).status).toBe(422);
    expect((await t.api.post("/api/v1/stream/ticket", { discussionId: "nope" })).status).toBe(404);
    const id = await discussion();
    expect((await other.api.post("/api/v1/stream/ticket", { discussionId: id })).status).toBe(404);
    const badIdentity = await t.as({ key: t.apiKey, identity: "garbage" }).post("/api/v1/stream/ticket", { discussionId: id });
    expect(badIdentity.status).toBe(401);
  });

  it("serves one connection at a time: reused without Last-Event-ID, or first used after expiry, it is 401", async () => {
    const id = await discussion();
    const { ticket } = await mint(id);
    const es = openSse(streamUrl(id, `?ticket=${ticket}`));
    await es.waitFor((f) => f[0]?.event === "connected");
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await es.waitForEvents(1);
    es.close();

    // a page that copies the URL is not an EventSource resuming its own stream
    const again = await fetch(streamUrl(id, `?ticket=${ticket}`));
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: "unauthenticated" });

    const late = await mint(id);
    await server.app.runtime.services.prisma.streamTicket.update({
      where: { id: createHash("sha256").update(late.ticket).digest("hex") },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await fetch(streamUrl(id, `?ticket=${late.ticket}`))).status).toBe(401);
    expect((await fetch(streamUrl(id, `?ticket=${late.ticket}`), { headers: { "last-event-id": "0" } })).status).toBe(401);
  });

  it("resumes: once redeemed, a reconnect with Last-Event-ID replays what it missed and supersedes the previous connection", async () => {
    const id = await discussion();
    const { ticket } = await mint(id);
    const first = await rawSse(streamUrl(id, `?ticket=${ticket}`));
    expect(first.status).toBe(200);
    await first.waitForText((x) => x.includes("event: connected"));
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await first.waitForText((x) => x.includes("event: discussion_locked"));
    await t.api.post(`/api/v1/discussions/${id}/unlock`);
    await first.waitForText((x) => x.includes("event: discussion_unlocked"));

    // the connection is still open (as a half-open socket would look) when the browser reconnects
    const second = await rawSse(streamUrl(id, `?ticket=${ticket}`), { "last-event-id": "1" });
    expect(second.status).toBe(200);
    await second.waitForText((x) => x.includes("event: discussion_unlocked"));
    // `connected` carries the id the replay starts after (the given Last-Event-ID), never the head
    expect(second.text()).toMatch(/^id: 1\nevent: connected\ndata: \{"discussionId":"[^"]+","replayed":1,/);
    expect(second.text()).not.toContain("discussion_locked");
    // the ticket never serves two connections at once: the earlier one is told and closed
    await first.waitForEnd();
    expect(first.text()).toContain('event: connection-timeout\ndata: {"reason":"superseded"}');
    await second.close();
    await first.close();

    // past the resume lifetime the ticket is spent
    await server.app.runtime.services.prisma.streamTicket.update({
      where: { id: createHash("sha256").update(ticket).digest("hex") },
      data: { resumeUntil: new Date(Date.now() - 1000) },
    });
    expect((await fetch(streamUrl(id, `?ticket=${ticket}`), { headers: { "last-event-id": "2" } })).status).toBe(401);
  });

  it("a reconnect on another instance supersedes the connection held by the first (the takeover crosses Redis)", async () => {
    const id = await discussion();
    const { ticket } = await mint(id);
    const other = await startServer();
    try {
      const first = await rawSse(streamUrl(id, `?ticket=${ticket}`));
      await first.waitForText((x) => x.includes("event: connected"));
      const second = await rawSse(`${other.url}/api/v1/stream/${id}?ticket=${ticket}`, { "last-event-id": "0" });
      expect(second.status).toBe(200);
      await first.waitForEnd();
      expect(first.text()).toContain('"reason":"superseded"');
      await t.api.post(`/api/v1/discussions/${id}/lock`);
      await second.waitForText((x) => x.includes("event: discussion_locked"));
      expect(second.ended()).toBe(false);
      await second.close();
      await first.close();
    } finally {
      await other.stop();
    }
  });

  it("the eventsource client resumes by itself after connection-timeout, with `connected` carrying the head seq (no Last-Event-ID yet)", async () => {
    const id = await discussion();
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await t.api.patch("/api/v1/settings", { stream: { maxConnectionSeconds: 1 } });
    try {
      const { ticket } = await mint(id);
      const es = openSse(streamUrl(id, `?ticket=${ticket}`));
      await es.waitFor((f) => f.some((x) => x.event === "connected"));
      expect(es.frames[0]).toMatchObject({ event: "connected", id: "1", data: { replayed: 0 } });
      await es.waitFor((f) => f.some((x) => x.event === "connection-timeout"));
      await t.api.post(`/api/v1/discussions/${id}/unlock`); // while it reconnects, or just after
      await es.waitFor((f) => f.filter((x) => x.event === "connected").length >= 2 && f.some((x) => x.event === "discussion_unlocked"));
      expect(es.events().map((f) => [f.event, f.id])).toEqual([["discussion_unlocked", "2"]]);
      es.close();
    } finally {
      await t.api.patch("/api/v1/settings", { stream: { maxConnectionSeconds: 1800 } });
    }
  });

  it("is bound to its discussion: another discussion's stream refuses it, and it still works for its own", async () => {
    const a = await discussion();
    const b = await discussion();
    const { ticket } = await mint(a);
    expect((await fetch(streamUrl(b, `?ticket=${ticket}`))).status).toBe(401);
    const s = await rawSse(streamUrl(a, `?ticket=${ticket}`));
    expect(s.status).toBe(200);
    await s.close();
  });

  it("used where it is not bound is the same 401 whether the target discussion exists or not (credentials before resources)", async () => {
    const a = await discussion();
    const quiet = await discussion(); // exists, no stream open on it: the connect's first read is the channel's
    const busy = await discussion(); // exists, with a stream open: the channel is there already
    const busyStream = await rawSse(streamUrl(busy), { "x-api-key": t.apiKey });
    await busyStream.waitForText((x) => x.includes("event: connected"));
    const { ticket } = await mint(a);
    const refusal = async (target: string, headers: Record<string, string> = {}) => {
      const res = await fetch(streamUrl(target, `?ticket=${ticket}`), { headers });
      const { requestId, ...problem } = (await res.json()) as Record<string, unknown>;
      expect(requestId).toEqual(expect.any(String));
      return { status: res.status, type: res.headers.get("content-type"), auth: res.headers.get("www-authenticate"), problem };
    };
    const expected = await refusal(quiet);
    expect(expected).toMatchObject({
      status: 401,
      type: expect.stringMatching(/^application\/problem\+json/),
      problem: { code: "unauthenticated" },
    });
    for (const target of [busy, "no-such-discussion", "no-such-discussion"]) expect(await refusal(target), target).toEqual(expected);
    expect(await refusal("no-such-discussion", { "last-event-id": "3" })).toEqual(expected);
    // the GraphQL subscription answers the same
    const sub = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        query: "subscription ($d: String!, $t: String) { discussionEvents(discussionId: $d, ticket: $t) { __typename } }",
        variables: { d: "no-such-discussion", t: ticket },
      }),
    });
    expect(await sub.text()).toContain('"code":"unauthenticated"');
    // none of it used the ticket up
    const s = await rawSse(streamUrl(a, `?ticket=${ticket}`));
    expect(s.status).toBe(200);
    await s.close();
    await busyStream.close();
  });

  it("is redeemed exactly once under concurrent use", async () => {
    const id = await discussion();
    const { ticket } = await mint(id);
    const attempts = await Promise.all(Array.from({ length: 8 }, () => rawSse(streamUrl(id, `?ticket=${ticket}`))));
    expect(attempts.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    await Promise.all(attempts.map((a) => a.close()));
  });

  it("is also a GraphQL mutation", async () => {
    const id = await discussion();
    const r = await t.api.raw("POST", "/graphql", {
      query: "mutation ($d: String!) { createStreamTicket(discussionId: $d) { ticket expiresAt } }",
      variables: { d: id },
    });
    expect(r.body.data.createStreamTicket.ticket).toMatch(/^st_/);
  });

  it("fails when the key that minted it was revoked since", async () => {
    const id = await discussion();
    const key = await createKey(server, t.tenantId, ["moderate_content"]);
    const { ticket } = await mint(id, { key });
    const prisma = server.app.runtime.services.prisma;
    await prisma.apiKey.updateMany({ where: { tenantId: t.tenantId, keyHash: hashApiKey(key) }, data: { revokedAt: new Date() } });
    const r = await fetch(streamUrl(id, `?ticket=${ticket}`));
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ code: "key_revoked" });
  });
});

describe("?token= (deprecated)", () => {
  it("works as an API key in the query, with Deprecation and Sunset headers", async () => {
    const id = await discussion();
    const s = await rawSse(streamUrl(id, `?token=${t.apiKey}`));
    expect(s.status).toBe(200);
    expect(s.headers.get("deprecation")).toBe("true");
    expect(s.headers.get("sunset")).toBe("Wed, 30 Jun 2027 00:00:00 GMT");
    expect(new Date(s.headers.get("sunset")!).toISOString()).toBe("2027-06-30T00:00:00.000Z");
    await s.waitForText((x) => /^id: \d+\nevent: connected/.test(x));
    await s.close();

    const keyed = await rawSse(streamUrl(id), { "x-api-key": t.apiKey });
    expect(keyed.headers.get("deprecation")).toBeNull();
    await keyed.close();

    const bad = await fetch(streamUrl(id, `?token=ek_${"1".repeat(64)}`));
    expect(bad.status).toBe(401);
    expect(bad.headers.get("deprecation")).toBe("true");
  });

  it("reconnects by itself with an EventSource", async () => {
    const id = await discussion();
    const es = openSse(streamUrl(id, `?token=${t.apiKey}`));
    await es.waitFor((f) => f[0]?.event === "connected");
    await t.api.post(`/api/v1/discussions/${id}/lock`);
    await vi.waitFor(() => expect(es.events()).toHaveLength(1), WAIT);
    es.close();
  });
});
