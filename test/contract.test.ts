// Black-box contract suite: written from ../shared/contract/API.md (and the README for how to run
// the service) alone. It bootstraps tenants with the real CLI, starts the real server as a child
// process (`node dist/main.js`, what `npm start` runs after its build) and talks to it with plain `fetch`, a
// loopback webhook receiver (node:http) and a small SSE reader of its own. Nothing from src/ is
// imported.
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  ADMIN_JWT_SECRET,
  BASE,
  DEFAULT_KINDS,
  ISO_MS,
  Received,
  Receiver,
  Res,
  Stream,
  Tenant,
  UUID,
  api,
  cli,
  createTenant,
  eventually,
  expectCollection,
  expectComment,
  expectEnvelope,
  expectProblem,
  expectStatus,
  freePort,
  identity,
  jwt,
  now,
  openStream,
  setBase,
  sleep,
  startReceiver,
} from "./support/contract-client.js";

// ───────────────────────────── the run ─────────────────────────────

let A: Tenant; // main tenant
let B: Tenant; // the "other tenant"
let server: ChildProcess | undefined;
let serverLog = "";
const receivers: Receiver[] = [];

// A's readers
let ada = "";
let bob = "";
const adaAs = () => identity(A.identitySecret, "u-ada", "Ada");
const bobAs = () => identity(A.identitySecret, "u-bob", "Bob");

// keys created during the run (raw values)
let modKey = ""; // moderate_content only
let plainKey = ""; // no capabilities
let mgrKey = ""; // manage_api_keys only

beforeAll(async () => {
  A = await createTenant("Acme");
  B = await createTenant("Beta");
  ada = adaAs();
  bob = bobAs();

  const port = await freePort();
  setBase(`http://127.0.0.1:${port}`);
  server = spawn(process.execPath, ["dist/main.js"], {
    cwd: process.cwd(),
    detached: true, // own process group: the server and anything it starts are stopped together in afterAll
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: inject("databaseUrl"),
      REDIS_URL: inject("redisUrl"),
      ADMIN_JWT_SECRET,
      ALLOW_HTTP_WEBHOOKS: "1",
      RUN_WEBHOOK_WORKER: "1",
      LOG_LEVEL: "silent",
      // testing knobs (README, configuration): real time runs short here instead of sleeping
      STREAM_TICKET_TTL_SECONDS: "1",
    },
  });
  server.stdout?.on("data", (d: Buffer) => (serverLog += d.toString()));
  server.stderr?.on("data", (d: Buffer) => (serverLog += d.toString()));
  await eventually(
    async () => {
      if (server?.exitCode !== null) throw new Error(`server exited: ${serverLog}`);
      const h = await fetch(`${BASE}/healthz`);
      const r = await fetch(`${BASE}/readyz`);
      if (h.status !== 200 || r.status !== 200) throw new Error(`not ready: ${h.status} ${r.status}`);
    },
    60_000,
    200,
  );
}, 120_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  await terminate(server);
}, 30_000);

/** SIGTERM to the child's process group; resolves when it has exited (a 10 s guard, never a wait). */
async function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
  let guard: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((r) => (guard = setTimeout(r, 10_000)))]);
  clearTimeout(guard);
}

// ───────────────────────────── bootstrap ─────────────────────────────

describe("bootstrap (CLI + process)", { timeout: 60_000 }, () => {
  it("tenant create --json prints one JSON object with tenantId, adminToken, apiKey, identitySecret", async () => {
    const r = await cli("tenant", "create", "--name", "Gamma", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const t = JSON.parse(r.stdout);
    expect(Object.keys(t).sort()).toEqual(["adminToken", "apiKey", "identitySecret", "tenantId"]);
    expect(typeof t.tenantId).toBe("string");
    expect(t.apiKey).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(t.adminToken.split(".")).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(t.adminToken.split(".")[1], "base64url").toString());
    expect(claims.tid).toBe(t.tenantId);
    expect(typeof claims.sub).toBe("string");
    expect(typeof claims.exp).toBe("number");
    expect(typeof t.identitySecret).toBe("string");
    expect(t.identitySecret.length).toBeGreaterThan(0);
  });

  it("migrate applies pending migrations (none left: exit 0)", async () => {
    const r = await cli("migrate");
    expect(r.code, r.stderr).toBe(0);
  });

  it("healthz and readyz answer 200", async () => {
    expect((await fetch(`${BASE}/healthz`)).status).toBe(200);
    expect((await fetch(`${BASE}/readyz`)).status).toBe(200);
  });

  it("admin-token --tenant <id> --ttl 1h mints a working admin JWT", async () => {
    const r = await cli("admin-token", "--tenant", A.tenantId, "--ttl", "1h");
    expect(r.code, r.stderr).toBe(0);
    const token = r.stdout.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/)?.[0];
    expect(token, r.stdout).toBeDefined();
    expectStatus(await api.get("/keys", { admin: token }), 200);
  });
});

// ───────────────────────────── auth ─────────────────────────────

describe("authentication", () => {
  it("no credentials → 401 unauthenticated", async () => {
    expectProblem(await api.get("/discussions"), 401, "unauthenticated");
  });

  it("unknown API key → 401 unauthenticated", async () => {
    expectProblem(await api.get("/discussions", { key: `ek_${"0".repeat(64)}` }), 401, "unauthenticated");
  });

  it("the admin JWT works on dual-auth routes", async () => {
    expectStatus(await api.get("/discussions", { admin: A.adminToken }), 200);
    expectStatus(await api.get("/keys", { admin: A.adminToken }), 200);
  });

  it("bad admin JWTs → 401 (wrong signature, alg none, no exp, past exp, unknown tenant)", async () => {
    const t = now();
    const bad = [
      jwt("not-the-secret-not-the-secret-not-the-secret", { sub: "admin", tid: A.tenantId, exp: t + 600 }),
      jwt("", { sub: "admin", tid: A.tenantId, exp: t + 600 }, "none"),
      jwt(ADMIN_JWT_SECRET, { sub: "admin", tid: A.tenantId }),
      jwt(ADMIN_JWT_SECRET, { sub: "admin", tid: A.tenantId, exp: t - 60 }),
      jwt(ADMIN_JWT_SECRET, { sub: "admin", tid: "ten_does_not_exist", exp: t + 600 }),
    ];
    for (const token of bad) {
      const res = await api.get("/keys", { admin: token });
      expectProblem(res, 401, "unauthenticated");
    }
    // and the control: a well-formed one works
    expectStatus(await api.get("/keys", { admin: jwt(ADMIN_JWT_SECRET, { sub: "admin", tid: A.tenantId, exp: t + 600 }) }), 200);
  });
});

// ───────────────────────────── keys ─────────────────────────────

