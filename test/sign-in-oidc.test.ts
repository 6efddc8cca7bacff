// Hosted sign-in at OpenID Connect and OAuth 2 providers (contract section 20), over HTTP with no
// browser: a real oidc-provider (discovery, login and consent pages, a confidential client whose
// redirect URI is the service's callback) and a local server shaped like GitHub's OAuth 2
// (test/support/github-oauth.ts). The flows are driven by fetch, following redirects by hand and
// submitting oidc-provider's development login and consent forms as a reader would. Checked: the
// reader, session and finish page of both shapes; every refused callback (a forged, replayed,
// expired or other provider's state, no code, the provider's error, a forged nonce or PKCE verifier)
// writes no reader and no session; the callback's pages in the language of the sign-in's start; the
// client secrets never leave; the Test button; the SSRF guard refusing a provider's private address
// on a server whose policy says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startTestIdp, type TestIdp } from "./support/oidc-provider.js";
import { startTestGithub, type TestGithub } from "./support/github-oauth.js";
import { manualClock } from "../src/lib/clock.js";
import { sha256 } from "../src/lib/sha256.js";
import { subjectOf } from "../src/modules/sign-in/engine/claims.js";
import type { SignInProvider } from "../src/tenancy/settings/sign-in.js";

const SITE = "https://news.example";
const IDP_SECRET = "idp-client-secret-9f8e7d6c5b4a";
const GH_SECRET = "gh-client-secret-0a1b2c3d4e5f";
const OCTOCAT = {
  id: 583231,
  login: "octocat",
  name: "The Octocat",
  avatar_url: "https://avatars.example/u/583231",
  email: "octocat@github.example",
};

const clock = manualClock(new Date());
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let t: TestTenant;
let idp: TestIdp;
let gh: TestGithub;
/** every answer the service gave in this file, to look for the secrets in */
const answered: string[] = [];

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const count = async (table: "readers" | "reader_sessions", tenantId = t.tenantId) =>
  Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]))[0]!.n);
const written = async () => ({ readers: await count("readers"), sessions: await count("reader_sessions") });

const idpProvider = () => ({ id: "idp", label: "Test IdP", issuer: idp.issuer, clientId: "engagement", clientSecret: IDP_SECRET });
const ghProvider = () => ({
  id: "gh",
  label: "GitHub",
  authorizationEndpoint: `${gh.url}/login/oauth/authorize`,
  tokenEndpoint: `${gh.url}/login/oauth/access_token`,
  userinfoEndpoint: `${gh.url}/user`,
  clientId: "gh-client",
  clientSecret: GH_SECRET,
});

beforeAll(async () => {
  own = await isolatedDatabase("signinoidc");
  // the allow-list admits 10.99/16 when settings are written: the second server below has none
  server = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0", WEBHOOK_ALLOWLIST: "10.99.0.0/16" }, { clock });
  t = await createTestTenant(server);
  const callback = (id: string) => `${server.url}/auth/v1/${t.tenantId}/callback/${id}`;
  [idp, gh] = await Promise.all([
    startTestIdp({
      signIn: {
        clientId: "engagement",
        clientSecret: IDP_SECRET,
        redirectUris: [callback("idp")],
        accounts: {
          grace: { name: "Grace Hopper", picture: "https://avatars.example/grace.png", email: "grace@navy.example", email_verified: true },
          alan: { name: "Alan Turing", picture: "javascript:alert(1)", email: "alan@unverified.example", email_verified: false },
        },
      },
    }),
    startTestGithub({ clientId: "gh-client", clientSecret: GH_SECRET, user: OCTOCAT }),
  ]);
  const set = await t.api.patch("/api/v1/settings", {
    allowedOrigins: [SITE],
    signIn: { methods: ["oidc"], oidc: [idpProvider(), ghProvider()] },
  });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  answered.push(JSON.stringify(set.body));
}, 60_000);
afterAll(async () => {
  await idp?.close();
  await gh?.close();
  await server?.stop();
  await own?.drop();
});

/**
 * A GET of the service with no redirect followed, from `browser` (default: the reader's, whose
 * cookies it keeps, as a browser would: the start's binding cookie goes back with the callback); the
 * body kept for the secrets check.
 */
async function get(url: string, headers: Record<string, string> = {}, browser: Jar = readerBrowser) {
  const cookie = browser.header();
  const res = await fetch(url, { redirect: "manual", headers: { ...headers, ...(cookie ? { cookie } : {}) } });
  browser.take(res);
  const body = await res.text();
  answered.push(body, res.headers.get("location") ?? "");
  return { status: res.status, location: res.headers.get("location"), body, headers: res.headers };
}

