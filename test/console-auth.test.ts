// Console sign-in and operators (contract section 10): `engagement operator create` and
// `engagement console-link` (the CLI's code run in this process, test/support/cli-in-process.ts), the
// single-use link, password sign-in with one generic error and rate limiting, the session cookie
// (HttpOnly, SameSite=Strict), CSRF on every state-changing request, idle expiry, roles, sign-out;
// the audit trail and the moderation queue.
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { manualClock } from "../src/lib/clock.js";
import { createOperator, signConsoleLink } from "../src/modules/console/engine/operators.js";

let server: TestServer;
let t: TestTenant;
let clock: ReturnType<typeof manualClock>;

beforeAll(async () => {
  clock = manualClock(new Date());
  server = await startServer({}, { clock });
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const services = () => server.app.runtime.services;

/** Follows nothing: the answer as the browser first sees it. */
const open = (url: string, init: RequestInit = {}) => fetch(url, { redirect: "manual", ...init });

function cookieOf(res: Response): string {
  const set = res.headers.get("set-cookie") ?? "";
  return set.split(";")[0]!;
}

async function signInByLink(email?: string): Promise<{ cookie: string; csrf: string }> {
  const link = signConsoleLink({
    secret: services().adminJwtSecret,
    tenantId: t.tenantId,
    ...(email ? { email } : {}),
    now: clock.now(),
    baseUrl: server.url,
  });
  const res = await open(link.url);
  const cookie = cookieOf(res);
  const session = await (await fetch(`${server.url}/console/auth/session`, { headers: { cookie } })).json();
  return { cookie, csrf: session.csrfToken };
}

const gql = (who: { cookie: string; csrf?: string }, query: string) =>
  fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: who.cookie, ...(who.csrf ? { "x-csrf-token": who.csrf } : {}) },
    body: JSON.stringify({ query }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

describe("the CLI", { timeout: 120_000 }, () => {
  const env = () => {
    const e: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: inject("databaseUrl"),
      ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
      PUBLIC_URL: server.url,
    };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete e[k];
    return e;
  };
  const cli = (...args: string[]) => runCliInProcess(args, env());

  it("operator create --json, then console-link prints a single-use sign-in URL on PUBLIC_URL as its last line", async () => {
    const created = await cli("operator", "create", "--tenant", t.tenantId, "--email", "Mod@Example.com", "--role", "moderator", "--json");
    expect(created.code, created.stderr).toBe(0);
    const op = JSON.parse(created.stdout);
    expect(op).toMatchObject({ tenantId: t.tenantId, email: "mod@example.com", role: "moderator" });
    expect(op.password.length).toBeGreaterThanOrEqual(12);
    expect((await cli("operator", "create", "--tenant", t.tenantId, "--email", "mod@example.com")).code).toBe(1);

    const link = await cli("console-link", "--tenant", t.tenantId, "--email", "mod@example.com");
    expect(link.code, link.stderr).toBe(0);
    const url = link.stdout.trim().split("\n").at(-1)!;
    expect(url.startsWith(`${server.url}/console/auth/link?token=`)).toBe(true);
    const first = await open(url);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/console/");
    const setCookie = first.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^eng_console=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const again = await open(url);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("location")).toContain("signin=link-expired");

    // a bare console-link signs in as the tenant's first owner (created when there is none)
    const bare = await cli("console-link", "--tenant", t.tenantId);
    expect(bare.code, bare.stderr).toBe(0);
    const bareOpen = await open(bare.stdout.trim().split("\n").at(-1)!);
    const session = await (await fetch(`${server.url}/console/auth/session`, { headers: { cookie: cookieOf(bareOpen) } })).json();
    expect(session.operator).toMatchObject({ email: "owner@localhost", role: "owner" });

    // forged, expired, foreign-tenant or unknown-operator links sign nobody in; a genuine link for an
    // email that is no operator of the tenant (or an unknown tenant) says so rather than "expired"
    const forged = url.replace(/token=([^.]+)\.(.)/, (_m, p: string, c: string) => `token=${p}.${c === "A" ? "B" : "A"}`);
    const sign = (o: { tenantId?: string; email?: string; now?: Date; secret?: string }) =>
      signConsoleLink({
        secret: o.secret ?? services().adminJwtSecret,
        tenantId: o.tenantId ?? t.tenantId,
        ...(o.email ? { email: o.email } : {}),
        now: o.now ?? clock.now(),
        baseUrl: server.url,
      }).url;
    for (const [bad, why] of [
      [forged, "link-expired"],
      [sign({ now: new Date(clock.now().getTime() - 16 * 60_000) }), "link-expired"],
      [sign({ tenantId: "ten_nope" }), "unknown-tenant"],
      [sign({ email: "nobody@example.com" }), "unknown-operator"],
      [sign({ email: "nobody@example.com", now: new Date(clock.now().getTime() - 16 * 60_000) }), "link-expired"],
      [sign({ secret: "another secret" }), "link-expired"],
    ] as const) {
      const r = await open(bad);
      expect(r.headers.get("set-cookie"), bad).toBeNull();
      expect(r.headers.get("location"), bad).toBe(`/console/?signin=${why}`);
    }
  });

  it("console-link without PUBLIC_URL asks the server at HOST:PORT for its address, else says the address is a guess", async () => {
    const port = new URL(server.url).port;
    const bare = () => {
      const e = env();
      delete e.PUBLIC_URL;
      return e;
    };
    // a server of this configuration answers at HOST:PORT (a wildcard HOST is asked on loopback)
    const asked = await runCliInProcess(["console-link", "--tenant", t.tenantId], { ...bare(), HOST: "0.0.0.0", PORT: port });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stderr).toBe("");
    expect(asked.stdout.trim().split("\n").at(-1)!.startsWith(`${server.url}/console/auth/link?token=`)).toBe(true);
    // nobody there: HOST:PORT, and a word that it is a guess
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const guessed = await runCliInProcess(["console-link", "--tenant", t.tenantId], { ...bare(), HOST: "127.0.0.1", PORT: String(closed) });
    expect(guessed.code, guessed.stderr).toBe(0);
    expect(guessed.stderr).toMatch(/PUBLIC_URL is unset and no server answered at http:\/\/127\.0\.0\.1:\d+\/; the link below guesses/);
    expect(guessed.stdout.trim().split("\n").at(-1)!.startsWith(`http://127.0.0.1:${closed}/console/auth/link?token=`)).toBe(true);
  });
});

