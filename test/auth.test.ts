import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";
import { manualClock } from "../src/lib/clock.js";
import { CAPABILITIES } from "../src/auth/capabilities.js";
import { ACTIVE_KEY_LIMIT } from "../src/modules/keys/keys.js";

const clock = manualClock(new Date());
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer({}, { clock });
  t = await createTestTenant(server);
  await t.api.put("/api/v1/discussions/auth-d", {});
});
afterAll(() => server?.stop());

interface Gated {
  cap: (typeof CAPABILITIES)[number];
  label: string;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: () => Promise<string> | string;
  body?: unknown;
  ok: number;
}

const GATED: Gated[] = [
  {
    cap: "manage_api_keys",
    label: "/api/v1/keys",
    method: "POST",
    path: () => "/api/v1/keys",
    body: { label: "m", capabilities: [] },
    ok: 201,
  },
  { cap: "manage_api_keys", label: "/api/v1/keys", method: "GET", path: () => "/api/v1/keys", ok: 200 },
  {
    cap: "manage_api_keys",
    label: "/api/v1/keys/{id}",
    method: "DELETE",
    path: async () => `/api/v1/keys/${(await keyWith(t, [])).id}`,
    ok: 204,
  },
  { cap: "manage_settings", label: "/api/v1/settings", method: "GET", path: () => "/api/v1/settings", ok: 200 },
  {
    cap: "manage_settings",
    label: "/api/v1/settings",
    method: "PATCH",
    path: () => "/api/v1/settings",
    body: { editWindowSeconds: 600 },
    ok: 200,
  },
  {
    cap: "manage_settings",
    label: "/api/v1/settings/identity-secret/rotate",
    method: "POST",
    path: () => "/api/v1/settings/identity-secret/rotate",
    ok: 200,
  },
  { cap: "view_analytics", label: "/api/v1/analytics", method: "GET", path: () => "/api/v1/analytics", ok: 200 },
  { cap: "manage_readers", label: "/api/v1/readers/{readerId}", method: "DELETE", path: () => "/api/v1/readers/gone", ok: 204 },
  {
    cap: "moderate_content",
    label: "/api/v1/discussions/auth-d/lock",
    method: "POST",
    path: () => "/api/v1/discussions/auth-d/lock",
    ok: 200,
  },
  {
    cap: "moderate_content",
    label: "/api/v1/discussions/auth-d/unlock",
    method: "POST",
    path: () => "/api/v1/discussions/auth-d/unlock",
    ok: 200,
  },
  {
    cap: "moderate_content",
    label: "/api/v1/discussions/auth-d/archive",
    method: "POST",
    path: () => "/api/v1/discussions/auth-d/archive",
    ok: 200,
  },
];

describe("capability matrix", () => {
  for (const g of GATED) {
    it(`${g.method} ${g.label} (${g.cap}): 403 without it, success with it`, async () => {
      const without = await keyWith(
        t,
        CAPABILITIES.filter((c) => c !== g.cap),
      );
      const denied = await t.as({ key: without.key }).raw(g.method, await g.path(), g.body);
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: "missing_capability", required: g.cap, status: 403 });
      expect(denied.headers.get("content-type")).toContain("application/problem+json");
      const anon = await client(server.url).raw(g.method, await g.path(), g.body);
      expect(anon.status).toBe(401);
      expect(anon.body.code).toBe("unauthenticated");
      const holder = await keyWith(t, [g.cap]);
      const allowed = await t.as({ key: holder.key }).raw(g.method, await g.path(), g.body);
      expect(allowed.status).toBe(g.ok);
    });
  }

  it("the admin JWT holds every capability", async () => {
    expect((await t.admin.get("/api/v1/keys")).status).toBe(200);
    expect((await t.admin.get("/api/v1/settings")).status).toBe(200);
    expect((await t.admin.get("/api/v1/analytics")).status).toBe(200);
    await t.admin.put("/api/v1/discussions/admin-d", {});
    expect((await t.admin.post("/api/v1/discussions/admin-d/lock")).status).toBe(200);
  });

  it("publisher routes work with a key holding no capabilities", async () => {
    const p = await createTestTenant(server); // (the matrix above rotated t's identity secret)
    const bare = p.as({ key: (await keyWith(p, [])).key });
    expect((await bare.put("/api/v1/discussions/pub-1", { title: "P" })).status).toBe(201);
    expect((await bare.put("/api/v1/discussions/pub-1", { title: "P2" })).status).toBe(200);
    expect((await bare.get("/api/v1/discussions/pub-1")).status).toBe(200);
    expect((await bare.get("/api/v1/discussions")).status).toBe(200);
    const identity = await p.identity("reader-9", { iat: Math.floor(clock.now().getTime() / 1000) });
    const posted = await bare.post("/api/v1/discussions/pub-1/comments", { body: "hello" }, { identity });
    expect(posted.status).toBe(201);
    expect((await bare.post(`/api/v1/comments/${posted.body.id}/reactions`, { kind: "like" }, { identity })).status).toBe(200);
    expect((await bare.get("/api/v1/discussions/pub-1/comments")).status).toBe(200);
  });
});