describe("API keys", { timeout: 60_000 }, () => {
  let tempKeyId = "";
  let tempKey = "";

  it("POST /admin/keys (admin JWT) → 201 with id, key (ek_+64 hex), prefix (12 chars), label, capabilities, expiresAt, createdAt", async () => {
    const res = await api.post("/admin/keys", {
      admin: A.adminToken,
      json: { label: "moderation bot", capabilities: ["moderate_content"], expiresAt: null },
    });
    expectStatus(res, 201);
    expect(Object.keys(res.body).sort()).toEqual(["capabilities", "createdAt", "expiresAt", "id", "key", "label", "prefix"]);
    expect(typeof res.body.id).toBe("string");
    expect(res.body.key).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(res.body.prefix).toBe(res.body.key.slice(0, 12));
    expect(res.body.label).toBe("moderation bot");
    expect(res.body.capabilities).toEqual(["moderate_content"]);
    expect(res.body.expiresAt).toBeNull();
    expect(res.body.createdAt).toMatch(ISO_MS);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    modKey = res.body.key;
  });

  it("POST /keys with a manage_api_keys key → 201 (also with no capabilities)", async () => {
    const plain = await api.post("/keys", { key: A.apiKey, json: { label: "publisher", capabilities: [], expiresAt: null } });
    expectStatus(plain, 201);
    expect(plain.body.key).toMatch(/^ek_[0-9a-f]{64}$/);
    expect(plain.body.prefix).toBe(plain.body.key.slice(0, 12));
    expect(plain.body.capabilities).toEqual([]);
    plainKey = plain.body.key;

    const mgr = await api.post("/keys", { key: A.apiKey, json: { label: "key manager", capabilities: ["manage_api_keys"] } });
    expectStatus(mgr, 201);
    expect(mgr.body.capabilities).toEqual(["manage_api_keys"]);
    mgrKey = mgr.body.key;
  });

  it("a key may only grant capabilities it holds → 403 capability_escalation", async () => {
    const res = await api.post("/keys", { key: mgrKey, json: { label: "escalate", capabilities: ["moderate_content"] } });
    expectProblem(res, 403, "capability_escalation");
    // granting what it holds is fine
    const ok = await api.post("/keys", { key: mgrKey, json: { label: "same caps", capabilities: ["manage_api_keys"] } });
    expectStatus(ok, 201);
    tempKeyId = ok.body.id;
    tempKey = ok.body.key;
  });

  it("POST /keys without manage_api_keys → 403 missing_capability naming `required`", async () => {
    const res = await api.post("/keys", { key: modKey, json: { label: "x", capabilities: [] } });
    expectProblem(res, 403, "missing_capability");
    expect(res.body.required).toBeDefined();
    expect(JSON.stringify(res.body.required)).toContain("manage_api_keys");
  });

  it("unknown capability → 422 validation_failed; `errors` lists every problem", async () => {
    const res = await api.post("/keys", { key: A.apiKey, json: { label: "x", capabilities: ["fly"] } });
    expectProblem(res, 422, "validation_failed");
    expect(Array.isArray(res.body.errors)).toBe(true);
    expect(res.body.errors.length).toBeGreaterThanOrEqual(1);
    for (const e of res.body.errors) {
      expect(typeof e.path).toBe("string");
      expect(typeof e.message).toBe("string");
    }
    const two = await api.post("/keys", { key: A.apiKey, json: { label: "", capabilities: ["fly"] } });
    expectProblem(two, 422, "validation_failed");
    expect(two.body.errors.length).toBeGreaterThanOrEqual(2);
  });

  it("a label over 100 chars → 422; key routes without manage_api_keys → 403 missing_capability", async () => {
    expectProblem(await api.post("/keys", { key: A.apiKey, json: { label: "l".repeat(101), capabilities: [] } }), 422, "validation_failed");
    const list = await api.get("/keys", { key: plainKey });
    expectProblem(list, 403, "missing_capability");
    expect(res_required(list)).toContain("manage_api_keys");
    expectProblem(await api.del("/keys/anything", { key: modKey }), 403, "missing_capability");
  });

  it("GET /keys lists keys without raw values, with `state` and `lastUsedAt`", async () => {
    const res = await api.get("/keys", { key: A.apiKey });
    expectCollection(res);
    expect(res.body.items.length).toBeGreaterThanOrEqual(4);
    for (const k of res.body.items) {
      expect(typeof k.id).toBe("string");
      expect(typeof k.prefix).toBe("string");
      expect(k.prefix).toMatch(/^ek_[0-9a-f]{9}$/);
      expect(typeof k.label).toBe("string");
      expect(Array.isArray(k.capabilities)).toBe(true);
      expect(["active", "expired", "revoked"]).toContain(k.state);
      expect(k).toHaveProperty("lastUsedAt");
      expect(k.lastUsedAt === null || ISO_MS.test(k.lastUsedAt)).toBe(true);
    }
    for (const raw of [A.apiKey, modKey, plainKey, mgrKey]) expect(res.text).not.toContain(raw);
    // the bootstrap key has been used: its lastUsedAt gets recorded
    await eventually(
      async () => {
        const r = await api.get("/keys?limit=100", { admin: A.adminToken });
        const first = r.body.items.find((k: any) => A.apiKey.startsWith(k.prefix));
        expect(first?.lastUsedAt).toMatch(ISO_MS);
      },
      15_000,
      500,
    );
  });

  it("DELETE /keys/{id} → 204, then the key is refused with 401 key_revoked and listed as revoked", async () => {
    expectStatus(await api.get("/discussions", { key: tempKey }), 200);
    const del = await api.del(`/keys/${tempKeyId}`, { key: mgrKey });
    expectStatus(del, 204);
    expect(del.text).toBe("");
    expectProblem(await api.get("/discussions", { key: tempKey }), 401, "key_revoked");
    const list = await api.get("/keys?limit=100", { key: A.apiKey });
    expect(list.body.items.find((k: any) => k.id === tempKeyId)?.state).toBe("revoked");
  });

  it("DELETE /admin/keys/{id} (admin JWT) → 204, then 401 key_revoked", async () => {
    const k = await api.post("/admin/keys", { admin: A.adminToken, json: { label: "short lived", capabilities: [] } });
    expectStatus(k, 201);
    expectStatus(await api.get("/discussions", { key: k.body.key }), 200);
    expectStatus(await api.del(`/admin/keys/${k.body.id}`, { admin: A.adminToken }), 204);
    expectProblem(await api.get("/discussions", { key: k.body.key }), 401, "key_revoked");
  });

  it("/admin/* routes refuse an API key (admin JWT only)", async () => {
    const post = await api.post("/admin/keys", { key: A.apiKey, json: { label: "nope", capabilities: [] } });
    expect([401, 403], post.text).toContain(post.status);
    expect(post.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const del = await api.del(`/admin/keys/does-not-matter`, { key: A.apiKey });
    expect([401, 403], del.text).toContain(del.status);
  });

  it("a key past expiresAt → 401 key_expired and state expired", async () => {
    const expiresAt = new Date(Date.now() + 1_000).toISOString();
    const k = await api.post("/keys", { key: A.apiKey, json: { label: "expiring", capabilities: [], expiresAt } });
    expectStatus(k, 201);
    expect(k.body.expiresAt).toMatch(ISO_MS);
    expect(Date.parse(k.body.expiresAt)).toBe(Date.parse(expiresAt));
    expectStatus(await api.get("/discussions", { key: k.body.key }), 200);
    await eventually(async () => expectProblem(await api.get("/discussions", { key: k.body.key }), 401, "key_expired"), 5_000, 100);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    const list = await api.get("/keys?limit=100", { key: A.apiKey });
    expect(list.body.items.find((x: any) => x.id === k.body.id)?.state).toBe("expired");
  });
});

// ───────────────────────────── discussions ─────────────────────────────

describe("discussions", () => {
  it("PUT /discussions/{id} → 201 on create, 200 on update", async () => {
    const created = await api.put("/discussions/d-main", {
      key: A.apiKey,
      json: { title: "Launch day", url: "https://example.com/launch" },
    });
    expectStatus(created, 201);
    expect(created.body.id).toBe("d-main");
    expect(created.body.state).toBe("open");
    const updated = await api.put("/discussions/d-main", {
      key: A.apiKey,
      json: { title: "Launch day!", url: "https://example.com/launch" },
    });
    expectStatus(updated, 200);
    expect(updated.body.title).toBe("Launch day!");
  });

  it("GET /discussions/{id} → counts and state", async () => {
    const res = await api.get("/discussions/d-main", { key: plainKey });
    expectStatus(res, 200);
    expect(res.body.id).toBe("d-main");
    expect(res.body.state).toBe("open");
    // "counts": the contract names no field; the README documents commentCount / counts.comments
    expect(JSON.stringify(res.body)).toMatch(/count/i);
  });

  it("GET /discussions → {items, nextCursor}, paginated with limit/cursor", async () => {
    expectStatus(await api.put("/discussions/d-second", { key: A.apiKey, json: { title: "Second" } }), 201);
    const all = await api.get("/discussions", { key: A.apiKey });
    expectCollection(all);
    expect(all.body.items.map((d: any) => d.id)).toEqual(expect.arrayContaining(["d-main", "d-second"]));
    const p1 = await api.get("/discussions?limit=1", { key: A.apiKey });
    expectCollection(p1);
    expect(p1.body.items).toHaveLength(1);
    expect(typeof p1.body.nextCursor).toBe("string");
    const p2 = await api.get(`/discussions?limit=1&cursor=${encodeURIComponent(p1.body.nextCursor)}`, { key: A.apiKey });
    expectCollection(p2);
    expect(p2.body.items).toHaveLength(1);
    expect(p2.body.items[0].id).not.toBe(p1.body.items[0].id);
  });

  it("bad path / query parameters → 400 invalid_parameter", async () => {
    expectProblem(await api.get(`/discussions/${encodeURIComponent("bad id!")}`, { key: A.apiKey }), 400, "invalid_parameter");
    expectProblem(await api.get("/discussions?limit=0", { key: A.apiKey }), 400, "invalid_parameter");
    expectProblem(await api.get("/discussions?limit=101", { key: A.apiKey }), 400, "invalid_parameter");
  });

  it("discussion ids up to 128 chars of [A-Za-z0-9._:-] are accepted (PUT, GET, comments, stream)", async () => {
    const long = `L.${"a".repeat(120)}:_-0Z9`; // 128 chars
    expect(long).toHaveLength(128);
    const ok = await api.put(`/discussions/${long}`, { key: A.apiKey, json: { title: "long id" } });
    expectStatus(ok, 201);
    expect(ok.body.id).toBe(long);
    expectStatus(await api.get(`/discussions/${long}`, { key: A.apiKey }), 200);
    const mid = "m".repeat(101);
    expectStatus(await api.post(`/discussions/${mid}/comments`, { key: A.apiKey, identity: ada, json: { body: "101-char id" } }), 201);
    const s = await openStream(`/stream/${mid}`, { "x-api-key": A.apiKey });
    s.close();
    expect(s.res.status).toBe(200);
  });

  it("a 129-char discussion id → 400 invalid_parameter (problem document)", async () => {
    expectProblem(await api.put(`/discussions/${"x".repeat(129)}`, { key: A.apiKey, json: { title: "t" } }), 400, "invalid_parameter");
  });

  it("any over-long path id is still answered with a problem document (404 or 400)", async () => {
    for (const path of [`/comments/${"c".repeat(300)}`, `/webhooks/${"w".repeat(150)}`]) {
      const res = await api.get(path, { key: A.apiKey });
      expect([400, 404], `${path}: ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(["not_found", "invalid_parameter"]).toContain(res.body.code);
    }
  });

  it("PUT with a non-string title → 422 validation_failed", async () => {
    expectProblem(await api.put("/discussions/d-main", { key: A.apiKey, json: { title: 42 } }), 422, "validation_failed");
  });

  it("lock → 200 with the discussion; locked refuses comments, edits, reactions with 409 discussion_locked; unlock reopens", async () => {
    expectStatus(await api.put("/discussions/d-lock", { key: A.apiKey, json: { title: "Lockable" } }), 201);
    const c0 = await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "before the lock" } });
    expectStatus(c0, 201);

    const locked = await api.post("/discussions/d-lock/lock", { key: modKey });
    expectStatus(locked, 200);
    expect(locked.body.id).toBe("d-lock");
    expect(locked.body.state).toBe("locked");
    expect((await api.get("/discussions/d-lock", { key: A.apiKey })).body.state).toBe("locked");

    expectProblem(
      await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "x" } }),
      409,
      "discussion_locked",
    );
    expectProblem(
      await api.patch(`/comments/${c0.body.id}`, { key: A.apiKey, identity: ada, json: { body: "edited" } }),
      409,
      "discussion_locked",
    );
    expectProblem(
      await api.post(`/comments/${c0.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "like" } }),
      409,
      "discussion_locked",
    );

    const unlocked = await api.post("/discussions/d-lock/unlock", { key: modKey });
    expectStatus(unlocked, 200);
    expect(unlocked.body.state).toBe("open");
    expectStatus(await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "after" } }), 201);
  });

  it("archive → 200; archived refuses comments (409 discussion_archived) for good", async () => {
    const archived = await api.post("/discussions/d-lock/archive", { key: modKey });
    expectStatus(archived, 200);
    expect(archived.body.state).toBe("archived");
    expectProblem(
      await api.post("/discussions/d-lock/comments", { key: A.apiKey, identity: ada, json: { body: "x" } }),
      409,
      "discussion_archived",
    );
    const reopen = await api.post("/discussions/d-lock/unlock", { key: modKey });
    expectProblem(reopen, 409, "discussion_archived");
    expect((await api.get("/discussions/d-lock", { key: A.apiKey })).body.state).toBe("archived");
  });

  it("lock without moderate_content → 403 missing_capability", async () => {
    const res = await api.post("/discussions/d-main/lock", { key: plainKey });
    expectProblem(res, 403, "missing_capability");
    expect(JSON.stringify(res.body.required)).toContain("moderate_content");
  });
});

// ───────────────────────────── comments ─────────────────────────────

