// Black-box contract suite, the CLI bootstraps a tenant and mints admin tokens; the process answers
// health checks; authentication by API key and admin JWT.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { describe, expect, it } from "vitest";
import { ADMIN_JWT_SECRET, BASE, api, cli, contractRun, expectProblem, expectStatus, jwt, now } from "../support/contract-client.js";

const { A } = await contractRun();

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