const enc = (s: string) => new TextEncoder().encode(s);
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
const nowSec = () => Math.floor(clock.now().getTime() / 1000);

describe("admin JWT", () => {
  const claims = () => ({ tid: t.tenantId });
  const cases: [string, () => Promise<string> | string][] = [
    [
      "wrong signature",
      () =>
        new SignJWT(claims())
          .setProtectedHeader({ alg: "HS256" })
          .setSubject("a")
          .setExpirationTime(nowSec() + 600)
          .sign(enc("another-secret-another-secret-0123456789")),
    ],
    ["alg: none", () => `${b64({ alg: "none", typ: "JWT" })}.${b64({ ...claims(), sub: "a", exp: nowSec() + 600 })}.`],
    [
      "HS512",
      () =>
        new SignJWT(claims())
          .setProtectedHeader({ alg: "HS512" })
          .setSubject("a")
          .setExpirationTime(nowSec() + 600)
          .sign(enc(TEST_ADMIN_SECRET)),
    ],
    [
      "RS256",
      async () => {
        const { privateKey } = await generateKeyPair("RS256");
        return new SignJWT(claims())
          .setProtectedHeader({ alg: "RS256" })
          .setSubject("a")
          .setExpirationTime(nowSec() + 600)
          .sign(privateKey);
      },
    ],
    [
      "HS256 header over an RS256-style forged body",
      () => `${b64({ alg: "RS256" })}.${b64({ ...claims(), sub: "a", exp: nowSec() + 600 })}.c2ln`,
    ],
    ["missing exp", () => new SignJWT(claims()).setProtectedHeader({ alg: "HS256" }).setSubject("a").sign(enc(TEST_ADMIN_SECRET))],
    [
      "past exp",
      () =>
        new SignJWT(claims())
          .setProtectedHeader({ alg: "HS256" })
          .setSubject("a")
          .setExpirationTime(nowSec() - 10)
          .sign(enc(TEST_ADMIN_SECRET)),
    ],
    [
      "missing tid",
      () =>
        new SignJWT({})
          .setProtectedHeader({ alg: "HS256" })
          .setSubject("a")
          .setExpirationTime(nowSec() + 600)
          .sign(enc(TEST_ADMIN_SECRET)),
    ],
    [
      "missing sub",
      () =>
        new SignJWT(claims())
          .setProtectedHeader({ alg: "HS256" })
          .setExpirationTime(nowSec() + 600)
          .sign(enc(TEST_ADMIN_SECRET)),
    ],
    [
      "unknown tenant",
      () =>
        new SignJWT({ tid: "ten_unknown" })
          .setProtectedHeader({ alg: "HS256" })
          .setSubject("a")
          .setExpirationTime(nowSec() + 600)
          .sign(enc(TEST_ADMIN_SECRET)),
    ],
    ["garbage", () => "not-a-jwt"],
    ["three garbage parts", () => "a.b.c"],
  ];

  for (const [name, make] of cases) {
    it(`${name} → 401 unauthenticated`, async () => {
      const token = await make();
      for (const [method, path, body] of [
        ["GET", "/api/v1/discussions", undefined],
        ["POST", "/api/v1/admin/keys", { label: "x", capabilities: [] }],
      ] as const) {
        const r = await client(server.url, { admin: token }).raw(method, path, body);
        expect(r.status, `${method} ${path}`).toBe(401);
        expect(r.body.code).toBe("unauthenticated");
      }
    });
  }

  it("a valid one works; a malformed Authorization header is 401", async () => {
    const token = await new SignJWT(claims())
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("ops")
      .setExpirationTime(nowSec() + 600)
      .sign(enc(TEST_ADMIN_SECRET));
    expect((await client(server.url, { admin: token }).get("/api/v1/keys")).status).toBe(200);
    const basic = await client(server.url, { headers: { authorization: "Basic dXNlcjpwYXNz" } }).get("/api/v1/discussions");
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("/api/v1/admin/* refuses API keys, even all-capability ones (401)", async () => {
    const k = await keyWith(t, []);
    const create = await t.api.post("/api/v1/admin/keys", { label: "x", capabilities: [] });
    expect(create.status).toBe(401);
    expect(create.body.code).toBe("unauthenticated");
    expect((await t.api.del(`/api/v1/admin/keys/${k.id}`)).status).toBe(401);
    expect((await client(server.url).post("/api/v1/admin/keys", { label: "x" })).status).toBe(401);
    expect((await t.as({ key: k.key }).get("/api/v1/discussions")).status).toBe(200); // not revoked
  });
});

describe("API key states", () => {
  it("expired: 401 key_expired once the clock passes expiresAt, and no longer counts in the budget", async () => {
    const b = await createTestTenant(server);
    const expiring = await keyWith(b, [], new Date(clock.now().getTime() + 60_000).toISOString());
    const use = b.as({ key: expiring.key });
    expect((await use.get("/api/v1/discussions")).status).toBe(200);
    for (let n = 2; n < ACTIVE_KEY_LIMIT; n++) await keyWith(b, []); // bootstrap + expiring + 48 = 50
    const full = await b.admin.post("/api/v1/admin/keys", { label: "over", capabilities: [] });
    expect(full.status).toBe(409);
    expect(full.body.code).toBe("active_key_limit");

    clock.advance(61_000);
    const expired = await use.get("/api/v1/discussions");
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe("key_expired");
    const list = await b.admin.get("/api/v1/keys?limit=100");
    expect(list.body.items.find((k: any) => k.id === expiring.id).state).toBe("expired");
    expect((await b.admin.post("/api/v1/admin/keys", { label: "fits", capabilities: [] })).status).toBe(201);
  });

  it("revoked: 401 key_revoked on the next request", async () => {
    const k = await keyWith(t, []);
    const use = t.as({ key: k.key });
    expect((await use.get("/api/v1/discussions")).status).toBe(200);
    expect((await t.api.del(`/api/v1/keys/${k.id}`)).status).toBe(204);
    const r = await use.get("/api/v1/discussions");
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("key_revoked");
  });

  it("unknown or malformed keys: 401 unauthenticated", async () => {
    for (const key of [`ek_${"ab".repeat(32)}`, "ek_short", `EK_${"ab".repeat(32)}`, `ek_${"AB".repeat(32)}`, "garbage"]) {
      const r = await client(server.url, { key }).get("/api/v1/discussions");
      expect(r.status, key).toBe(401);
      expect(r.body.code).toBe("unauthenticated");
    }
  });

  it("lastUsedAt is set after use", async () => {
    const k = await keyWith(t, []);
    const find = async () => (await t.admin.get("/api/v1/keys?limit=100")).body.items.find((x: any) => x.id === k.id);
    expect((await find()).lastUsedAt).toBeNull();
    expect((await t.as({ key: k.key }).get("/api/v1/discussions")).status).toBe(200);
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && !lastUsedAt; i++) {
      lastUsedAt = (await find()).lastUsedAt;
      if (!lastUsedAt) await new Promise((r) => setTimeout(r, 20));
    }
    expect(lastUsedAt).toBe(clock.now().toISOString());
  });

  it("another tenant's key ids → 404 on DELETE (never 403)", async () => {
    const other = await createTestTenant(server);
    const theirs = await keyWith(other, []);
    expect((await t.api.del(`/api/v1/keys/${theirs.id}`)).status).toBe(404);
    expect((await t.admin.del(`/api/v1/admin/keys/${theirs.id}`)).status).toBe(404);
    expect((await other.as({ key: theirs.key }).get("/api/v1/discussions")).status).toBe(200);
  });
});