describe("comments", { timeout: 30_000 }, () => {
  let c1: any;
  let c2: any;
  let c3: any;
  let reply: any;

  it("POST /discussions/{id}/comments + identity → 201 with the contract's comment fields", async () => {
    expectStatus(await api.put("/discussions/d-c", { key: A.apiKey, json: { title: "Comments" } }), 201);
    const res = await api.post("/discussions/d-c/comments", { key: plainKey, identity: ada, json: { body: "First!" } });
    expectStatus(res, 201);
    expectComment(res.body);
    expect(res.body.discussionId).toBe("d-c");
    expect(res.body.parentId).toBeNull();
    expect(res.body.author.name).toBe("Ada");
    expect(res.body.body).toBe("First!");
    expect(res.body.status).toBe("approved");
    expect(res.body.pinned).toBe(false);
    expect(res.body.editedAt).toBeNull();
    expect(res.body.replyCount).toBe(0);
    c1 = res.body;
  });

  it("the comment carries exactly the contract's fields (no others)", () => {
    expect(c1).toBeDefined();
    expectComment(c1, true);
  });

  it("the identity's avatarUrl reaches the author", async () => {
    const id = identity(A.identitySecret, "u-cy", "Cy", { avatarUrl: "https://example.com/cy.png" });
    const res = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: id, json: { body: "with avatar" } });
    expectStatus(res, 201);
    expect(res.body.author).toEqual({ id: expect.any(String), name: "Cy", avatarUrl: "https://example.com/cy.png" });
    c2 = res.body;
  });

  it("posting to an unknown discussion creates it", async () => {
    const res = await api.post("/discussions/d-auto/comments", { key: A.apiKey, identity: ada, json: { body: "hello" } });
    expectStatus(res, 201);
    const d = await api.get("/discussions/d-auto", { key: A.apiKey });
    expectStatus(d, 200);
    expect(d.body.state).toBe("open");
  });

  it("missing or bad identity → 401 invalid_identity", async () => {
    const iat = now();
    const s = A.identitySecret;
    const cases: (string | undefined)[] = [
      undefined, // missing
      "not-a-jwt",
      jwt("wrong-secret-wrong-secret-wrong", { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }), // bad signature
      jwt(s, { sub: "u-ada", name: "Ada", iat: iat - 1200, exp: iat - 600 }), // expired
      jwt(s, { sub: "u-ada", name: "Ada", iat }), // no exp
      jwt(s, { sub: "u-ada", name: "Ada", iat, exp: iat + 7200 }), // exp > 1 h after iat
      jwt(s, { name: "Ada", iat, exp: iat + 600 }), // no sub
      jwt(s, { sub: "u-ada", iat, exp: iat + 600 }), // no name
      jwt(s, { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }, "none"), // alg none
      jwt(B.identitySecret, { sub: "u-ada", name: "Ada", iat, exp: iat + 600 }), // another tenant's secret
    ];
    for (const idt of cases) {
      const res = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: idt, json: { body: "x" } });
      expectProblem(res, 401, "invalid_identity");
    }
  });

  it("body must be 1–10,000 chars → 422 validation_failed with errors[].path", async () => {
    const empty = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "" } });
    expectProblem(empty, 422, "validation_failed");
    expect(empty.body.errors.map((e: any) => e.path).join(" ")).toContain("body");
    expectProblem(
      await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "y".repeat(10_001) } }),
      422,
      "validation_failed",
    );
    const max = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "z".repeat(10_000) } });
    expectStatus(max, 201);
    c3 = max.body;
  });

  it("a reply carries parentId and counts in the parent's replyCount", async () => {
    const res = await api.post("/discussions/d-c/comments", {
      key: A.apiKey,
      identity: bob,
      json: { body: "Reply to Ada", parentId: c1.id },
    });
    expectStatus(res, 201);
    expectComment(res.body);
    expect(res.body.parentId).toBe(c1.id);
    reply = res.body;
    const parent = await api.get(`/comments/${c1.id}`, { key: plainKey });
    expectStatus(parent, 200);
    expect(parent.body.replyCount).toBe(1);
  });

  it("?parentId= lists only that comment's direct replies", async () => {
    const res = await api.get(`/discussions/d-c/comments?parentId=${c1.id}`, { key: plainKey });
    expectCollection(res);
    expect(res.body.items.map((c: any) => c.id)).toEqual([reply.id]);
  });

  it("GET /comments/{id} → the comment", async () => {
    const res = await api.get(`/comments/${c2.id}`, { key: plainKey });
    expectStatus(res, 200);
    expectComment(res.body);
    expect(res.body.id).toBe(c2.id);
    expect(res.body.author.avatarUrl).toBe("https://example.com/cy.png");
  });

  it("list: sort=oldest|newest, limit and cursor walk every comment once", async () => {
    const oldest = await api.get("/discussions/d-c/comments?sort=oldest&limit=100", { key: plainKey });
    expectCollection(oldest);
    const ids = oldest.body.items.map((c: any) => c.id);
    for (const id of [c1.id, c2.id, c3.id, reply.id]) expect(ids).toContain(id);
    for (const c of oldest.body.items) expectComment(c);
    const times = oldest.body.items.map((c: any) => Date.parse(c.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const newest = await api.get("/discussions/d-c/comments?sort=newest&limit=100", { key: plainKey });
    expectCollection(newest);
    expect(newest.body.items.map((c: any) => c.id)).toEqual([...ids].reverse());

    const walked: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const q: string = `/discussions/d-c/comments?sort=oldest&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await api.get(q, { key: plainKey });
      expectCollection(page);
      expect(page.body.items.length).toBeLessThanOrEqual(1);
      walked.push(...page.body.items.map((c: any) => c.id));
      cursor = page.body.nextCursor;
      if (!cursor) break;
    }
    expect(walked).toEqual(ids);
  });

  it("a cursor walk is stable under concurrent inserts (no duplicates, nothing skipped)", async () => {
    expectStatus(await api.put("/discussions/d-page", { key: A.apiKey, json: { title: "Paging" } }), 201);
    const initial: string[] = [];
    for (let i = 0; i < 6; i++) {
      const c = await api.post("/discussions/d-page/comments", { key: A.apiKey, identity: ada, json: { body: `p${i}` } });
      initial.push(c.body.id);
    }
    for (const sort of ["newest", "oldest"]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 30; i++) {
        const q: string = `/discussions/d-page/comments?sort=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await api.get(q, { key: A.apiKey });
        expectCollection(page);
        seen.push(...page.body.items.map((c: any) => c.id));
        // someone posts between two pages
        expectStatus(
          await api.post("/discussions/d-page/comments", { key: A.apiKey, identity: bob, json: { body: `during ${sort} ${i}` } }),
          201,
        );
        cursor = page.body.nextCursor;
        if (!cursor) break;
      }
      expect(new Set(seen).size, `${sort}: no duplicates`).toBe(seen.length);
      for (const id of initial) expect(seen, `${sort}: nothing skipped`).toContain(id);
    }
  });

  it("PATCH by the author → 200 with editedAt; by another reader → 403 not_author; no identity → 401", async () => {
    const res = await api.patch(`/comments/${c2.id}`, {
      key: plainKey,
      identity: identity(A.identitySecret, "u-cy", "Cy"),
      json: { body: "edited body" },
    });
    expectStatus(res, 200);
    expectComment(res.body);
    expect(res.body.body).toBe("edited body");
    expect(res.body.editedAt).toMatch(ISO_MS);
    expectProblem(await api.patch(`/comments/${c2.id}`, { key: plainKey, identity: bob, json: { body: "hijack" } }), 403, "not_author");
    expectProblem(await api.patch(`/comments/${c2.id}`, { key: plainKey, json: { body: "anon" } }), 401, "invalid_identity");
  });

  it("DELETE by another reader → 403 not_author; by the author → 204, soft delete (tombstone with replies)", async () => {
    expectProblem(await api.del(`/comments/${c1.id}`, { key: plainKey, identity: bob }), 403, "not_author");
    const del = await api.del(`/comments/${c1.id}`, { key: plainKey, identity: ada });
    expectStatus(del, 204);
    expect(del.text).toBe("");
    const list = await api.get("/discussions/d-c/comments?sort=oldest&limit=100", { key: plainKey });
    const tomb = list.body.items.find((c: any) => c.id === c1.id);
    expect(tomb, "a deleted comment with replies stays as a tombstone").toBeDefined();
    expect(tomb.status).toBe("deleted");
    expect(tomb.body).toBe("");
    const one = await api.get(`/comments/${c1.id}`, { key: plainKey });
    if (one.status === 200) {
      expect(one.body.status).toBe("deleted");
      expect(one.body.body).toBe("");
    } else expectProblem(one, 404, "not_found");
  });

  it("a moderator key may delete any comment → 204", async () => {
    expectStatus(await api.del(`/comments/${c3.id}`, { key: modKey }), 204);
    const list = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(list.body.items.map((c: any) => c.id)).not.toContain(c3.id); // no replies → not listed
  });

  it("approve / reject / pin / unpin (moderate_content) → 200 with the comment; pinned comes first", async () => {
    const pin = await api.post(`/comments/${reply.id}/pin`, { key: modKey });
    expectStatus(pin, 200);
    expectComment(pin.body);
    expect(pin.body.pinned).toBe(true);
    for (const sort of ["oldest", "newest", "top"]) {
      const list = await api.get(`/discussions/d-c/comments?sort=${sort}`, { key: plainKey });
      expectCollection(list);
      expect(list.body.items[0].id, `sort=${sort}`).toBe(reply.id);
    }
    const unpin = await api.post(`/comments/${reply.id}/unpin`, { key: modKey });
    expectStatus(unpin, 200);
    expect(unpin.body.pinned).toBe(false);

    const reject = await api.post(`/comments/${c2.id}/reject`, { key: modKey });
    expectStatus(reject, 200);
    expectComment(reject.body);
    expect(reject.body.status).toBe("rejected");
    const visible = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(visible.body.items.map((c: any) => c.id)).not.toContain(c2.id);
    const rejected = await api.get("/discussions/d-c/comments?status=rejected", { key: modKey });
    expectCollection(rejected);
    expect(rejected.body.items.map((c: any) => c.id)).toContain(c2.id);
    // a rejected comment is not shown to a key without moderate_content (and no identity)
    const hidden = await api.get(`/comments/${c2.id}`, { key: plainKey });
    expect([403, 404], hidden.text).toContain(hidden.status);

    const approve = await api.post(`/comments/${c2.id}/approve`, { key: modKey });
    expectStatus(approve, 200);
    expect(approve.body.status).toBe("approved");
    const again = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
    expect(again.body.items.map((c: any) => c.id)).toContain(c2.id);
  });

  it("moderation routes and ?status=pending without moderate_content → 403 missing_capability with `required`", async () => {
    const list = await api.get("/discussions/d-c/comments?status=pending", { key: plainKey });
    expectProblem(list, 403, "missing_capability");
    expect(res_required(list)).toContain("moderate_content");
    for (const action of ["approve", "reject", "pin", "unpin"]) {
      const r = await api.post(`/comments/${c2.id}/${action}`, { key: plainKey });
      expectProblem(r, 403, "missing_capability");
      expect(res_required(r)).toContain("moderate_content");
    }
  });

  it("publisher routes accept a key with no capabilities", async () => {
    expectStatus(await api.get("/discussions/d-c/comments", { key: plainKey }), 200);
    expectStatus(await api.post("/discussions/d-c/comments", { key: plainKey, identity: bob, json: { body: "publisher" } }), 201);
  });
});

