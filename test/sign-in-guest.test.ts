// Hosted sign-in, its core (contract section 20): settings `signIn` (providers' client secrets
// write-only), reader sessions (`rs_…` in X-Service-Identity wherever an assertion goes; GET|PATCH
// /api/v1/me, POST /api/v1/me/sign-out refusing the token at once; expiry after sessionDays; a ban
// refusing the sessions at once), and guests behind an ALTCHA proof of work solved here as the
// widget would (altcha-lib's solver): a replayed, expired, forged or honeypotted attempt is refused
// and writes nothing; a flood from one address meets 429. Guests' comments are held by default.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solveChallenge } from "altcha-lib/v1";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { client } from "./support/client.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";

const clock = manualClock(new Date());
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;

beforeAll(async () => {
  own = await isolatedDatabase("signinguest");
  server = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0" }, { clock });
});
afterAll(async () => {
  await server?.stop();
  await own?.drop();
});

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const readerCount = async (tenantId: string) =>
  Number((await sql<{ n: string }>("SELECT count(*) AS n FROM readers WHERE tenant_id = $1", [tenantId]))[0]!.n);

async function guestTenant(signIn: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  const r = await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest"], ...signIn } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return t;
}

// the hosted sign-in takes no key: the tenant is in the path
const auth = (_t: TestTenant) => client(server.url);

/** A solved challenge of the tenant, as the ALTCHA widget sends it: base64 of the payload's JSON. */
async function solved(t: TestTenant): Promise<string> {
  const r = await auth(t).get(`/auth/v1/${t.tenantId}/challenge`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const c = r.body as { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
  const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  expect(solution).not.toBeNull();
  return Buffer.from(
    JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: solution!.number, salt: c.salt, signature: c.signature }),
  ).toString("base64");
}