/** The reader's browser at the service (its cookies). */
const readerBrowser = jar();

/** GET /auth/v1/{tenantId}/oidc/{id}[&lang=]: the 302 to the provider (in `browser`, default the reader's). */
async function start(providerId: string, lang?: string, browser: Jar = readerBrowser) {
  const r = await get(
    `${server.url}/auth/v1/${t.tenantId}/oidc/${providerId}?origin=${encodeURIComponent(SITE)}${lang === undefined ? "" : `&lang=${encodeURIComponent(lang)}`}`,
    {},
    browser,
  );
  expect(r.status, r.body).toBe(302);
  return new URL(r.location!);
}

type Jar = ReturnType<typeof jar>;

/** A cookie jar of one origin: oidc-provider keeps its interaction in cookies, the service its sign-in binding. */
function jar() {
  const cookies = new Map<string, string>();
  return {
    header: () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    take(res: Response) {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const i = pair!.indexOf("=");
        cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
      }
    },
  };
}

/**
 * The reader at oidc-provider: its redirects followed, its login form (any password) and consent
 * form submitted, until it sends the reader to the service; that URL (the callback) is answered.
 */
async function atIdp(authorizeUrl: URL, login: string, opts: { cancel?: boolean } = {}): Promise<URL> {
  const cookies = jar();
  let next: { url: string; method: "GET" | "POST"; body?: URLSearchParams } = { url: authorizeUrl.href, method: "GET" };
  for (let step = 0; step < 12; step++) {
    const res = await fetch(next.url, {
      method: next.method,
      redirect: "manual",
      headers: { cookie: cookies.header(), ...(next.body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      ...(next.body ? { body: next.body } : {}),
    });
    cookies.take(res);
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get("location")!, next.url);
      if (location.origin !== idp.issuer) return location;
      next = { url: location.href, method: "GET" };
      continue;
    }
    const html = await res.text();
    expect(res.status, html).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    expect(action, html).toBeTruthy();
    const prompt = /name="prompt" value="(\w+)"/.exec(html)![1]!;
    if (opts.cancel) {
      // the page's "[ Cancel ]" link: oidc-provider sends the reader back with error=access_denied
      const abort = /href="([^"]+\/abort)"/.exec(html)![1]!;
      next = { url: new URL(abort.replace(/&amp;/g, "&"), next.url).href, method: "GET" };
      continue;
    }
    const body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any password" } : { prompt });
    next = { url: new URL(action!.replace(/&amp;/g, "&"), next.url).href, method: "POST", body };
  }
  throw new Error("oidc-provider never sent the reader back");
}

/** The reader at the GitHub-shaped server: it approves at once and redirects to the callback. */
async function atGithub(authorizeUrl: URL): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}