function res_required(res: Res): string {
  expect(res.body.required, "problem body names `required`").toBeDefined();
  return JSON.stringify(res.body.required);
}

// ───────────────────────────── reactions ─────────────────────────────

describe("reactions", () => {
  let target: any;

  it("toggle → 200 {kind, active, counts}; toggling twice → active false", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "react to me" } });
    expectStatus(c, 201);
    target = c.body;
    const on = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: bob, json: { kind: "like" } });
    expectStatus(on, 200);
    expect(Object.keys(on.body).sort()).toEqual(["active", "counts", "kind"]);
    expect(on.body.kind).toBe("like");
    expect(on.body.active).toBe(true);
    expect(on.body.counts.like).toBe(1);

    const other = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: ada, json: { kind: "like" } });
    expectStatus(other, 200);
    expect(other.body.counts.like).toBe(2);

    const off = await api.post(`/comments/${target.id}/reactions`, { key: plainKey, identity: bob, json: { kind: "like" } });
    expectStatus(off, 200);
    expect(off.body.active).toBe(false);
    expect(off.body.counts.like).toBe(1);

    const got = await api.get(`/comments/${target.id}`, { key: plainKey });
    expect(got.body.reactions.like).toBe(1);
  });

  it("sort=top puts the most-reacted comment first", async () => {
    const res = await api.get("/discussions/d-c/comments?sort=top", { key: plainKey });
    expectCollection(res);
    expect(res.body.items[0].id).toBe(target.id);
  });

  it("unknown kind → 422 validation_failed; no identity → 401 invalid_identity", async () => {
    expectProblem(
      await api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "meh" } }),
      422,
      "validation_failed",
    );
    expectProblem(await api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, json: { kind: "like" } }), 401, "invalid_identity");
  });

  it("concurrent toggles of ten readers count ten", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.post(`/comments/${target.id}/reactions`, {
          key: A.apiKey,
          identity: identity(A.identitySecret, `u-many-${i}`, `R${i}`),
          json: { kind: "wow" },
        }),
      ),
    );
    for (const r of results) expectStatus(r, 200);
    expect((await api.get(`/comments/${target.id}`, { key: A.apiKey })).body.reactions.wow).toBe(10);
  });

  it("one reaction per reader, kind and comment, even under concurrent toggles", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        api.post(`/comments/${target.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "love" } }),
      ),
    );
    for (const r of results) expectStatus(r, 200);
    const got = await api.get(`/comments/${target.id}`, { key: A.apiKey });
    expect(got.body.reactions.love ?? 0).toBe(0); // 8 toggles = even → inactive
  });
});

// ───────────────────────────── settings ─────────────────────────────

describe("settings", { timeout: 30_000 }, () => {
  it("GET /settings → every contract field with its default", async () => {
    const res = await api.get("/settings", { key: A.apiKey });
    expectStatus(res, 200);
    const s = res.body;
    for (const f of ["moderation", "editWindowSeconds", "reactionKinds", "maxBodyLength", "delivery", "replay", "rateLimits"]) {
      expect(s, `settings.${f}`).toHaveProperty(f);
    }
    expect(s.moderation).toBe("post");
    expect(s.editWindowSeconds).toBe(900);
    expect([...s.reactionKinds].sort()).toEqual([...DEFAULT_KINDS].sort());
    expect(typeof s.maxBodyLength).toBe("number");
    expect(s.delivery).toEqual({
      maxAttempts: 3,
      backoffBaseMs: 1000,
      attemptTimeoutMs: 10000,
      breakerThreshold: 10,
      breakerCooldownMs: 60000,
      disableThreshold: 50,
    });
    expect(s.replay).toEqual({ maxEvents: 1000, maxAgeSeconds: 86400 });
    expect(typeof s.rateLimits).toBe("object");
  });

  it("settings without manage_settings → 403 missing_capability; admin JWT works", async () => {
    const res = await api.get("/settings", { key: modKey });
    expectProblem(res, 403, "missing_capability");
    expect(res_required(res)).toContain("manage_settings");
    expectStatus(await api.get("/settings", { admin: A.adminToken }), 200);
  });

  it("PATCH merges the fields it names; invalid values → 422", async () => {
    const before = (await api.get("/settings", { key: A.apiKey })).body;
    const res = await api.patch("/settings", { key: A.apiKey, json: { editWindowSeconds: 1 } });
    expectStatus(res, 200);
    expect(res.body).toEqual({ ...before, editWindowSeconds: 1 });
    expectProblem(await api.patch("/settings", { key: A.apiKey, json: { moderation: "sometimes" } }), 422, "validation_failed");
  });

  it("PATCH of a nested object keeps the fields it does not name (README: merged field by field)", async () => {
    const res = await api.patch("/settings", { key: A.apiKey, json: { delivery: { maxAttempts: 5 } } });
    expectStatus(res, 200);
    expect(res.body.delivery).toEqual({
      maxAttempts: 5,
      backoffBaseMs: 1000,
      attemptTimeoutMs: 10000,
      breakerThreshold: 10,
      breakerCooldownMs: 60000,
      disableThreshold: 50,
    });
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { delivery: { maxAttempts: 3 } } }), 200);
  });

  it("past the edit window → 409 edit_window_closed", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "quick" } });
    expectStatus(c, 201);
    // editWindowSeconds is 1 here (set above): wait until the window has passed, then edit once
    await sleep(Math.max(0, Date.parse(c.body.createdAt) + 1_150 - Date.now()));
    expectProblem(
      await api.patch(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada, json: { body: "late" } }),
      409,
      "edit_window_closed",
    );
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { editWindowSeconds: 900 } }), 200);
  });

  it('moderation "pre": new comments are pending and invisible in the list until approved', async () => {
    const set = await api.patch("/settings", { key: A.apiKey, json: { moderation: "pre" } });
    expectStatus(set, 200);
    expect(set.body.moderation).toBe("pre");
    try {
      const c = await api.post("/discussions/d-c/comments", { key: plainKey, identity: ada, json: { body: "needs review" } });
      expectStatus(c, 201);
      expectComment(c.body);
      expect(c.body.status).toBe("pending");

      const list = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
      expect(list.body.items.map((x: any) => x.id)).not.toContain(c.body.id);
      const asOther = await api.get(`/comments/${c.body.id}`, { key: plainKey, identity: bob });
      expect([403, 404], asOther.text).toContain(asOther.status);
      const asAuthor = await api.get(`/comments/${c.body.id}`, { key: plainKey, identity: ada });
      expectStatus(asAuthor, 200);
      const asMod = await api.get(`/comments/${c.body.id}`, { key: modKey });
      expectStatus(asMod, 200);
      const pending = await api.get("/discussions/d-c/comments?status=pending", { key: modKey });
      expectCollection(pending);
      expect(pending.body.items.map((x: any) => x.id)).toContain(c.body.id);

      expectStatus(await api.post(`/comments/${c.body.id}/approve`, { key: modKey }), 200);
      const after = await api.get("/discussions/d-c/comments?limit=100", { key: plainKey });
      expect(after.body.items.map((x: any) => x.id)).toContain(c.body.id);
    } finally {
      expectStatus(await api.patch("/settings", { key: A.apiKey, json: { moderation: "post" } }), 200);
    }
  });

  it("maxBodyLength is a setting", async () => {
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { maxBodyLength: 10 } }), 200);
    try {
      expectStatus(await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "0123456789" } }), 201);
      expectProblem(
        await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "0123456789X" } }),
        422,
        "validation_failed",
      );
    } finally {
      expectStatus(await api.patch("/settings", { key: A.apiKey, json: { maxBodyLength: 10_000 } }), 200);
    }
  });

  it("reactionKinds is a setting", async () => {
    const c = await api.post("/discussions/d-c/comments", { key: A.apiKey, identity: ada, json: { body: "kinds" } });
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { reactionKinds: ["like", "fire"] } }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "fire" } }), 200);
    expectProblem(
      await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "love" } }),
      422,
      "validation_failed",
    );
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { reactionKinds: DEFAULT_KINDS } }), 200);
  });

  it("POST /settings/identity-secret/rotate → a new secret, shown once, in effect at once (tenant B)", async () => {
    const res = await api.post("/settings/identity-secret/rotate", { key: B.apiKey });
    expect([200, 201], res.text).toContain(res.status);
    const secret: unknown = res.body?.identitySecret ?? res.body?.secret;
    expect(typeof secret, `a secret field in ${res.text}`).toBe("string");
    expect(secret).not.toBe(B.identitySecret);
    const fresh = identity(secret as string, "b-1", "Bea");
    expectStatus(await api.post("/discussions/b-d/comments", { key: B.apiKey, identity: fresh, json: { body: "new secret" } }), 201);
    // README: no grace period (the contract is silent)
    expectProblem(
      await api.post("/discussions/b-d/comments", {
        key: B.apiKey,
        identity: identity(B.identitySecret, "b-1", "Bea"),
        json: { body: "old" },
      }),
      401,
      "invalid_identity",
    );
    const again = await api.get("/settings", { key: B.apiKey });
    expect(again.text).not.toContain(secret as string);
    B.identitySecret = secret as string;
  });
});

// ───────────────────────────── analytics ─────────────────────────────

describe("analytics", () => {
  it("GET /analytics with view_analytics → 200; without → 403 missing_capability", async () => {
    const res = await api.get("/analytics", { key: A.apiKey });
    expectStatus(res, 200);
    expect(typeof res.body).toBe("object");
    // the contract lists the measures, the README names them
    for (const name of ["comments", "replies", "reactions", "activeReaders", "moderationActions", "webhookDeliveries", "ok", "failed"]) {
      expect(res.text).toContain(`"${name}"`);
    }
    expectStatus(await api.get("/analytics?interval=hour&discussionId=d-c", { key: A.apiKey }), 200);
    const denied = await api.get("/analytics", { key: modKey });
    expectProblem(denied, 403, "missing_capability");
    expect(res_required(denied)).toContain("view_analytics");
  });

  it("a bad interval → 400 invalid_parameter", async () => {
    expectProblem(await api.get("/analytics?interval=week", { key: A.apiKey }), 400, "invalid_parameter");
  });
});

// ───────────────────────────── webhooks ─────────────────────────────

describe("webhooks", { timeout: 60_000 }, () => {
  let rx: Receiver;
  let hook: any;
  let secret = "";
  let kid = "";

  const verifySignature = (req: Received, withSecret: string, expectKid: string) => {
    const sig = String(req.headers["x-service-signature"] ?? "");
    const m = sig.match(/^t=(\d+),v1=([0-9a-f]{64}),kid=([0-9a-f]{8})$/);
    expect(m, `X-Service-Signature: ${sig}`).not.toBeNull();
    const ts = String(req.headers["x-service-timestamp"] ?? "");
    expect(ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Math.abs(Number(m![1]) - Math.floor(Date.parse(ts) / 1000))).toBeLessThanOrEqual(1);
    const expected = createHmac("sha256", withSecret).update(`${ts}.${req.raw}`).digest("hex");
    expect(m![2]).toBe(expected);
    expect(m![3]).toBe(expectKid);
  };

  it("POST /webhooks → 201 {webhookId,url,events,verified:false,state,secret,kid,createdAt}", async () => {
    rx = await startReceiver();
    receivers.push(rx);
    expectStatus(await api.put("/discussions/d-wh", { key: A.apiKey, json: { title: "Hooks" } }), 201);
    const res = await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["comment_created", "comment_deleted"] } });
    expectStatus(res, 201);
    const keys = Object.keys(res.body);
    for (const k of ["webhookId", "url", "events", "verified", "state", "secret", "kid", "createdAt"]) expect(keys).toContain(k);
    expect(typeof res.body.webhookId).toBe("string");
    expect(res.body.url).toBe(rx.url);
    expect(res.body.events).toEqual(["comment_created", "comment_deleted"]);
    expect(res.body.verified).toBe(false);
    expect(res.body.state).toBe("active");
    expect(typeof res.body.secret).toBe("string");
    expect(res.body.kid).toMatch(/^[0-9a-f]{8}$/);
    expect(res.body.createdAt).toMatch(ISO_MS);
    hook = res.body;
    secret = res.body.secret;
    kid = res.body.kid;
  });

  it("the handshake: POST {type, challenge, timestamp} with X-Service-Event: verification; echoing it verifies", async () => {
    await eventually(() => expect(rx.handshakes().length).toBeGreaterThanOrEqual(1), 15_000);
    const h = rx.handshakes()[0]!;
    expect(h.method).toBe("POST");
    expect(h.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(h.json).sort()).toEqual(["challenge", "timestamp", "type"]);
    expect(h.json.type).toBe("verification");
    expect(h.json.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(h.json.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    await eventually(
      async () => {
        const g = await api.get(`/webhooks/${hook.webhookId}`, { key: A.apiKey });
        expectStatus(g, 200);
        expect(g.body.verified).toBe(true);
        expect(g.body).not.toHaveProperty("secret");
      },
      15_000,
      200,
    );
  });

  it("a new comment arrives signed, with the contract's headers and the event envelope as body", async () => {
    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "to the hook" } });
    expectStatus(c, 201);
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    const d = rx.deliveries().find((x) => x.json?.data?.comment?.id === c.body.id)!;
    expect(d.method).toBe("POST");
    expect(d.path).toBe("/hook");
    expect(d.headers["content-type"]).toMatch(/^application\/json/);
    expect(d.headers["x-service-event"]).toBe("comment_created");
    expect(String(d.headers["x-service-delivery-id"])).toMatch(UUID);
    verifySignature(d, secret, kid);
    expectEnvelope(d.json, "comment_created", "d-wh", A.tenantId);
    expect(Object.keys(d.json.data)).toEqual(["comment"]);
    expectComment(d.json.data.comment);
    expect(d.json.data.comment).toEqual(c.body);
    expect(d.headers["x-service-idempotency-key"]).toBe(`comment_created:${d.json.id}`);
  });

  it("POST /webhooks/{id}/verify → 200 {verified}", async () => {
    const before = rx.handshakes().length;
    const res = await api.post(`/webhooks/${hook.webhookId}/verify`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(res.body.verified).toBe(true);
    expect(rx.handshakes().length).toBe(before + 1);
  });

  it("rotate-secret → 200 {secret, kid, previousKidValidUntil}; later deliveries are signed with the new secret and kid", async () => {
    const res = await api.post(`/webhooks/${hook.webhookId}/rotate-secret`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(Object.keys(res.body).sort()).toEqual(["kid", "previousKidValidUntil", "secret", "standardWebhooksSecret"]);
    expect(res.body.kid).toMatch(/^[0-9a-f]{8}$/);
    expect(res.body.kid).not.toBe(kid);
    expect(res.body.secret).not.toBe(secret);
    expect(res.body.previousKidValidUntil).toMatch(ISO_MS);
    expect(Math.abs(Date.parse(res.body.previousKidValidUntil) - (Date.now() + 24 * 3600_000))).toBeLessThan(5 * 60_000);
    secret = res.body.secret;
    kid = res.body.kid;

    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: bob, json: { body: "after rotation" } });
    expectStatus(c, 201);
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    verifySignature(
      rx.deliveries().find((x) => x.json?.data?.comment?.id === c.body.id)!,
      secret,
      kid,
    );
  });

  it("GET /webhooks/{id}/deliveries lists the attempts", async () => {
    const first = rx.deliveries()[0]!;
    const res = await api.get(`/webhooks/${hook.webhookId}/deliveries`, { key: A.apiKey });
    expectStatus(res, 200);
    expect(Array.isArray(res.body.items)).toBe(true);
    expect(res.body.items.length).toBeGreaterThanOrEqual(2);
    expect(res.text).toContain(String(first.headers["x-service-idempotency-key"]));
    expect(res.text).toContain(String(first.headers["x-service-delivery-id"]));
  });

  it("GET /webhooks, PATCH, DELETE → 200, 200, 204", async () => {
    const list = await api.get("/webhooks", { key: A.apiKey });
    expectStatus(list, 200);
    expect(list.body.items.map((w: any) => w.webhookId)).toContain(hook.webhookId);
    expect(list.text).not.toContain(secret);
    const patched = await api.patch(`/webhooks/${hook.webhookId}`, { key: A.apiKey, json: { description: "main hook" } });
    expectStatus(patched, 200);
    expect(patched.body.webhookId).toBe(hook.webhookId);
    expect(patched.body.verified).toBe(true); // no url change → stays verified
  });

  it("comment_deleted is delivered (subscribed); reaction_toggled is not (not subscribed)", async () => {
    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "short-lived" } });
    expectStatus(await api.post(`/comments/${c.body.id}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "like" } }), 200);
    expectStatus(await api.del(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada }), 204);
    await eventually(
      () => expect(rx.deliveries().some((d) => d.event === "comment_deleted" && d.json?.data?.comment?.id === c.body.id)).toBe(true),
      15_000,
    );
    const d = rx.deliveries().find((x) => x.event === "comment_deleted" && x.json?.data?.comment?.id === c.body.id)!;
    expectEnvelope(d.json, "comment_deleted", "d-wh", A.tenantId);
    expect(d.json.data.comment.status).toBe("deleted");
    expect(d.json.data.comment.body).toBe("");
    expect(d.headers["x-service-idempotency-key"]).toBe(`comment_deleted:${d.json.id}`);
    verifySignature(d, secret, kid);
    await sleep(500);
    expect(rx.deliveries().map((x) => x.event)).not.toContain("reaction_toggled");
  });

  it("redeliver {eventIds} queues the event again: same idempotency key, new delivery id", async () => {
    const first = rx.deliveries().find((x) => x.event === "comment_created")!;
    const before = rx
      .deliveries()
      .filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"]).length;
    const res = await api.post(`/webhooks/${hook.webhookId}/redeliver`, { key: A.apiKey, json: { eventIds: [first.json.id] } });
    expect(res.status, res.text).toBeGreaterThanOrEqual(200);
    expect(res.status, res.text).toBeLessThan(300);
    await eventually(() => {
      const same = rx.deliveries().filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"]);
      expect(same.length).toBe(before + 1);
    }, 15_000);
    const again = rx
      .deliveries()
      .filter((x) => x.headers["x-service-idempotency-key"] === first.headers["x-service-idempotency-key"])
      .at(-1)!;
    expect(again.headers["x-service-delivery-id"]).not.toBe(first.headers["x-service-delivery-id"]);
    expect(again.json).toEqual(first.json);
    verifySignature(again, secret, kid);
  });

  it("a failed attempt is retried after ~1 s (+ ≤50 % jitter): same idempotency key, new delivery id", async () => {
    const flaky = await startReceiver(true, (n) => (n === 1 ? 500 : 200));
    receivers.push(flaky);
    const w = await api.post("/webhooks", { key: A.apiKey, json: { url: flaky.url, events: ["comment_created"] } });
    expectStatus(w, 201);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    const c = await api.post("/discussions/d-wh-retry/comments", { key: A.apiKey, identity: ada, json: { body: "retry me" } });
    expectStatus(c, 201);
    const mine = () => flaky.deliveries().filter((d) => d.json?.data?.comment?.id === c.body.id);
    await eventually(() => expect(mine().length).toBe(2), 15_000);
    const [a1, a2] = mine() as [Received, Received];
    expect(a1.headers["x-service-idempotency-key"]).toBe(a2.headers["x-service-idempotency-key"]);
    expect(a1.headers["x-service-delivery-id"]).not.toBe(a2.headers["x-service-delivery-id"]);
    expect(a1.raw).toBe(a2.raw);
    const gap = a2.at - a1.at;
    expect(gap).toBeGreaterThanOrEqual(900);
    expect(gap).toBeLessThan(3_000);
    await sleep(1_000);
    expect(mine()).toHaveLength(2); // success ends the retries
    const log = await api.get(`/webhooks/${w.body.webhookId}/deliveries`, { key: A.apiKey });
    expectStatus(log, 200);
    expect(log.text).toContain(String(a1.headers["x-service-delivery-id"]));
    expect(log.text).toContain(String(a2.headers["x-service-delivery-id"]));
    expectStatus(await api.del(`/webhooks/${w.body.webhookId}`, { key: A.apiKey }), 204);
  });

  it("endpoint tunables: consecutive failures open the circuit, more disable it; the console (admin JWT) re-enables", async () => {
    const down = await startReceiver(true, () => 500);
    receivers.push(down);
    const w = await api.post("/webhooks", {
      key: A.apiKey,
      json: {
        url: down.url,
        events: ["comment_created"],
        delivery: { maxAttempts: 1, breakerThreshold: 2, breakerCooldownMs: 2_000, disableThreshold: 3 },
      },
    });
    expectStatus(w, 201);
    const id = w.body.webhookId;
    const get = async () => (await api.get(`/webhooks/${id}`, { key: A.apiKey })).body;
    await eventually(async () => expect((await get()).verified).toBe(true), 15_000, 200);
    const post = (body: string) => api.post("/discussions/d-wh-breaker/comments", { key: A.apiKey, identity: ada, json: { body } });

    await post("f1");
    await post("f2");
    await eventually(async () => expect((await get()).state).toBe("circuit_open"), 15_000, 100);
    const attemptsWhenOpened = down.deliveries().length;
    expect(attemptsWhenOpened).toBe(2);
    await post("while open");
    await sleep(500);
    expect(down.deliveries().length, "no attempt while the circuit is open").toBe(attemptsWhenOpened);
    // after the cooldown one trial goes out; it fails → third consecutive failure → disabled
    await eventually(async () => expect((await get()).state).toBe("disabled"), 20_000, 200);
    expect(down.deliveries().length).toBe(3);

    const refused = await api.post(`/admin/webhooks/${id}/enable`, { key: A.apiKey });
    expect([401, 403], refused.text).toContain(refused.status);
    const enabled = await api.post(`/admin/webhooks/${id}/enable`, { admin: A.adminToken });
    expectStatus(enabled, 200);
    expect(enabled.body.webhookId).toBe(id);
    expect(enabled.body.state).toBe("active");
    expectStatus(await api.del(`/webhooks/${id}`, { key: A.apiKey }), 204);
  });

  it("PATCH of url → unverified, and a new handshake goes to the new url", async () => {
    const w = await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["discussion_locked"] } });
    expectStatus(w, 201);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    const rx3 = await startReceiver();
    receivers.push(rx3);
    const p = await api.patch(`/webhooks/${w.body.webhookId}`, { key: A.apiKey, json: { url: rx3.url } });
    expectStatus(p, 200);
    expect(p.body.url).toBe(rx3.url);
    await eventually(() => expect(rx3.handshakes()).toHaveLength(1), 15_000);
    await eventually(
      async () => expect((await api.get(`/webhooks/${w.body.webhookId}`, { key: A.apiKey })).body.verified).toBe(true),
      15_000,
      200,
    );
    expectStatus(await api.del(`/webhooks/${w.body.webhookId}`, { key: A.apiKey }), 204);
  });

  it("an unverified endpoint gets no deliveries; /verify answers {verified: false}", async () => {
    const bad = await startReceiver(false);
    receivers.push(bad);
    const res = await api.post("/webhooks", { key: A.apiKey, json: { url: bad.url, events: ["*"] } });
    expectStatus(res, 201);
    expect(res.body.events).toEqual(["*"]);
    await eventually(() => expect(bad.handshakes().length).toBeGreaterThanOrEqual(1), 15_000);
    const v = await api.post(`/webhooks/${res.body.webhookId}/verify`, { key: A.apiKey });
    expectStatus(v, 200);
    expect(v.body.verified).toBe(false);
    if ("error" in v.body) expect(typeof v.body.error).toBe("string");

    const c = await api.post("/discussions/d-wh/comments", { key: A.apiKey, identity: ada, json: { body: "only to the verified one" } });
    await eventually(() => expect(rx.deliveries().some((d) => d.json?.data?.comment?.id === c.body.id)).toBe(true), 15_000);
    await sleep(1_000);
    expect(bad.deliveries()).toHaveLength(0);

    expectStatus(await api.del(`/webhooks/${res.body.webhookId}`, { key: A.apiKey }), 204);
    expectProblem(await api.get(`/webhooks/${res.body.webhookId}`, { key: A.apiKey }), 404, "not_found");
  });

  it("private, link-local, metadata and plain-http public URLs → 422; bad event names → 422", async () => {
    for (const url of [
      "https://10.0.0.5/x",
      "https://192.168.1.10/x",
      "https://169.254.169.254/latest/meta-data",
      "http://example.com/hook",
    ]) {
      const res = await api.post("/webhooks", { key: A.apiKey, json: { url, events: ["*"] } });
      expectProblem(res, 422, "validation_failed");
    }
    expectProblem(
      await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["notification_reply"] } }),
      422,
      "validation_failed",
    );
    expectProblem(await api.post("/webhooks", { key: A.apiKey, json: { url: rx.url, events: ["bogus"] } }), 422, "validation_failed");
  });

  it("webhook routes without manage_webhooks → 403 missing_capability; another tenant → 404", async () => {
    const res = await api.get("/webhooks", { key: modKey });
    expectProblem(res, 403, "missing_capability");
    expect(res_required(res)).toContain("manage_webhooks");
    expectProblem(await api.get(`/webhooks/${hook.webhookId}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post(`/webhooks/${hook.webhookId}/verify`, { key: B.apiKey }), 404, "not_found");
  });
});

// ───────────────────────────── stream ─────────────────────────────

describe("stream", { timeout: 60_000 }, () => {
  const open: Stream[] = [];
  const track = (s: Stream) => (open.push(s), s);
  afterAll(() => open.forEach((s) => s.close()));

  let ticketStream: Stream;
  let seqs: number[] = [];

  const ticket = async (discussionId: string, identityJwt?: string, key = A.apiKey) => {
    const res = await api.post("/stream/ticket", { key, identity: identityJwt, json: { discussionId } });
    expectStatus(res, 201);
    return res;
  };

  it("POST /stream/ticket → 201 {ticket, expiresAt}", async () => {
    expectStatus(await api.put("/discussions/d-s", { key: A.apiKey, json: { title: "Live" } }), 201);
    const res = await ticket("d-s");
    expect(Object.keys(res.body).sort()).toEqual(["expiresAt", "ticket"]);
    expect(typeof res.body.ticket).toBe("string");
    expect(res.body.expiresAt).toMatch(ISO_MS);
    // 60 s by default (checked by the integration tests); this server runs STREAM_TICKET_TTL_SECONDS=1
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
  });

  it("GET /stream/{id}?ticket= → text/event-stream; first frame `connected`; the ticket is single-use", async () => {
    const t = (await ticket("d-s")).body.ticket;
    ticketStream = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`));
    expect(ticketStream.res.status).toBe(200);
    expect(ticketStream.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await ticketStream.waitFor((f) => f.length >= 1);
    const first = ticketStream.frames[0]!;
    expect(first.event).toBe("connected");
    expect(Object.keys(first.data).sort()).toEqual(["discussionId", "heartbeatSeconds", "replayed", "truncated"]);
    expect(first.data.discussionId).toBe("d-s");
    expect(first.data.replayed).toBe(0);
    expect(first.data.truncated).toBe(false);
    expect(typeof first.data.heartbeatSeconds).toBe("number");
    // without Last-Event-ID its id is the discussion's latest seq (asserted with the first event below)
    expect(first.id).toMatch(/^\d+$/);

    const second = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`);
    second.close();
    expect(second.res.status).toBe(401);
  });

  it("a posted comment arrives framed id: <seq> / event: comment_created / data: <envelope>", async () => {
    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "live!" } });
    expectStatus(c, 201);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "comment_created"));
    const f = ticketStream.frames.find((x) => x.event === "comment_created")!;
    expectEnvelope(f.data, "comment_created", "d-s", A.tenantId);
    expect(f.id).toBe(String(f.data.seq));
    expect(f.data.data.comment).toEqual(c.body);
    // the first event since the stream opened: `connected` carried the latest seq before it
    expect(ticketStream.events()[0]).toBe(f);
    expect(f.data.seq).toBe(Number(ticketStream.frames[0]!.id) + 1);
    seqs.push(f.data.seq);
  });

  it("reactions and discussion changes are framed too (reaction_toggled, discussion_locked/unlocked)", async () => {
    const cid = ticketStream.frames.find((x) => x.event === "comment_created")!.data.data.comment.id;
    expectStatus(await api.post(`/comments/${cid}/reactions`, { key: A.apiKey, identity: bob, json: { kind: "wow" } }), 200);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "reaction_toggled"));
    const r = ticketStream.frames.find((x) => x.event === "reaction_toggled")!;
    expectEnvelope(r.data, "reaction_toggled", "d-s", A.tenantId);
    expect(Object.keys(r.data.data.reaction).sort()).toEqual(["active", "commentId", "counts", "kind", "readerId"]);
    expect(r.data.data.reaction).toMatchObject({ commentId: cid, kind: "wow", active: true });
    expect(r.data.data.reaction.counts.wow).toBe(1);

    expectStatus(await api.post("/discussions/d-s/lock", { key: modKey }), 200);
    expectStatus(await api.post("/discussions/d-s/unlock", { key: modKey }), 200);
    await ticketStream.waitFor((f) => f.some((x) => x.event === "discussion_unlocked"));
    const l = ticketStream.frames.find((x) => x.event === "discussion_locked")!;
    expectEnvelope(l.data, "discussion_locked", "d-s", A.tenantId);
    expect(l.data.data.discussion.id).toBe("d-s");
    expect(l.data.data.discussion.state).toBe("locked");

    const ev = ticketStream.events();
    const ids = ev.map((x) => Number(x.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    seqs = ids;
  });

  it("edits, pins and deletions are framed as comment_edited / comment_pinned / comment_unpinned / comment_deleted", async () => {
    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "to change" } });
    expectStatus(c, 201);
    expectStatus(await api.patch(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada, json: { body: "changed" } }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/pin`, { key: modKey }), 200);
    expectStatus(await api.post(`/comments/${c.body.id}/unpin`, { key: modKey }), 200);
    expectStatus(await api.del(`/comments/${c.body.id}`, { key: A.apiKey, identity: ada }), 204);
    const names = ["comment_created", "comment_edited", "comment_pinned", "comment_unpinned", "comment_deleted"];
    const about = () => ticketStream.events().filter((f) => f.data?.data?.comment?.id === c.body.id);
    await ticketStream.waitFor(() => about().length >= names.length);
    expect(about().map((f) => f.event)).toEqual(names);
    for (const f of about()) {
      expectEnvelope(f.data, f.event, "d-s", A.tenantId);
      expect(f.id).toBe(String(f.data.seq));
      expectComment(f.data.data.comment);
    }
    expect(about()[1]!.data.data.comment.body).toBe("changed");
    expect(about()[2]!.data.data.comment.pinned).toBe(true);
    expect(about()[4]!.data.data.comment.status).toBe("deleted");
    expect(about()[4]!.data.data.comment.body).toBe("");
  });

  it("?token=<apiKey> works (deprecated) with Deprecation: true and a Sunset date", async () => {
    const s = track(await openStream(`/stream/d-s?token=${A.apiKey}`));
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("deprecation")).toBe("true");
    const sunset = s.res.headers.get("sunset");
    expect(sunset).toBeTruthy();
    expect(Number.isNaN(Date.parse(sunset!))).toBe(false);
    await s.waitFor((f) => f[0]?.event === "connected");
    s.close();
  });

  it("X-API-Key works; no credentials / bogus ticket → 401; a ticket for another discussion is 401 whether it exists or not", async () => {
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("deprecation")).toBeNull();
    s.close();
    const none = await openStream("/stream/d-s");
    expect(none.res.status).toBe(401);
    expect(none.res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const bogus = await openStream("/stream/d-s?ticket=not-a-ticket");
    expect(bogus.res.status).toBe(401);
    expectStatus(await api.put("/discussions/d-s2", { key: A.apiKey, json: { title: "Other" } }), 201);
    const t = (await ticket("d-s")).body.ticket;
    const wrong = await api.get(`/stream/d-s2?ticket=${encodeURIComponent(t)}`);
    expectProblem(wrong, 401, "unauthenticated");
    // credentials before resources: a missing discussion answers the same, so a ticket tells nobody which exist
    const missing = await api.get(`/stream/d-no-such-discussion?ticket=${encodeURIComponent(t)}`);
    expectProblem(missing, 401, "unauthenticated");
    const { requestId: _w, ...wrongProblem } = wrong.body;
    const { requestId: _m, ...missingProblem } = missing.body;
    expect(missingProblem).toEqual(wrongProblem);
  });

  it("Last-Event-ID replays the events after that seq, then goes live", async () => {
    seqs = ticketStream.events().map((f) => Number(f.id)); // everything on d-s so far
    expect(seqs.length).toBeGreaterThanOrEqual(3);
    const after = seqs[0]!;
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey, "last-event-id": String(after) }));
    expect(s.res.status).toBe(200);
    const expected = seqs.filter((x) => x > after);
    await s.waitFor((f) => f.filter((x) => x.event !== "connected").length >= expected.length);
    expect(s.frames[0]!.event).toBe("connected");
    // `connected` carries the position the stream continues after: the given id, so ids never go backwards
    expect(s.frames[0]!.id).toBe(String(after));
    expect(s.frames[0]!.data.replayed).toBe(expected.length);
    expect(s.frames[0]!.data.truncated).toBe(false);
    expect(s.events().map((x) => Number(x.id))).toEqual(expected);

    const c = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: bob, json: { body: "after replay" } });
    await s.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.id === c.body.id));
    s.close();
  });

  it("notification_reply goes only to the parent author's stream; pending comments never reach reader streams", async () => {
    const parent = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "reply to me" } });
    expectStatus(parent, 201);
    const adaTicket = (await ticket("d-s", ada)).body.ticket;
    const adaStream = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(adaTicket)}`));
    const anon = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    await adaStream.waitFor((f) => f[0]?.event === "connected");
    await anon.waitFor((f) => f[0]?.event === "connected");

    const child = await api.post("/discussions/d-s/comments", {
      key: A.apiKey,
      identity: bob,
      json: { body: "hi Ada", parentId: parent.body.id },
    });
    expectStatus(child, 201);
    await adaStream.waitFor((f) => f.some((x) => x.event === "notification_reply"));
    const n = adaStream.frames.find((x) => x.event === "notification_reply")!;
    expectEnvelope(n.data, "notification_reply", "d-s", A.tenantId);
    expect(Object.keys(n.data.data.notification).sort()).toEqual(["commentId", "discussionId", "parentId", "readerId"]);
    expect(n.data.data.notification).toMatchObject({ commentId: child.body.id, parentId: parent.body.id, discussionId: "d-s" });
    expect(n.data.data.notification.readerId).toBe(parent.body.author.id);

    await anon.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.id === child.body.id));
    await sleep(1_000);
    expect(anon.frames.some((x) => x.event === "notification_reply")).toBe(false);

    // pre-moderation: the pending comment does not appear on a reader stream (a browser's ticket stream)
    // (a) the README's flow: the backend mints the browser's ticket with its key (here: the bootstrap key)
    const readerTicket = (await ticket("d-s", bob)).body.ticket;
    const reader = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(readerTicket)}`));
    await reader.waitFor((f) => f[0]?.event === "connected");
    // (b) a ticket minted with a key without capabilities
    const plainTicket = (await ticket("d-s", bob, plainKey)).body.ticket;
    const plainReader = track(await openStream(`/stream/d-s?ticket=${encodeURIComponent(plainTicket)}`));
    await plainReader.waitFor((f) => f[0]?.event === "connected");
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { moderation: "pre" } }), 200);
    try {
      const pending = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: bob, json: { body: "secret" } });
      expectStatus(pending, 201);
      expect(pending.body.status).toBe("pending");
      const pendingByOther = await api.post("/discussions/d-s/comments", { key: A.apiKey, identity: ada, json: { body: "also pending" } });
      expectStatus(pendingByOther, 201);
      expectStatus(await api.post(`/comments/${pendingByOther.body.id}/reject`, { key: modKey }), 200);
      expectStatus(await api.post("/discussions/d-s/lock", { key: modKey }), 200); // a marker event after them
      await anon.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      await reader.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      await plainReader.waitFor((f) => f.at(-1)?.event === "discussion_locked");
      // the API-key stream: no comment_created for a pending comment
      expect(anon.frames.some((x) => x.event === "comment_created" && x.data?.data?.comment?.id === pending.body.id)).toBe(false);
      // a reader's stream: nothing at all about another reader's pending / rejected comment
      const leakedPlain = plainReader.frames.filter((x) => JSON.stringify(x.data).includes(pendingByOther.body.id));
      expect(
        leakedPlain.map((x) => [x.event, x.data?.data?.comment?.status]),
        "pending/rejected on a reader stream (plain-key ticket)",
      ).toEqual([]);
      const leaked = reader.frames.filter((x) => JSON.stringify(x.data).includes(pendingByOther.body.id));
      expect(
        leaked.map((x) => [x.event, x.data?.data?.comment?.status]),
        "pending/rejected on a reader stream",
      ).toEqual([]);
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { moderation: "post" } });
      await api.post("/discussions/d-s/unlock", { key: modKey });
    }
  });

  it("an id older than the replay window replays what is kept and sets truncated: true", async () => {
    expectStatus(await api.put("/discussions/d-r", { key: A.apiKey, json: { title: "Replay" } }), 201);
    const live = track(await openStream("/stream/d-r", { "x-api-key": A.apiKey }));
    await live.waitFor((f) => f[0]?.event === "connected");
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { replay: { maxEvents: 2 } } }), 200);
    // the contract does not say how fast a settings change reaches streams; the service documents
    // (docs/streams.md) that the instance that took it applies it to the next stream at once
    try {
      for (const body of ["r1", "r2", "r3", "r4"]) {
        expectStatus(await api.post("/discussions/d-r/comments", { key: A.apiKey, identity: ada, json: { body } }), 201);
      }
      await live.waitFor((f) => f.filter((x) => x.event === "comment_created").length === 4);
      const seq = live.events().map((f) => Number(f.id));
      const s = track(await openStream("/stream/d-r", { "x-api-key": A.apiKey, "last-event-id": String(seq[0]) }));
      await s.waitFor((f) => f[0]?.event === "connected");
      await sleep(300);
      const seen = JSON.stringify({ seq, connected: s.frames[0]!.data, replayedIds: s.events().map((f) => f.id) });
      expect(s.frames[0]!.data.truncated, seen).toBe(true);
      expect(s.frames[0]!.data.replayed).toBe(2);
      expect(s.events().map((f) => Number(f.id))).toEqual(seq.slice(2));
      // truncated: `connected` carries the seq just before the oldest kept event
      expect(s.frames[0]!.id, seen).toBe(String(seq[2]! - 1));
      s.close();
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { replay: { maxEvents: 1000 } } });
    }
  });

  it("a `:` comment heartbeat every heartbeatSeconds (15 s)", { timeout: 40_000 }, async () => {
    const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
    await s.waitFor((f) => f[0]?.event === "connected");
    expect(s.frames[0]!.data.heartbeatSeconds).toBe(15);
    await eventually(() => expect(s.comments.length).toBeGreaterThanOrEqual(1), 18_000, 200);
    s.close();
  });

  it("after the maximum connection time (setting) the server sends `connection-timeout` and closes", { timeout: 40_000 }, async () => {
    const before = await api.get("/settings", { key: A.apiKey });
    // the contract names the setting but not its field; GET /settings shows it as stream.maxConnectionSeconds
    expect(before.body.stream?.maxConnectionSeconds, JSON.stringify(before.body)).toBe(1800);
    expectStatus(await api.patch("/settings", { key: A.apiKey, json: { stream: { maxConnectionSeconds: 2 } } }), 200);
    try {
      const s = track(await openStream("/stream/d-s", { "x-api-key": A.apiKey }));
      expect(s.res.status).toBe(200);
      await s.waitFor((f) => f.some((x) => x.event === "connection-timeout"), 10_000);
      await eventually(() => expect(s.ended).toBe(true), 5_000);
      expect(s.frames[0]!.event).toBe("connected");
      expect(s.frames.at(-1)!.event).toBe("connection-timeout");
    } finally {
      await api.patch("/settings", { key: A.apiKey, json: { stream: { maxConnectionSeconds: 1800 } } });
    }
  });

  it("a ticket expires after its TTL (60 s by default; 1 s here via STREAM_TICKET_TTL_SECONDS)", async () => {
    const minted = await ticket("d-s");
    const t = minted.body.ticket;
    expect(Date.parse(minted.body.expiresAt) - Date.now()).toBeLessThanOrEqual(1_000);
    await sleep(Math.max(0, Date.parse(minted.body.expiresAt) - Date.now()) + 100);
    const s = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t)}`);
    s.close();
    expect(s.res.status).toBe(401);
  });

  it("another tenant cannot stream this tenant's discussion → 404", async () => {
    const s = await openStream("/stream/d-s", { "x-api-key": B.apiKey });
    s.close();
    expect(s.res.status).toBe(404);
    const t = await api.post("/stream/ticket", { key: B.apiKey, json: { discussionId: "d-s" } });
    if (t.status === 201) {
      const viaTicket = await openStream(`/stream/d-s?ticket=${encodeURIComponent(t.body.ticket)}`);
      viaTicket.close();
      expect(viaTicket.res.status).toBe(404);
    } else expectProblem(t, 404, "not_found");
  });
});

// ───────────────────────────── dependency down ─────────────────────────────

describe("a dependency down (Redis unreachable)", { timeout: 90_000 }, () => {
  let child: ChildProcess | undefined;
  let base = "";
  let log = "";
  afterAll(async () => {
    await terminate(child);
  });

  it("/healthz 200, /readyz 503, requests answer (503 unavailable or success) without hanging", async () => {
    const port = await freePort();
    const deadRedis = await freePort(); // nothing listens there
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["dist/main.js"], {
      cwd: process.cwd(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: inject("databaseUrl"),
        REDIS_URL: `redis://127.0.0.1:${deadRedis}`,
        ADMIN_JWT_SECRET,
        RUN_WEBHOOK_WORKER: "0",
        LOG_LEVEL: "silent",
      },
    });
    child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
    await eventually(
      async () => {
        if (child?.exitCode !== null) throw new Error(`server exited: ${log}`);
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
      },
      60_000,
      200,
    );
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    expect(ready.status).toBe(503);
    for (const [path, headers] of [
      ["/api/v1/discussions", { "x-api-key": A.apiKey }],
      ["/api/v1/stream/d-main", { "x-api-key": A.apiKey }],
    ] as const) {
      const started = Date.now();
      const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(15_000) });
      const sse = res.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
      const text = sse ? "" : await res.text();
      expect(Date.now() - started, `${path} answered in time`).toBeLessThan(15_000);
      if (res.status !== 200) {
        expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(503);
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(text).code).toBe("unavailable");
      } else if (sse) await res.body?.cancel(); // an open stream; other bodies were read above
    }
  });
});