describe("password sign-in", () => {
  it("answers one generic error for every wrong detail, and rate-limits attempts", async () => {
    const tenant = await createTestTenant(server);
    await createOperator(services(), { tenantId: tenant.tenantId, email: "pw@example.com", password: "correct horse battery" });
    const signIn = (body: Record<string, string>) =>
      fetch(`${server.url}/console/auth/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const ok = await signIn({ tenantId: tenant.tenantId, email: "PW@example.com", password: "correct horse battery" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("set-cookie")).toMatch(/HttpOnly/);
    expect((await ok.json()).operator).toMatchObject({ email: "pw@example.com", role: "owner" });

    const answers = [];
    for (const body of [
      { tenantId: tenant.tenantId, email: "pw@example.com", password: "wrong password!" },
      { tenantId: tenant.tenantId, email: "nobody@example.com", password: "correct horse battery" },
      { tenantId: "ten_unknown", email: "pw@example.com", password: "correct horse battery" },
    ]) {
      const r = await signIn(body);
      answers.push([r.status, (await r.json()).detail]);
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]![0]).toBe(401);

    let last = 0;
    for (let i = 0; i < 12; i++)
      last = (await signIn({ tenantId: tenant.tenantId, email: "pw@example.com", password: `nope ${i} nope!` })).status;
    expect(last).toBe(429);
    // even the right password waits out the window now
    expect((await signIn({ tenantId: tenant.tenantId, email: "pw@example.com", password: "correct horse battery" })).status).toBe(429);
  });
});

describe("audit trail", () => {
  it("records key, webhook, settings and moderation actions with who did them; filterable; GET /api/v1/audit", async () => {
    const s = await signInByLink();
    const created = await gql(s, 'mutation { createApiKey(input: { label: "audited" }) { apiKey { id } } }');
    const keyId = created.body.data.createApiKey.apiKey.id;
    clock.advance(10); // the manual clock stands still otherwise: entries of one instant have no order
    await t.api.patch("/api/v1/settings", { editWindowSeconds: 600 });
    clock.advance(10);
    const c = await t.as({ key: t.apiKey, identity: await t.identity("aud") }).post("/api/v1/discussions/audit-1/comments", { body: "x" });
    await t.api.post(`/api/v1/comments/${c.body.id}/pin`);
    clock.advance(10);
    await t.admin.del(`/api/v1/keys/${keyId}`);

    const all = await t.admin.get("/api/v1/audit?limit=50");
    expect(all.status).toBe(200);
    const actions = all.body.items.map((e: any) => e.action);
    expect(actions.slice(0, 4)).toEqual(["api_key.revoke", "comment.pin", "settings.update", "api_key.create"]);
    const create = all.body.items.find((e: any) => e.action === "api_key.create" && e.resource.id === keyId);
    expect(create).toMatchObject({ actor: { type: "operator", label: "owner@localhost" }, resource: { type: "api_key", id: keyId } });
    expect(create.at).toMatch(/Z$/);
    // a key acting is named by its label; a settings change says what changed, from what to what
    const settings = all.body.items.find((e: any) => e.action === "settings.update");
    expect(settings.actor).toMatchObject({ type: "key", label: "bootstrap" });
    expect(settings.details.changes).toEqual([{ field: "editWindowSeconds", from: 900, to: 600 }]);
    const typed = await gql(s, '{ auditLog(action: "settings.update", first: 1) { edges { node { changes { field from to } } } } }');
    expect(typed.body.data.auditLog.edges[0].node.changes).toEqual([{ field: "editWindowSeconds", from: 900, to: 600 }]);
    const revoke = all.body.items.find((e: any) => e.action === "api_key.revoke");
    expect(revoke.actor).toMatchObject({ type: "admin", id: "admin" });

    const onlyKeys = await t.admin.get("/api/v1/audit?action=api_key.");
    expect(new Set(onlyKeys.body.items.map((e: any) => e.action))).toEqual(new Set(["api_key.create", "api_key.revoke"]));
    const byOperator = await t.admin.get("/api/v1/audit?actor=owner@localhost");
    expect(byOperator.body.items.every((e: any) => e.actor.label === "owner@localhost")).toBe(true);
    expect((await t.api.get("/api/v1/audit")).status).toBe(401); // an API key is not the admin
  });
});

describe("moderation queue", () => {
  it("lists pending comments across discussions, oldest or newest first, paged; needs moderate_content", async () => {
    const tenant = await createTestTenant(server);
    await tenant.api.patch("/api/v1/settings", { moderation: "pre" });
    const author = tenant.as({ key: tenant.apiKey, identity: await tenant.identity("q") });
    const ids: string[] = [];
    for (const [i, d] of ["q-a", "q-b", "q-a"].entries()) {
      clock.advance(1000);
      ids.push((await author.post(`/api/v1/discussions/${d}/comments`, { body: `pending ${i}` })).body.id);
    }
    const oldest = await tenant.api.get("/api/v1/comments?status=pending&limit=2");
    expect(oldest.status).toBe(200);
    expect(oldest.body.items.map((c: any) => c.id)).toEqual(ids.slice(0, 2));
    expect(oldest.body.items[1]).toMatchObject({ discussionId: "q-b", body: "pending 1", author: { id: "q" } });
    const rest = await tenant.api.get(`/api/v1/comments?status=pending&limit=2&cursor=${oldest.body.nextCursor}`);
    expect(rest.body).toMatchObject({ items: [{ id: ids[2] }], nextCursor: null });
    const newest = await tenant.api.get("/api/v1/comments?status=pending&sort=newest");
    expect(newest.body.items.map((c: any) => c.id)).toEqual([...ids].reverse());
    await tenant.api.post(`/api/v1/comments/${ids[0]}/approve`);
    expect((await tenant.api.get("/api/v1/comments?status=pending")).body.items).toHaveLength(2);
    expect((await tenant.api.get("/api/v1/comments?status=approved")).status).toBe(400);
    const plain = await tenant.api.post("/api/v1/keys", { label: "plain" });
    expect((await tenant.as({ key: plain.body.key }).get("/api/v1/comments?status=pending")).status).toBe(403);
  });
});

// last: it moves the clock on by hours (assertions and admin tokens minted before expire)
describe("sessions", () => {
  it("act as the operator's role: owners may do everything, moderators moderate and read analytics", async () => {
    await createOperator(services(), { tenantId: t.tenantId, email: "owner2@example.com", role: "owner" });
    const owner = await signInByLink("owner2@example.com");
    const keys = await fetch(`${server.url}/api/v1/keys`, { headers: { cookie: owner.cookie } });
    expect(keys.status).toBe(200);
    const moderatorOp = await createOperator(services(), { tenantId: t.tenantId, email: "mod2@example.com", role: "moderator" });
    const moderator = await signInByLink(moderatorOp.operator.email);
    const settings = await fetch(`${server.url}/api/v1/settings`, { headers: { cookie: moderator.cookie } });
    expect(settings.status).toBe(403);
    expect((await fetch(`${server.url}/api/v1/comments?status=pending`, { headers: { cookie: moderator.cookie } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/analytics`, { headers: { cookie: moderator.cookie } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/audit`, { headers: { cookie: owner.cookie } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/audit`, { headers: { cookie: moderator.cookie } })).status).toBe(403);
  });

  it("refuse a cross-site request that may change something (CSRF): the token, or the browser's own same-origin word", async () => {
    const s = await signInByLink();
    const query = "{ settings { moderation } }";
    const host = new URL(server.url).host;
    const as = (headers: Record<string, string>) =>
      fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: s.cookie, ...headers },
        body: JSON.stringify({ query }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    // what another site's page would send
    const forged: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site", origin: server.url },
    ];
    for (const h of forged) {
      const r = await as(h);
      expect([JSON.stringify(h), r.status, r.body.errors[0].extensions.code]).toEqual([JSON.stringify(h), 403, "csrf_failed"]);
    }
    expect((await as({ origin: "https://evil.example", "x-csrf-token": "x".repeat(43) })).status).toBe(403);
    // the console's own page: the token, or the browser saying it is same-origin
    expect((await as({ origin: "https://evil.example", "x-csrf-token": s.csrf })).body.data.settings.moderation).toBe("post");
    expect((await as({ "sec-fetch-site": "same-origin" })).body.data.settings.moderation).toBe("post");
    expect((await as({ origin: `http://${host}` })).body.data.settings.moderation).toBe("post");
    const rest = await fetch(`${server.url}/api/v1/keys`, {
      method: "POST",
      headers: { cookie: s.cookie, "content-type": "application/json", origin: "https://evil.example" },
      body: JSON.stringify({ label: "forged" }),
    });
    expect(rest.status).toBe(403);
  });

  it("end when idle too long, and at sign-out", async () => {
    const s = await signInByLink();
    expect((await fetch(`${server.url}/console/auth/session`, { headers: { cookie: s.cookie } })).status).toBe(200);
    clock.advance(server.app.runtime.services.config.CONSOLE_SESSION_IDLE_SECONDS * 1000 + 1000);
    expect((await fetch(`${server.url}/console/auth/session`, { headers: { cookie: s.cookie } })).status).toBe(401);

    const s2 = await signInByLink();
    const out = await fetch(`${server.url}/console/auth/sign-out`, {
      method: "POST",
      headers: { cookie: s2.cookie, "x-csrf-token": s2.csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^eng_console=;/);
    expect((await fetch(`${server.url}/api/v1/keys`, { headers: { cookie: s2.cookie } })).status).toBe(401);
  });
});
