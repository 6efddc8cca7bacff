// Bad input gets a clear 4xx problem, never a 500 (contract sections 1, 3 and 9): identity
// assertions from the future or with control characters or non-http(s) avatars, and cursors
// carried over from another list.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { restRoutes } from "../src/modules/route-table.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const post = async (identity: string, discussion = "hard-1") =>
  t.as({ key: t.apiKey, identity }).post(`/api/v1/discussions/${discussion}/comments`, { body: "hi" });

describe("identity assertions", () => {
  it("refuses iat more than 60 s ahead (the 1 h lifetime cap cannot be dodged) but allows small skew", async () => {
    const now = Math.floor(Date.now() / 1000);
    const future = await post(await t.identity("fut", { iat: now + 10 * 365 * 86_400 }));
    expect(future.status).toBe(401);
    expect(future.body.code).toBe("invalid_identity");
    expect(future.body.detail).toContain("iat");
    expect((await post(await t.identity("skew", { iat: now + 30 }))).status).toBe(201);
  });

  it("refuses control characters in sub and name", async () => {
    for (const id of [
      await t.identity("a\u0000b"),
      await t.identity("ok", { name: "Bo\u0000b" }),
      await t.identity("ok2", { name: "x\ny" }),
    ]) {
      const r = await post(id);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("invalid_identity");
    }
  });

  it("accepts only http(s) avatar URLs", async () => {
    for (const avatarUrl of ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "not a url", "ftp://x.example/a.png"]) {
      const r = await post(await t.identity("av", { avatarUrl }));
      expect(r.status, avatarUrl).toBe(401);
      expect(r.body.detail).toContain("avatarUrl");
    }
    const ok = await post(await t.identity("av", { avatarUrl: "https://img.example/a.png" }));
    expect(ok.status).toBe(201);
    expect(ok.body.author.avatarUrl).toBe("https://img.example/a.png");
  });
});

describe("cursors", () => {
  it("are only good for the list that issued them: another discussion, sort, status or parent → 400", async () => {
    const id = await t.identity("cur");
    for (const d of ["cur-a", "cur-b"]) for (let i = 0; i < 3; i++) expect((await post(id, d)).status).toBe(201);
    const first = await t.api.get("/api/v1/discussions/cur-a/comments?limit=1");
    const cursor = first.body.nextCursor as string;
    expect(cursor).toBeTruthy();
    expect((await t.api.get(`/api/v1/discussions/cur-a/comments?limit=1&cursor=${cursor}`)).status).toBe(200);
    for (const q of [
      `/api/v1/discussions/cur-b/comments?limit=1&cursor=${cursor}`,
      `/api/v1/discussions/cur-a/comments?limit=1&sort=oldest&cursor=${cursor}`,
      `/api/v1/discussions/cur-a/comments?limit=1&parentId=${first.body.items[0].id}&cursor=${cursor}`,
    ]) {
      const r = await t.api.get(q);
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe("invalid_parameter");
      expect(r.body.errors[0].path).toBe("cursor");
    }
  });
});

describe("webhook URLs", () => {
  it("are stored in WHATWG serialisation; whitespace or control characters → 422 on url", async () => {
    const create = (url: string) => t.api.post("/api/v1/webhooks", { url, events: ["*"] });
    const stored = async (url: string) => {
      const r = await create(url);
      expect(r.status, url).toBe(201);
      return r.body.url as string;
    };
    expect(await stored("http://１２７.０.０.１:9/hook")).toBe("http://127.0.0.1:9/hook");
    expect(await stored("HTTP://LOCALHOST:9/a/../b")).toBe("http://localhost:9/b");
    for (const bad of [
      "http://127.0.0.1:9/a\r\nX-Injected: 1",
      " http://127.0.0.1:9/x",
      "http://127.0.0.1:9/a b",
      "http://127.0.0.1:9/\u0000",
    ]) {
      const r = await create(bad);
      expect(r.status, JSON.stringify(bad)).toBe(422);
      expect(r.body.errors.map((e: any) => e.path)).toContain("url");
    }
  });
});

describe("NUL bytes", () => {
  it("in ids, query parameters and GraphQL arguments give a 4xx problem, never a 500", async () => {
    const id = await t.identity("nul");
    const as = t.as({ key: t.apiKey, identity: id });
    const calls: [string, () => Promise<any>][] = [
      ["GET comment", () => t.api.get("/api/v1/comments/a%00b")],
      ["PATCH comment", () => as.patch("/api/v1/comments/a%00b", { body: "x" })],
      ["DELETE comment", () => as.del("/api/v1/comments/a%00b")],
      ["react", () => as.post("/api/v1/comments/a%00b/reactions", { kind: "like" })],
      ["approve", () => t.api.post("/api/v1/comments/a%00b/approve")],
      ["webhook", () => t.api.get("/api/v1/webhooks/a%00b")],
      ["webhook deliveries", () => t.api.get("/api/v1/webhooks/a%00b/deliveries")],
      ["DELETE key", () => t.api.del("/api/v1/keys/a%00b")],
      ["list with parentId", () => t.api.get("/api/v1/discussions/nul-d/comments?parentId=a%00b")],
      ["post with parentId", () => as.post("/api/v1/discussions/nul-d/comments", { body: "x", parentId: "a\u0000b" })],
    ];
    for (const [what, call] of calls) {
      const r = await call();
      expect(r.status, what).toBeGreaterThanOrEqual(400);
      expect(r.status, what).toBeLessThan(500);
      expect(r.headers.get?.("content-type") ?? "application/problem+json", what).toContain("json");
      expect(typeof r.body.code, what).toBe("string");
    }
    for (const query of [
      '{ comment(id: "a\\u0000b") { id } }',
      '{ webhook(webhookId: "a\\u0000b") { id } }',
      'mutation { revokeApiKey(id: "a\\u0000b") { id } }',
    ]) {
      const res = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey },
        body: JSON.stringify({ query }),
      });
      const body: any = await res.json();
      expect(res.status, query).toBeLessThan(500);
      expect(body.errors?.[0]?.extensions?.code, query).toBeDefined();
      expect(body.errors[0].extensions.code, query).not.toBe("internal_error");
    }
  });
});