// ───────────────────────────── GraphQL ─────────────────────────────

describe("GraphQL", () => {
  const gql = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${BASE}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify({ query }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it("a query with X-API-Key works", async () => {
    const r = await gql('{ discussion(id: "d-main") { id state } }', { "x-api-key": A.apiKey });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.discussion).toEqual({ id: "d-main", state: expect.stringMatching(/^open$/i) });
  });

  it("mutations follow the same rules: identity, capability escalation, console-only routes", async () => {
    const post = (headers: Record<string, string>) =>
      gql('mutation { postComment(discussionId: "d-gql", input: { body: "via GraphQL" }) { id body status author { name } } }', headers);
    const anon = await post({ "x-api-key": A.apiKey });
    expect(anon.body.errors?.[0]?.extensions?.code).toBe("invalid_identity");
    const ok = await post({ "x-api-key": A.apiKey, "x-service-identity": ada });
    expect(ok.body.errors, JSON.stringify(ok.body)).toBeUndefined();
    expect(ok.body.data.postComment).toMatchObject({ body: "via GraphQL", author: { name: "Ada" } });
    const esc = await gql('mutation { createApiKey(input: { label: "x", capabilities: ["moderate_content"] }) { key } }', {
      "x-api-key": mgrKey,
    });
    expect(esc.body.errors?.[0]?.extensions?.code).toBe("capability_escalation");
    const lock = await gql('mutation { lockDiscussion(id: "d-gql") { state } }', { "x-api-key": plainKey });
    expect(lock.body.errors?.[0]?.extensions?.code).toBe("missing_capability");
    const enable = await gql('mutation { enableWebhook(webhookId: "whatever") { state } }', { "x-api-key": A.apiKey });
    expect(enable.body.errors?.length, JSON.stringify(enable.body)).toBeGreaterThan(0);
    expect(["unauthenticated", "missing_capability"]).toContain(enable.body.errors[0].extensions?.code);
  });

  it("subscriptions over SSE (graphql-sse, distinct connections on /graphql) carry the same events", async () => {
    const query =
      'subscription { discussionEvents(discussionId: "d-gql") { __typename ... on StreamConnected { replayed truncated } ... on StreamEvent { type seq data } } }';
    const s = await openStream(
      "/graphql",
      { "x-api-key": A.apiKey, "content-type": "application/json" },
      { method: "POST", body: JSON.stringify({ query }) },
    );
    try {
      expect(s.res.status).toBe(200);
      expect(s.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      await s.waitFor((f) => f.some((x) => x.event === "next"));
      expect(s.frames.find((x) => x.event === "next")!.data.data.discussionEvents.__typename).toBe("StreamConnected");
      const c = await api.post("/discussions/d-gql/comments", { key: A.apiKey, identity: bob, json: { body: "to the subscription" } });
      await s.waitFor((f) => f.some((x) => x.event === "next" && x.data?.data?.discussionEvents?.type === "comment_created"));
      const ev = s.frames.find((x) => x.event === "next" && x.data?.data?.discussionEvents?.type === "comment_created")!.data.data
        .discussionEvents;
      expect(ev.data.comment.id).toBe(c.body.id);
    } finally {
      s.close();
    }
  });

  it("errors carry extensions.code", async () => {
    const nf = await gql('{ discussion(id: "no-such-discussion") { id } }', { "x-api-key": A.apiKey });
    expect(nf.body.errors?.[0]?.extensions?.code).toBe("not_found");
    const cap = await gql("{ settings { moderation } }", { "x-api-key": plainKey });
    expect(cap.body.errors?.[0]?.extensions?.code).toBe("missing_capability");
    const anon = await gql('{ discussion(id: "d-main") { id } }');
    expect(anon.body.errors?.[0]?.extensions?.code).toBe("unauthenticated");
  });
});

// ───────────────────────────── errors ─────────────────────────────

describe("errors", { timeout: 60_000 }, () => {
  it("malformed JSON → 400 malformed_json (problem+json with type/title/status/code/detail)", async () => {
    const res = await api.put("/discussions/d-main", { key: A.apiKey, raw: '{"title": "oops"' });
    expectProblem(res, 400, "malformed_json");
  });

  it("a body over 64 KiB → 413 payload_too_large", async () => {
    const res = await api.post("/discussions/d-main/comments", { key: A.apiKey, identity: ada, json: { body: "x".repeat(70 * 1024) } });
    expectProblem(res, 413, "payload_too_large");
  });

  it("a write with text/plain → 415 unsupported_media_type", async () => {
    const res = await api.post("/discussions/d-main/comments", {
      key: A.apiKey,
      identity: ada,
      raw: JSON.stringify({ body: "plain" }),
      contentType: "text/plain",
    });
    expectProblem(res, 415, "unsupported_media_type");
  });

  it("a write with a body and no Content-Type → 415 unsupported_media_type", async () => {
    const res = await fetch(`${BASE}/api/v1/discussions/d-main`, {
      method: "PUT",
      headers: { "x-api-key": A.apiKey },
      body: new Blob([JSON.stringify({ title: "no type" })]), // a Blob without a type sends no Content-Type
    });
    const text = await res.text();
    expect(res.status, text).toBe(415);
    expect(JSON.parse(text).code).toBe("unsupported_media_type");
  });

  it("an unknown route → 404 not_found problem; JSON with a charset parameter is accepted", async () => {
    expectProblem(await api.get("/no-such-route", { key: A.apiKey }), 404, "not_found");
    const res = await api.put("/discussions/d-charset", {
      key: A.apiKey,
      json: { title: "utf-8 ✓" },
      contentType: "application/json; charset=utf-8",
    });
    expectStatus(res, 201);
    expect(res.body.title).toBe("utf-8 ✓");
  });

  it("unknown ids → 404 not_found", async () => {
    expectProblem(await api.get("/comments/cmt_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.get("/discussions/never-created", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.get("/webhooks/wh_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(await api.del("/keys/key_does_not_exist", { key: A.apiKey }), 404, "not_found");
    expectProblem(
      await api.post("/comments/cmt_does_not_exist/reactions", { key: A.apiKey, identity: ada, json: { kind: "like" } }),
      404,
      "not_found",
    );
  });

  it("another tenant's ids → 404 (never 403)", async () => {
    const mine = await api.post("/discussions/d-main/comments", { key: A.apiKey, identity: ada, json: { body: "tenant A only" } });
    expectStatus(mine, 201);
    const keyList = await api.get("/keys?limit=100", { key: A.apiKey });
    const aKeyId = keyList.body.items.find((k: any) => modKey.startsWith(k.prefix)).id;
    const bId = identity(B.identitySecret, "b-2", "Ben");

    expectProblem(await api.get("/discussions/d-main", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.get("/discussions/d-main/comments", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post("/discussions/d-main/lock", { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.get(`/comments/${mine.body.id}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.patch(`/comments/${mine.body.id}`, { key: B.apiKey, identity: bId, json: { body: "x" } }), 404, "not_found");
    expectProblem(await api.del(`/comments/${mine.body.id}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.post(`/comments/${mine.body.id}/approve`, { key: B.apiKey }), 404, "not_found");
    expectProblem(
      await api.post(`/comments/${mine.body.id}/reactions`, { key: B.apiKey, identity: bId, json: { kind: "like" } }),
      404,
      "not_found",
    );
    expectProblem(await api.del(`/keys/${aKeyId}`, { key: B.apiKey }), 404, "not_found");
    expectProblem(await api.del(`/admin/keys/${aKeyId}`, { admin: B.adminToken }), 404, "not_found");

    // and nothing changed on tenant A
    expect((await api.get("/discussions/d-main", { key: A.apiKey })).body.state).toBe("open");
    expect((await api.get(`/comments/${mine.body.id}`, { key: A.apiKey })).body.status).toBe("approved");
    expectStatus(await api.get("/discussions", { key: modKey }), 200);
  });

  it("active-key budget (50 per tenant) → 409 active_key_limit", async () => {
    const C = await createTenant("Budget");
    let created = 1; // the bootstrap key
    let last: Res | undefined;
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      last = await api.post("/admin/keys", { admin: C.adminToken, json: { label: `k${i}`, capabilities: [] } });
      if (last.status !== 201) break;
      ids.push(last.body.id);
      created++;
    }
    expectProblem(last!, 409, "active_key_limit");
    expect(created).toBe(50);
    const page = await api.get("/keys", { admin: C.adminToken });
    expectCollection(page);
    expect(page.body.items, "default limit 20").toHaveLength(20);
    expect(typeof page.body.nextCursor).toBe("string");
    expectStatus(await api.del(`/admin/keys/${ids[0]}`, { admin: C.adminToken }), 204);
    const soon = new Date(Date.now() + 1_000).toISOString();
    expectStatus(
      await api.post("/admin/keys", { admin: C.adminToken, json: { label: "expiring", capabilities: [], expiresAt: soon } }),
      201,
    );
    expectProblem(
      await api.post("/admin/keys", { admin: C.adminToken, json: { label: "full", capabilities: [] } }),
      409,
      "active_key_limit",
    );
    // an expired key stops counting against the budget
    await eventually(
      async () =>
        expectStatus(await api.post("/admin/keys", { admin: C.adminToken, json: { label: "after expiry", capabilities: [] } }), 201),
      5_000,
      100,
    );

    // 429 rate_limited with Retry-After and RateLimit-* headers (field name from the README)
    expectStatus(await api.patch("/settings", { key: C.apiKey, json: { rateLimits: { requestsPerMinute: 5 } } }), 200);
    let limited: Res | undefined;
    for (let i = 0; i < 20; i++) {
      const r = await api.get("/discussions", { key: C.apiKey });
      if (r.status === 429) {
        limited = r;
        break;
      }
    }
    expect(limited, "a 429 after the budget").toBeDefined();
    expectProblem(limited!, 429, "rate_limited");
    expect(limited!.headers.get("retry-after")).toMatch(/^\d+$/);
    expect([...limited!.headers.keys()].some((h) => h.toLowerCase().startsWith("ratelimit"))).toBe(true);
  });
});