/** The finish page's message to the opener: {type, token, reader}, and the origin it is posted to. */
function finished(html: string): { message: { type: string; token: string; reader: Record<string, unknown> }; origin: string } {
  const m = /engagementFinish\((\{.*?\}),("[^"]*")\);/.exec(html);
  expect(m, html).not.toBeNull();
  return { message: JSON.parse(m![1]!), origin: JSON.parse(m![2]!) };
}

const me = (token: string) => t.as({ key: t.apiKey, identity: token }).get("/api/v1/me");

describe("OpenID Connect (oidc-provider, discovery)", () => {
  it("signs the reader in: PKCE S256, state and nonce, the ID token checked, a session of method oidc", async () => {
    const before = await written();
    const authorize = await start("idp");
    expect(authorize.origin + authorize.pathname).toBe(`${idp.issuer}/auth`);
    const q = authorize.searchParams;
    expect(q.get("client_id")).toBe("engagement");
    expect(q.get("response_type")).toBe("code");
    expect(q.get("scope")).toBe("openid email profile");
    expect(q.get("redirect_uri")).toBe(`${server.url}/auth/v1/${t.tenantId}/callback/idp`);
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get("nonce")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // only the state's hash is stored, with the verifier (never sent to the provider here) and the page's origin
    const [row] = await sql<{ data: Record<string, unknown>; ttl: number }>(
      `SELECT data, extract(epoch FROM expires_at - created_at) AS ttl FROM sign_in_tokens
        WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2`,
      [t.tenantId, sha256(q.get("state")!, "hex")],
    );
    expect(row).toBeDefined();
    expect(Number(row!.ttl)).toBe(600);
    expect(row!.data).toMatchObject({ provider: "idp", origin: SITE, nonce: q.get("nonce") });
    expect(authorize.href).not.toContain(row!.data.verifier as string);
    expect(await written()).toEqual(before);

    const back = await atIdp(authorize, "grace");
    expect(back.origin + back.pathname).toBe(`${server.url}/auth/v1/${t.tenantId}/callback/idp`);
    const page = await get(back.href);
    expect(page.status, page.body).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const { message, origin } = finished(page.body);
    expect(origin).toBe(SITE);
    expect(message.type).toBe("engagement:signed-in");
    expect(message.token).toMatch(/^rs_[A-Za-z0-9_-]{43,}$/);
    expect(message.reader).toEqual({ id: "idp:grace", name: "Grace Hopper", avatarUrl: "https://avatars.example/grace.png" });
    const who = await me(message.token);
    expect(who.status).toBe(200);
    expect(who.body).toEqual({ id: "idp:grace", name: "Grace Hopper", avatarUrl: "https://avatars.example/grace.png", method: "oidc" });
    // the address is the reader's: the provider says it is verified
    const [reader] = await sql<{ email: string | null }>("SELECT email FROM readers WHERE tenant_id = $1 AND id = $2", [
      t.tenantId,
      "idp:grace",
    ]);
    expect(reader!.email).toBe("grace@navy.example");
    const [session] = await sql<{ method: string; provider: string }>(
      "SELECT method, provider FROM reader_sessions WHERE tenant_id = $1 AND reader_id = 'idp:grace'",
      [t.tenantId],
    );
    expect(session).toEqual({ method: "oidc", provider: "idp" });
    // the ID token's signature was checked with the provider's key set, fetched through the guard
    expect(idp.jwksFetches).toBeGreaterThan(0);

    // the same callback again: the state was spent
    const replay = await get(back.href);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain("already completed");
    expect(await count("reader_sessions")).toBe(before.sessions + 1);
  });

  it("keeps an unverified address and a non-http(s) picture out", async () => {
    const back = await atIdp(await start("idp"), "alan");
    const page = await get(back.href);
    expect(page.status, page.body).toBe(200);
    expect(finished(page.body).message.reader).toEqual({ id: "idp:alan", name: "Alan Turing", avatarUrl: null });
    const [reader] = await sql<{ email: string | null }>("SELECT email FROM readers WHERE tenant_id = $1 AND id = 'idp:alan'", [
      t.tenantId,
    ]);
    expect(reader!.email).toBeNull();
  });

  it("checks the nonce: a callback whose sign-in expected another nonce is refused, nothing written", async () => {
    const authorize = await start("idp");
    const back = await atIdp(authorize, "grace");
    // the ID token carries the nonce of the start; the stored one no longer matches it
    await sql(
      `UPDATE sign_in_tokens SET data = jsonb_set(data, '{nonce}', '"a-forged-nonce-0123456789"')
        WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2`,
      [t.tenantId, sha256(authorize.searchParams.get("state")!, "hex")],
    );
    const before = await written();
    const page = await get(back.href);
    expect(page.status, page.body).toBe(400);
    expect(page.body).toContain("Sign-in failed");
    expect(page.body).toMatch(/nonce/);
    expect(page.body).not.toContain("engagement:signed-in");
    expect(await written()).toEqual(before);
  });

  it("sends the PKCE verifier: one that does not match the challenge is refused by the provider, nothing written", async () => {
    const authorize = await start("idp");
    const back = await atIdp(authorize, "grace");
    await sql(
      `UPDATE sign_in_tokens SET data = jsonb_set(data, '{verifier}', '"${"x".repeat(43)}"')
        WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2`,
      [t.tenantId, sha256(authorize.searchParams.get("state")!, "hex")],
    );
    const before = await written();
    const page = await get(back.href);
    expect(page.status, page.body).toBe(400);
    expect(page.body).toContain("invalid_grant");
    expect(await written()).toEqual(before);
  });

  it("says the sign-in was cancelled when the reader cancels at the provider, and spends the state", async () => {
    const before = await written();
    const authorize = await start("idp");
    const back = await atIdp(authorize, "grace", { cancel: true });
    expect(back.searchParams.get("error")).toBe("access_denied");
    const page = await get(back.href);
    expect(page.status).toBe(400);
    expect(page.body).toContain("Sign-in cancelled");
    expect(page.body).toContain("was cancelled");
    expect(await written()).toEqual(before);
    const [row] = await sql<{ used_at: Date | null }>(
      "SELECT used_at FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2",
      [t.tenantId, sha256(authorize.searchParams.get("state")!, "hex")],
    );
    expect(row!.used_at).not.toBeNull();
  });
});

describe("plain OAuth 2 (GitHub's shape)", () => {
  it("signs the reader in: the secret in the form, JSON asked for, /user with a Bearer token", async () => {
    const before = await written();
    const authorize = await start("gh");
    expect(authorize.origin + authorize.pathname).toBe(`${gh.url}/login/oauth/authorize`);
    const q = authorize.searchParams;
    expect(q.get("scope")).toBeNull();
    expect(q.get("nonce")).toBeNull();
    expect(q.get("code_challenge_method")).toBe("S256");
    const page = await get((await atGithub(authorize)).href);
    expect(page.status, page.body).toBe(200);
    const { message, origin } = finished(page.body);
    expect(origin).toBe(SITE);
    expect(message.reader).toEqual({ id: "gh:583231", name: "The Octocat", avatarUrl: "https://avatars.example/u/583231" });
    expect((await me(message.token)).body).toEqual({
      id: "gh:583231",
      name: "The Octocat",
      avatarUrl: "https://avatars.example/u/583231",
      method: "oidc",
    });
    const token = gh.tokenRequests.at(-1)!;
    expect(token.authorization).toBeUndefined();
    expect(token.accept).toContain("application/json");
    expect(token.form).toMatchObject({
      grant_type: "authorization_code",
      client_id: "gh-client",
      client_secret: GH_SECRET,
      redirect_uri: `${server.url}/auth/v1/${t.tenantId}/callback/gh`,
    });
    expect(token.form.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // an OAuth 2 provider's address is not known to be verified: none is kept
    const [reader] = await sql<{ email: string | null }>("SELECT email FROM readers WHERE tenant_id = $1 AND id = 'gh:583231'", [
      t.tenantId,
    ]);
    expect(reader!.email).toBeNull();
    expect(await written()).toEqual({ readers: before.readers + 1, sessions: before.sessions + 1 });
  });
});

describe("a sign-in finishes only in the browser that began it (login CSRF)", () => {
  const cookieOf = (res: { headers: Headers }) => res.headers.getSetCookie().find((c) => /eng_sign_in=/.test(c)) ?? "";

  it("binds the start to the browser with an HttpOnly, SameSite=Lax cookie, kept as a hash with the state", async () => {
    const browser = jar();
    const r = await get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(SITE)}`, {}, browser);
    expect(r.status).toBe(302);
    const cookie = cookieOf(r);
    // plain http: no Secure cookie can be kept, so not the __Host- name
    expect(cookie).toMatch(/^eng_sign_in=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/; Max-Age=600/);
    expect(cookie).not.toMatch(/Domain=/i);
    const value = /^eng_sign_in=([^;]+)/.exec(cookie)![1]!;
    const state = new URL(r.location!).searchParams.get("state")!;
    const [row] = await sql<{ data: Record<string, unknown> }>(
      "SELECT data FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2",
      [t.tenantId, sha256(state, "hex")],
    );
    expect(row!.data.binding).toBe(sha256(value, "hex"));
    expect(JSON.stringify(row!.data)).not.toContain(value);
    // a second start in the same browser keeps its value: two tabs' sign-ins both finish
    const again = await get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(SITE)}`, {}, browser);
    expect(cookieOf(again)).toContain(`eng_sign_in=${value};`);
  });

  it("the attacker's callback opened in another browser starts no session, says why, and stays the attacker's", async () => {
    const attacker = jar();
    const back = await atGithub(await start("gh", undefined, attacker));
    const before = await written();
    // a victim's browser that never began a sign-in: no binding at all
    const victim = jar();
    const none = await get(back.href, {}, victim);
    expect(none.status, none.body).toBe(400);
    expect(none.body).toContain("begun in another browser");
    expect(none.body).not.toContain("engagement:signed-in");
    expect(none.body).not.toContain("rs_");
    // a victim who began a sign-in of their own: another binding
    await start("gh", undefined, victim);
    const other = await get(back.href, {}, victim);
    expect(other.status, other.body).toBe(400);
    expect(other.body).toContain("begun in another browser");
    expect(other.body).not.toContain("engagement:signed-in");
    // a forged cookie of the right shape is another binding too
    const forged = await get(back.href, { cookie: `eng_sign_in=${"A".repeat(43)}` }, jar());
    expect(forged.status).toBe(400);
    expect(await written()).toEqual(before);
    // the state is not spent by the refusals: it finishes in the browser that began it
    const own = await get(back.href, {}, attacker);
    expect(own.status, own.body).toBe(200);
    expect(finished(own.body).message.type).toBe("engagement:signed-in");
  });

  it("over https the cookie is __Host- and Secure, and only that name is read back", async () => {
    const secure = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0", PUBLIC_URL: "https://comments.example" });
    try {
      const res = await fetch(`${secure.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(SITE)}`, { redirect: "manual" });
      expect(res.status).toBe(302);
      const cookie = cookieOf(res);
      expect(cookie).toMatch(/^__Host-eng_sign_in=[A-Za-z0-9_-]{43};/);
      expect(cookie).toMatch(/; Secure/i);
      expect(cookie).toMatch(/; HttpOnly/i);
      expect(cookie).toMatch(/; Path=\/(;|$)/);
      const value = /^__Host-eng_sign_in=([^;]+)/.exec(cookie)![1]!;
      // the provider sends the reader to PUBLIC_URL's callback; here it reaches this server directly
      const redirect = await atGithub(new URL(res.headers.get("location")!));
      const back = `${secure.url}${redirect.pathname}${redirect.search}`;
      const before = await written();
      // the value under the plain name (a cookie a sibling host could set) does not count over https
      const plain = await fetch(back, { redirect: "manual", headers: { cookie: `eng_sign_in=${value}` } });
      expect(plain.status).toBe(400);
      expect(await plain.text()).toContain("begun in another browser");
      expect(await written()).toEqual(before);
      const good = await fetch(back, { redirect: "manual", headers: { cookie: `__Host-eng_sign_in=${value}` } });
      expect(good.status, await good.clone().text()).toBe(200);
      expect(finished(await good.text()).message.type).toBe("engagement:signed-in");
    } finally {
      await secure.stop();
    }
  });
});