describe("slow clients", () => {
  it("a client dripping its request body is cut once HTTP_REQUEST_TIMEOUT_MS has passed", async () => {
    const { connect } = await import("node:net");
    const s = await startServer({ HTTP_REQUEST_TIMEOUT_MS: "1000" });
    try {
      const { port } = new URL(s.url);
      const sock = connect(Number(port), "127.0.0.1");
      await new Promise((r) => sock.once("connect", r));
      const started = Date.now();
      let answer = "";
      sock.on("data", (d) => (answer += d.toString()));
      const closed = new Promise<number>((r) => sock.once("close", () => r(Date.now() - started)));
      sock.write(
        "POST /api/v1/discussions/drip/comments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
      );
      const drip = setInterval(() => !sock.destroyed && sock.write(" "), 100);
      const ms = await closed;
      clearInterval(drip);
      expect(ms).toBeLessThan(4_000);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await s.stop();
    }
  });
});

describe("unknown body fields", () => {
  it("are refused with 422 on every route family (contract section 7)", async () => {
    const as = t.as({ key: t.apiKey, identity: await t.identity("unk") });
    const c = await as.post("/api/v1/discussions/unk-1/comments", { body: "hi" });
    expect(c.status).toBe(201);
    const calls: [string, () => Promise<any>][] = [
      ["post comment", () => as.post("/api/v1/discussions/unk-1/comments", { body: "x", colour: "red" })],
      ["edit comment", () => as.patch(`/api/v1/comments/${c.body.id}`, { body: "x", colour: "red" })],
      ["react", () => as.post(`/api/v1/comments/${c.body.id}/reactions`, { kind: "like", colour: "red" })],
      ["ticket", () => t.api.post("/api/v1/stream/ticket", { discussionId: "unk-1", colour: "red" })],
      ["discussion", () => t.api.put("/api/v1/discussions/unk-1", { title: "t", colour: "red" })],
      ["settings", () => t.api.patch("/api/v1/settings", { colour: "red" })],
      ["key", () => t.api.post("/api/v1/keys", { label: "k", colour: "red" })],
      ["webhook", () => t.api.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/h", events: ["*"], colour: "red" })],
    ];
    for (const [what, call] of calls) {
      const r = await call();
      expect(r.status, what).toBe(422);
      expect(r.body.code, what).toBe("validation_failed");
      expect(r.body.errors, what).toContainEqual({ path: "colour", message: "is not a known field" });
    }
  });
});

describe("unknown query parameters", () => {
  it("are refused with 400 invalid_parameter naming each one, on every REST route", async () => {
    const search = await t.api.get("/api/v1/comments/search?query=x&limit=5");
    expect(search.status).toBe(400);
    expect(search.body.code).toBe("invalid_parameter");
    expect(search.body.errors).toEqual([{ path: "query", message: "is not a known parameter" }]);
    expect((await t.api.get("/api/v1/comments/search?q=x&limit=5")).status).toBe(200);
    for (const r of restRoutes) {
      const path = `/api/v1${r.path.replace(/:(\w+)/g, "unknown-$1")}?colour=red`;
      const who = r.adminOnly ? t.admin : t.api;
      const res = await who.raw(r.method, path, r.method === "GET" || r.method === "DELETE" ? undefined : {});
      expect([res.status, res.body.code, res.body.errors], `${r.method} ${r.path}`).toEqual([
        400,
        "invalid_parameter",
        [{ path: "colour", message: "is not a known parameter" }],
      ]);
    }
  });
});

describe("admin JWT lifetime", () => {
  it("a token living longer than ADMIN_JWT_MAX_TTL (default 24h) is refused, with or without iat", async () => {
    const { SignJWT } = await import("jose");
    const { TEST_ADMIN_SECRET } = await import("./support/server.js");
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: { iat?: number; exp: number }) => {
      const jwt = new SignJWT({ tid: t.tenantId }).setProtectedHeader({ alg: "HS256" }).setSubject("ops").setExpirationTime(claims.exp);
      if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat);
      return jwt.sign(new TextEncoder().encode(TEST_ADMIN_SECRET));
    };
    const use = async (token: string) => t.as({ admin: token }).get("/api/v1/keys");
    expect((await use(await sign({ iat: now, exp: now + 3600 }))).status).toBe(200);
    expect((await use(await sign({ iat: now, exp: now + 24 * 3600 }))).status).toBe(200);
    for (const claims of [{ iat: now, exp: now + 24 * 3600 + 60 }, { exp: 1e11 }, { iat: now + 3600, exp: now + 7200 }]) {
      const r = await use(await sign(claims));
      expect(r.status, JSON.stringify(claims)).toBe(401);
      expect(r.body.code).toBe("unauthenticated");
    }
  });
});