async function signInGuest(t: TestTenant, name = "Ada") {
  const r = await auth(t).post(`/auth/v1/${t.tenantId}/guest`, { name, altcha: await solved(t) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { token: string; reader: { id: string; name: string; avatarUrl: string | null } };
}

describe("settings signIn", () => {
  it("defaults to off, refuses unknown methods, and keeps a provider's client secret write-only", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.get("/api/v1/settings")).body.signIn).toEqual({
      methods: [],
      oidc: [],
      guest: { requireEmail: false, moderation: "pre" },
      sessionDays: 30,
    });
    const bad = await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest", "password"] } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toMatch(/^signIn\.methods/);
    // GitHub's shape on loopback (ALLOW_HTTP_WEBHOOKS=1 in tests): the SSRF guard resolves each
    // endpoint's host, and a test must not need the internet's DNS
    const provider = {
      id: "gh",
      label: "GitHub",
      authorizationEndpoint: "http://127.0.0.1:9/login/oauth/authorize",
      tokenEndpoint: "http://127.0.0.1:9/login/oauth/access_token",
      userinfoEndpoint: "http://127.0.0.1:9/user",
      clientId: "abc",
    };
    const noSecret = await t.api.patch("/api/v1/settings", { signIn: { oidc: [provider] } });
    expect(noSecret.status).toBe(422);
    expect(noSecret.body.errors).toEqual([{ path: "signIn.oidc.0.clientSecret", message: "is required for a new provider" }]);
    const incomplete = await t.api.patch("/api/v1/settings", {
      signIn: { oidc: [{ id: "x", label: "X", clientId: "c", clientSecret: "s" }] },
    });
    expect(incomplete.status).toBe(422);
    const set = await t.api.patch("/api/v1/settings", {
      signIn: { methods: ["oidc"], oidc: [{ ...provider, clientSecret: "s3cret" }], sessionDays: 7 },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.signIn.oidc).toEqual([provider]);
    expect(JSON.stringify(set.body)).not.toContain("s3cret");
    // patched again without the secret: the stored one is kept
    const again = await t.api.patch("/api/v1/settings", { signIn: { oidc: [{ ...provider, label: "GitHub.com" }] } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const [row] = await sql<{ enc: string }>(
      "SELECT settings -> 'signIn' -> 'oidc' -> 0 ->> 'clientSecretEnc' AS enc FROM tenants WHERE id = $1",
      [t.tenantId],
    );
    expect(row!.enc).toBeTruthy();
    expect(server.app.runtime.services.secretBox.open(row!.enc)).toBe("s3cret");
    const audit = await t.admin.get("/api/v1/audit");
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).not.toContain("s3cret");
  });
});

describe("guests and reader sessions", () => {
  it("answers a challenge of the contract's shape only while guests are enabled", async () => {
    const off = await createTestTenant(server);
    const refused = await auth(off).get(`/auth/v1/${off.tenantId}/challenge`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("sign_in_method_disabled");
    expect((await auth(off).get(`/auth/v1/no-such-tenant/challenge`)).status).toBe(404);
    const t = await guestTenant();
    const r = await auth(t).get(`/auth/v1/${t.tenantId}/challenge`);
    expect(Object.keys(r.body).sort()).toEqual(["algorithm", "challenge", "maxnumber", "salt", "signature"]);
    expect(r.body.algorithm).toBe("SHA-256");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("signs a guest in; the session is a reader wherever an assertion is; rename, hold by default, sign out", async () => {
    const t = await guestTenant();
    const { token, reader } = await signInGuest(t, "  Ada  ");
    expect(token).toMatch(/^rs_[A-Za-z0-9_-]{43,}$/);
    expect(reader).toEqual({ id: expect.stringMatching(/^guest:[A-Za-z0-9_-]{22}$/), name: "Ada", avatarUrl: null });
    const [stored] = await sql<{ n: string }>("SELECT count(*) AS n FROM reader_sessions WHERE token_hash = $1 OR token_hash LIKE 'rs_%'", [
      token,
    ]);
    expect(stored!.n).toBe("0"); // only a hash is stored
    const me = t.as({ key: t.apiKey, identity: token });
    expect((await me.get("/api/v1/me")).body).toEqual({ id: reader.id, name: "Ada", avatarUrl: null, method: "guest" });
    // a guest's comment is held (signIn.guest.moderation "pre")
    const posted = await me.post("/api/v1/discussions/g1/comments", { body: "Hello as a guest" });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    expect(posted.body.status).toBe("pending");
    expect(posted.body.author).toMatchObject({ id: reader.id, name: "Ada" });
    // renamed: the next comment carries the new name
    expect((await me.patch("/api/v1/me", { name: "Ada L." })).body).toEqual({
      id: reader.id,
      name: "Ada L.",
      avatarUrl: null,
      method: "guest",
    });
    expect((await me.patch("/api/v1/me", { name: "" })).status).toBe(422);
    expect((await me.patch("/api/v1/me", { nick: "x" })).status).toBe(422);
    expect((await me.post("/api/v1/discussions/g1/comments", { body: "Again" })).body.author.name).toBe("Ada L.");
    // GraphQL sees the same reader
    const gql = await me.post("/graphql", { query: "{ me { id name method } }" });
    expect(gql.body.data.me).toEqual({ id: reader.id, name: "Ada L.", method: "guest" });
    // sign out: refused at once
    expect((await me.post("/api/v1/me/sign-out")).status).toBe(204);
    const after = await me.get("/api/v1/me");
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("invalid_identity");
  });

  it("publishes a guest's comment when signIn.guest.moderation is post", async () => {
    const t = await guestTenant({ guest: { moderation: "post" } });
    const { token } = await signInGuest(t);
    const posted = await t.as({ key: t.apiKey, identity: token }).post("/api/v1/discussions/g2/comments", { body: "Published" });
    expect(posted.body.status).toBe("approved");
  });

  it("answers how an asserted reader signed in, and leaves their name and sign-out to the site", async () => {
    const t = await createTestTenant(server);
    const r = await t.reader("sam", { name: "Sam" });
    expect((await r.get("/api/v1/me")).body).toEqual({ id: "sam", name: "Sam", avatarUrl: null, method: "assertion" });
    const rename = await r.patch("/api/v1/me", { name: "Other" });
    expect(rename.status).toBe(409);
    expect(rename.body.code).toBe("not_a_session");
    expect((await r.post("/api/v1/me/sign-out")).status).toBe(409);
    expect((await t.api.get("/api/v1/me")).status).toBe(401);
  });

  it("refuses a session once it expires, and a banned reader's sessions at once", async () => {
    const t = await guestTenant({ sessionDays: 1 });
    const a = await signInGuest(t, "Expiring");
    const b = await signInGuest(t, "Troll");
    const asA = t.as({ key: t.apiKey, identity: a.token });
    const asB = t.as({ key: t.apiKey, identity: b.token });
    expect((await asB.get("/api/v1/me")).status).toBe(200);
    expect((await t.api.post(`/api/v1/readers/${encodeURIComponent(b.reader.id)}/ban`, { reason: "spam" })).status).toBe(200);
    const banned = await asB.get("/api/v1/me");
    expect(banned.status).toBe(401);
    expect(banned.body.detail).toMatch(/banned/);
    expect((await asA.get("/api/v1/me")).status).toBe(200);
    clock.advance(86_400_000 + 1_000);
    expect((await asA.get("/api/v1/me")).status).toBe(401);
  });

  it("exports a reader's sessions, and signs an erased reader out: their sessions go with them", async () => {
    const t = await guestTenant();
    const { token, reader } = await signInGuest(t, "Gone");
    const me = t.as({ key: t.apiKey, identity: token });
    expect((await me.get("/api/v1/me")).status).toBe(200);
    // their export lists the session (how and when), never its token
    const exported = await me.get("/api/v1/me/export");
    expect(exported.status).toBe(200);
    expect(exported.body.sessions).toEqual([
      { method: "guest", provider: null, createdAt: expect.any(String), expiresAt: expect.any(String) },
    ]);
    expect(JSON.stringify(exported.body)).not.toContain(token);
    const erased = await t.api.del(`/api/v1/readers/${encodeURIComponent(reader.id)}`);
    expect(erased.status, JSON.stringify(erased.body)).toBe(204);
    const [left] = await sql<{ n: string }>("SELECT count(*) AS n FROM reader_sessions WHERE tenant_id = $1 AND reader_id = $2", [
      t.tenantId,
      reader.id,
    ]);
    expect(left!.n).toBe("0");
    expect((await me.get("/api/v1/me")).status).toBe(401);
  });

  it("refuses a replayed, expired, forged or honeypotted solution, writing nothing", async () => {
    const t = await guestTenant({ guest: { requireEmail: true, moderation: "pre" } });
    const before = await readerCount(t.tenantId);
    const post = (body: Record<string, unknown>) => auth(t).post(`/auth/v1/${t.tenantId}/guest`, body);
    const fine = await solved(t);
    const noEmail = await post({ name: "Eve", altcha: fine });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.errors).toEqual([{ path: "email", message: "is required" }]);
    const honeypot = await post({ name: "Bot", email: "bot@spam.example", altcha: fine, website: "https://spam.example" });
    expect(honeypot.status).toBe(422);
    expect(honeypot.body.errors[0].path).toBe("website");
    const first = await post({ name: "Eve", email: "eve@example.org", altcha: fine });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const replay = await post({ name: "Eve", email: "eve@example.org", altcha: fine });
    expect(replay.status).toBe(422);
    expect(replay.body.errors[0]).toEqual({ path: "altcha", message: "was already used: solve a new challenge" });
    const payload = JSON.parse(Buffer.from(await solved(t), "base64").toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...payload, signature: "0".repeat(64) })).toString("base64");
    expect((await post({ name: "Eve", email: "eve@example.org", altcha: forged })).body.errors?.[0]?.path).toBe("altcha");
    const wrongNumber = Buffer.from(JSON.stringify({ ...payload, number: (payload.number as number) + 1 })).toString("base64");
    expect((await post({ name: "Eve", email: "eve@example.org", altcha: wrongNumber })).status).toBe(422);
    // another tenant's solution is no solution here
    const other = await guestTenant();
    expect((await post({ name: "Eve", email: "eve@example.org", altcha: await solved(other) })).status).toBe(422);
    const stale = await solved(t);
    clock.advance(5 * 60_000 + 1_000);
    const expired = await post({ name: "Eve", email: "eve@example.org", altcha: stale });
    expect(expired.status).toBe(422);
    expect(expired.body.errors[0].message).toMatch(/expired/);
    expect(await readerCount(t.tenantId)).toBe(before + 1); // the one good sign-in
  });

  it("meets a flood of 1,000 guest attempts from one address with 429 and writes nothing", async () => {
    const t = await guestTenant();
    const before = await readerCount(t.tenantId);
    const statuses = new Map<number, number>();
    let retryAfter: string | null = null;
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () => auth(t).post(`/auth/v1/${t.tenantId}/guest`, { name: "Flood", altcha: "bm90IGEgc29sdXRpb24=" })),
      );
      for (const r of batch) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 429) retryAfter ??= r.headers.get("retry-after");
      }
    }
    expect([...statuses.keys()].sort()).toEqual([422, 429]);
    expect(statuses.get(429)).toBeGreaterThanOrEqual(900);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(await readerCount(t.tenantId)).toBe(before);
    // the budget is the address's for this tenant: another tenant's page still works
    const other = await guestTenant();
    expect((await auth(other).get(`/auth/v1/${other.tenantId}/challenge`)).status).toBe(200);
  });
});