describe("refused callbacks write nothing", () => {
  it("a tampered state, a state of another provider, a missing code, an expired state", async () => {
    const authorize = await start("gh");
    const back = await atGithub(authorize);
    const before = await written();

    const tampered = new URL(back);
    tampered.searchParams.set(
      "state",
      back.searchParams.get("state")!.replace(/.$/, (c) => (c === "A" ? "B" : "A")),
    );
    const r1 = await get(tampered.href);
    expect(r1.status).toBe(400);
    expect(r1.body).toContain("This sign-in cannot be completed");

    const noState = new URL(back);
    noState.searchParams.delete("state");
    expect((await get(noState.href)).status).toBe(400);

    // gh's state at idp's callback: refused, and not spent by it
    const otherProvider = new URL(back.href.replace("/callback/gh", "/callback/idp"));
    const r2 = await get(otherProvider.href);
    expect(r2.status).toBe(400);
    expect(r2.body).toContain("belongs to another provider");

    const noCode = new URL(back);
    noCode.searchParams.delete("code");
    const r3 = await get(noCode.href);
    expect(r3.status).toBe(400);
    expect(r3.body).toContain("no authorization code");
    expect(await written()).toEqual(before);

    // the genuine callback still works once; then it is spent
    expect((await get(back.href)).status).toBe(200);
    expect((await get(back.href)).status).toBe(400);

    // a state older than 10 minutes
    const late = await atGithub(await start("gh"));
    const afterOne = await written();
    clock.advance(10 * 60_000 + 1_000);
    try {
      const r4 = await get(late.href);
      expect(r4.status).toBe(400);
      expect(r4.body).toContain("has expired");
    } finally {
      clock.advance(-(10 * 60_000 + 1_000));
    }
    expect(await written()).toEqual(afterOne);
  });

  it("the provider's error: a page saying sign-in was cancelled", async () => {
    const before = await written();
    gh.deny = true;
    try {
      const back = await atGithub(await start("gh"));
      expect(back.searchParams.get("error")).toBe("access_denied");
      const page = await get(back.href);
      expect(page.status).toBe(400);
      expect(page.body).toContain("Sign-in with GitHub was cancelled");
      // the state was spent by the error: the same state with a code now is refused
      const forged = new URL(back);
      forged.searchParams.delete("error");
      forged.searchParams.delete("error_description");
      forged.searchParams.set("code", "0123456789abcdef");
      expect((await get(forged.href)).status).toBe(400);
    } finally {
      gh.deny = false;
    }
    expect(await written()).toEqual(before);
  });

  it("a start for an origin outside allowedOrigins, an unknown provider, a tenant with oidc off: problem pages", async () => {
    const bad = await get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent("https://evil.example")}`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/^text\/html/);
    expect(bad.body).toContain("is not in this site");
    expect(bad.body).not.toContain("<script>");
    expect((await get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh`)).status).toBe(400);
    const unknown = await get(`${server.url}/auth/v1/${t.tenantId}/oidc/nope?origin=${encodeURIComponent(SITE)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain("Sign-in provider not found");
    expect((await get(`${server.url}/auth/v1/${t.tenantId}/callback/nope?state=x&code=y`)).status).toBe(404);
    const off = await createTestTenant(server);
    const disabled = await get(`${server.url}/auth/v1/${off.tenantId}/oidc/gh?origin=${encodeURIComponent(SITE)}`);
    expect(disabled.status).toBe(403);
    expect(disabled.body).toContain("not enabled");
    expect((await get(`${server.url}/auth/v1/no-such-tenant/oidc/gh?origin=x`)).status).toBe(404);
  });
});

describe("the callback's pages in the sign-in's language", () => {
  const stateRow = async (authorize: URL) =>
    (
      await sql<{ data: Record<string, unknown> }>(
        "SELECT data FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2",
        [t.tenantId, sha256(authorize.searchParams.get("state")!, "hex")],
      )
    )[0]!.data;

  it("carries lang=de from the sign-in page's link through the provider to a German finish page", async () => {
    const signIn = await get(`${server.url}/auth/v1/${t.tenantId}/sign-in?origin=${encodeURIComponent(SITE)}&lang=de`);
    expect(signIn.status, signIn.body).toBe(200);
    const href = /href="([^"]*\/oidc\/idp\?[^"]*)"/.exec(signIn.body)?.[1];
    expect(href, signIn.body).toBe(`/auth/v1/${t.tenantId}/oidc/idp?origin=${encodeURIComponent(SITE)}&amp;lang=de`);
    const started = await get(`${server.url}${href!.replace(/&amp;/g, "&")}`);
    expect(started.status, started.body).toBe(302);
    const authorize = new URL(started.location!);
    expect(await stateRow(authorize)).toMatchObject({ provider: "idp", lang: "de" });

    const back = await atIdp(authorize, "grace");
    // the browser's own language does not matter: the sign-in's does
    const page = await get(back.href, { "accept-language": "fr" });
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain("<title>Angemeldet</title>");
    expect(page.body).toContain("Sie sind als Grace Hopper angemeldet. Sie können dieses Fenster schließen.");
    expect(finished(page.body).message.reader).toMatchObject({ id: "idp:grace" });

    // the same callback again: the state is spent, its row still says German
    const replay = await get(back.href, { "accept-language": "fr" });
    expect(replay.status).toBe(400);
    expect(replay.body).toContain('<html lang="de">');
    expect(replay.body).toContain("Diese Anmeldung kann nicht abgeschlossen werden");
    expect(replay.body).toContain("bereits abgeschlossen");
  });

  it("says a sign-in started with lang=de and cancelled at the provider was cancelled, in German", async () => {
    const before = await written();
    const authorize = await start("idp", "de");
    const back = await atIdp(authorize, "grace", { cancel: true });
    expect(back.searchParams.get("error")).toBe("access_denied");
    const page = await get(back.href);
    expect(page.status).toBe(400);
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain("<title>Anmeldung abgebrochen</title>");
    expect(page.body).toContain("Die Anmeldung mit Test IdP wurde abgebrochen: Es wurde nichts weitergegeben.");
    expect(page.body).not.toContain("was cancelled");
    expect(await written()).toEqual(before);
  });

  it("refuses in German with the provider's own words in English under them, the state left unspent", async () => {
    const back = await atGithub(await start("gh", "de"));
    const noCode = new URL(back);
    noCode.searchParams.delete("code");
    const page = await get(noCode.href);
    expect(page.status).toBe(400);
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain("<title>Anmeldung fehlgeschlagen</title>");
    expect(page.body).toContain("GitHub hat die Anmeldung nicht abgeschlossen.");
    expect(page.body).toContain('<p class="hint" lang="en">GitHub sent no authorization code back.</p>');
    expect((await get(back.href)).status).toBe(200);
  });

  it("falls back to Accept-Language, then English, for a lang not of the ten; never puts one in the page", async () => {
    const bad = '"><script>alert(1)</script>';
    const authorize = await start("gh", bad);
    expect((await stateRow(authorize)).lang).toBe("en");
    const page = await get((await atGithub(authorize)).href);
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('<html lang="en">');
    expect(page.body).toContain("You are signed in as The Octocat.");
    expect(page.body).not.toContain("alert(1)");

    const klingon = await start("gh", "tlh");
    expect((await stateRow(klingon)).lang).toBe("en");
    const viaHeader = await get(`${server.url}/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(SITE)}&lang=tlh`, {
      "accept-language": "tlh, nl;q=0.5",
    });
    expect((await stateRow(new URL(viaHeader.location!))).lang).toBe("nl");

    // a row whose language is not one of the ten (written by hand): English, not the row's words
    const tampered = await start("gh", "de");
    await sql(
      `UPDATE sign_in_tokens SET data = jsonb_set(data, '{lang}', '"de\\"><b>"')
        WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2`,
      [t.tenantId, sha256(tampered.searchParams.get("state")!, "hex")],
    );
    const finish = await get((await atGithub(tampered)).href);
    expect(finish.status, finish.body).toBe(200);
    expect(finish.body).toContain('<html lang="en">');
    expect(finish.body).not.toContain("<b>");
  });

  it("answers an unknown state in the browser's Accept-Language, else English", async () => {
    const unknown = `${server.url}/auth/v1/${t.tenantId}/callback/gh?state=no-such-state-0123456789&code=abc`;
    const fr = await get(unknown, { "accept-language": "fr-CA, en;q=0.5" });
    expect(fr.status).toBe(400);
    expect(fr.body).toContain('<html lang="fr">');
    expect(fr.body).toContain("Cette connexion ne peut pas aboutir");
    const plain = await get(unknown);
    expect(plain.body).toContain('<html lang="en">');
    expect(plain.body).toContain("This sign-in cannot be completed");
  });
});

describe("the providers' Test button", () => {
  it("reads an OpenID provider's discovery and key set, and calls a plain OAuth 2 provider's three endpoints", async () => {
    const oidcTest = await t.api.post("/api/v1/settings/sign-in/providers/idp/test");
    expect(oidcTest.status, JSON.stringify(oidcTest.body)).toBe(200);
    answered.push(JSON.stringify(oidcTest.body));
    expect(oidcTest.body.ok).toBe(true);
    expect(oidcTest.body.redirectUri).toBeNull(); // no PUBLIC_URL here
    expect(oidcTest.body.checks.map((c: any) => [c.endpoint, c.ok, c.status])).toEqual([
      ["discovery", true, 200],
      ["jwks", true, 200],
      ["clientSecret", true, null],
    ]);
    const ghTest = await t.api.post("/api/v1/settings/sign-in/providers/gh/test");
    answered.push(JSON.stringify(ghTest.body));
    expect(ghTest.body.ok, JSON.stringify(ghTest.body)).toBe(true);
    expect(ghTest.body.checks.map((c: any) => [c.endpoint, c.url, c.ok])).toEqual([
      ["authorization", `${gh.url}/login/oauth/authorize`, true],
      ["token", `${gh.url}/login/oauth/access_token`, true],
      ["userinfo", `${gh.url}/user`, true],
      ["clientSecret", "", true],
    ]);
    // /user said 401 to a caller with no token: it answered
    expect(ghTest.body.checks[2].status).toBe(401);
    expect((await t.api.post("/api/v1/settings/sign-in/providers/nope/test")).status).toBe(404);
    const moderator = t.as({ key: (await t.api.post("/api/v1/keys", { label: "mod", capabilities: ["moderate_content"] })).body.key });
    expect((await moderator.post("/api/v1/settings/sign-in/providers/gh/test")).status).toBe(403);
  });

  it("says what is wrong with a provider that is down", async () => {
    const down = await startTestIdp();
    const tenant = await createTestTenant(server);
    const set = await tenant.api.patch("/api/v1/settings", {
      signIn: { methods: ["oidc"], oidc: [{ id: "down", label: "Down", issuer: down.issuer, clientId: "c", clientSecret: "s" }] },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    down.setDown(true);
    try {
      const r = await tenant.api.post("/api/v1/settings/sign-in/providers/down/test");
      expect(r.status).toBe(200);
      expect(r.body.ok).toBe(false);
      expect(r.body.checks[0]).toMatchObject({ endpoint: "discovery", ok: false, status: null });
      expect(r.body.checks[0].error).toBeTruthy();
    } finally {
      await down.close();
    }
  });
});

describe("secrets and the SSRF guard", () => {
  it("never answers a client secret", async () => {
    answered.push(JSON.stringify((await t.api.get("/api/v1/settings")).body));
    answered.push(JSON.stringify((await t.admin.get("/api/v1/audit")).body));
    const all = answered.join("\n");
    expect(all.length).toBeGreaterThan(1000);
    expect(all).not.toContain(IDP_SECRET);
    expect(all).not.toContain(GH_SECRET);
  });

  it("refuses a provider at a private address when the server's policy does, before connecting", async () => {
    const tenant = await createTestTenant(server);
    // allowed when written (this server's WEBHOOK_ALLOWLIST), refused when called by a server without it
    const set = await tenant.api.patch("/api/v1/settings", {
      allowedOrigins: [SITE],
      signIn: {
        methods: ["oidc"],
        oidc: [
          { id: "inside", label: "Inside", issuer: "https://10.99.1.2", clientId: "c", clientSecret: "s" },
          {
            id: "inside2",
            label: "Inside 2",
            authorizationEndpoint: "https://10.99.1.2/authorize",
            tokenEndpoint: "https://10.99.1.2/token",
            userinfoEndpoint: "https://10.99.1.2/user",
            clientId: "c",
            clientSecret: "s",
          },
        ],
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const strict = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0", ALLOW_HTTP_WEBHOOKS: "0" });
    try {
      const started = Date.now();
      const res = await fetch(`${strict.url}/auth/v1/${tenant.tenantId}/oidc/inside?origin=${encodeURIComponent(SITE)}`, {
        redirect: "manual",
      });
      const body = await res.text();
      expect(res.status, body).toBe(502);
      expect(body).toContain("10.99.1.2 (private) is not allowed");
      expect(Date.now() - started).toBeLessThan(4_000); // refused, not timed out
      const key = tenant.apiKey;
      const probe = await fetch(`${strict.url}/api/v1/settings/sign-in/providers/inside2/test`, {
        method: "POST",
        headers: { "x-api-key": key },
      });
      const tested = (await probe.json()) as any;
      expect(tested.ok).toBe(false);
      for (const check of tested.checks.slice(0, 3)) expect(check.error).toContain("10.99.1.2 (private)");
    } finally {
      await strict.stop();
    }
  });
});

describe("claims to a reader (subjectOf)", () => {
  const oauth2: SignInProvider = { ...ghProviderShape(), clientSecretEnc: "sealed" };
  const openid: SignInProvider = { id: "corp", label: "Corp", issuer: "https://id.corp.example", clientId: "c", clientSecretEnc: "sealed" };
  const key = Buffer.alloc(32, 7);

  it("takes the defaults, the provider's own claim names, and refuses what cannot name a reader", () => {
    expect(
      subjectOf(
        openid,
        { sub: "u1", name: "Ann", picture: "https://x.example/a.png", email: "ann@corp.example", email_verified: true },
        key,
      ),
    ).toEqual({
      id: "corp:u1",
      name: "Ann",
      avatarUrl: "https://x.example/a.png",
      email: "ann@corp.example",
      method: "oidc",
      provider: "corp",
    });
    // an address not said to be verified, a picture that is not http(s), no name: the id stands in
    expect(subjectOf(openid, { sub: "u2", picture: "data:image/png;base64,AAAA", email: "b@corp.example" }, key)).toMatchObject({
      id: "corp:u2",
      name: "u2",
      avatarUrl: null,
      email: null,
    });
    // GitHub's numeric id, login for a missing name; its address is never taken
    expect(subjectOf(oauth2, { id: 42, login: "octo", name: null, avatar_url: "https://a.example/42", email: "o@x.example" }, key)).toEqual(
      {
        id: "gh:42",
        name: "octo",
        avatarUrl: "https://a.example/42",
        email: null,
        method: "oidc",
        provider: "gh",
      },
    );
    const renamed: SignInProvider = { ...openid, claims: { id: "oid", name: "display_name", avatarUrl: "photo", email: "mail" } };
    expect(
      subjectOf(
        renamed,
        {
          sub: "ignored",
          oid: "abc",
          display_name: "Cy",
          photo: "https://p.example/c",
          mail: "c@corp.example",
          email_verified: true,
        },
        key,
      ),
    ).toMatchObject({ id: "corp:abc", name: "Cy", avatarUrl: "https://p.example/c", email: "c@corp.example" });
    expect(() => subjectOf(openid, { name: "no id" }, key)).toThrow(/no usable id/);
    expect(() => subjectOf(openid, { sub: "bad\nid" }, key)).toThrow(/no usable id/);
    expect(() => subjectOf(openid, { sub: "x".repeat(251) }, key)).toThrow(/longer than a reader id/);
    expect(subjectOf(openid, { sub: "x".repeat(250) }, key).id).toHaveLength(255);
  });

  it("makes a subject that is an address opaque under the tenant's key (contract section 20 as amended)", () => {
    const id = subjectOf(openid, { sub: "Ann@Corp.example" }, key).id;
    expect(id).toMatch(/^corp:[0-9a-f]{32}$/);
    expect(id).not.toContain("corp.example");
    // the same subject under another tenant's key is another id; the same key gives the same id again
    expect(subjectOf(openid, { sub: "Ann@Corp.example" }, Buffer.alloc(32, 8)).id).not.toBe(id);
    expect(subjectOf(openid, { sub: "Ann@Corp.example" }, key).id).toBe(id);
  });
});

function ghProviderShape() {
  return {
    id: "gh",
    label: "GitHub",
    authorizationEndpoint: "https://github.example/login/oauth/authorize",
    tokenEndpoint: "https://github.example/login/oauth/access_token",
    userinfoEndpoint: "https://api.github.example/user",
    clientId: "gh-client",
  };
}
