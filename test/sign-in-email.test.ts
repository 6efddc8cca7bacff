// Hosted sign-in by email link (contract section 20) against a real SMTP server started here
// (smtp-server): the same 202 for known and unknown addresses; the link goes out through the email
// worker (driven pass by pass) and works once; GET of the link never acts; a used, expired (manual
// clock + 15 min), forged or cross-site one is refused with nothing written; a 6th link in the hour
// is not sent; an origin not allowed is 422; a flood from one client address meets 429 on every
// /auth/v1 route. Guests' addresses stay null until their confirmation link is followed. The sign-in
// page: origin checked, methods listed, language from ?lang= or Accept-Language.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import type { ParsedMail } from "mailparser";
import { solveChallenge } from "altcha-lib/v1";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";

const ORIGIN = "https://blog.example";
const clock = manualClock(new Date());
let smtp: TestSmtp;
let server: TestServer;
// the worker's passes send whatever is due in the whole database: a database of this file's own
let own: Awaited<ReturnType<typeof isolatedDatabase>>;

beforeAll(async () => {
  smtp = await startSmtp();
  own = await isolatedDatabase("signinemail");
  server = await startServer(
    { ...own.env, SMTP_URL: smtp.url, EMAIL_FROM: "Comments <comments@service.example>", RETENTION_INTERVAL_MS: "0" },
    { clock },
  );
});
// SMTP servers of a site's own, closed after the server (whose sender keeps pooled connections to them)
const siteServers: TestSmtp[] = [];
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await Promise.all(siteServers.map((s) => s.close()));
  await own?.drop();
});

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const count = async (q: string, values: unknown[]) => Number((await sql<{ n: string }>(q, values))[0]!.n);
const pass = () => server.app.email.runOnce();
const mailTo = (address: string, at: TestSmtp = smtp) =>
  at.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address?.toLowerCase() === address.toLowerCase());
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

async function tenantWith(signIn: Record<string, unknown>, more: Record<string, unknown> = {}): Promise<TestTenant> {
  const t = await createTestTenant(server, "The Daily");
  const r = await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN], signIn, ...more });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return t;
}

/** A request as a browser's fetch would make it: status, headers, text. */
async function http(
  method: string,
  path: string,
  init: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(init.json !== undefined ? { "content-type": "application/json" } : {}),
      ...(init.form !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      ...init.headers,
    },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    ...(init.form !== undefined ? { body: new URLSearchParams(init.form).toString() } : {}),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const ask = (t: TestTenant, email: string, origin = ORIGIN) => http("POST", `/auth/v1/${t.tenantId}/email`, { json: { email, origin } });

/** The link in the newest mail to `address` (after a worker pass). */
async function linkFor(address: string, n = 1): Promise<{ url: string; path: string; token: string; mail: ParsedMail }> {
  const result = await pass();
  expect(result.sent, JSON.stringify(result)).toBeGreaterThanOrEqual(1);
  const mails = mailTo(address);
  expect(mails).toHaveLength(n);
  const mail = mails.at(-1)!;
  const m = /(http:\/\/[^\s]+\/auth\/v1\/[^/\s]+\/email\/([A-Za-z0-9_-]{43}))/.exec(mail.text ?? "");
  expect(m, mail.text).not.toBeNull();
  return { url: m![1]!, path: new URL(m![1]!).pathname, token: m![2]!, mail };
}

const sessionOf = (html: string) => /"token":"(rs_[A-Za-z0-9_-]{43,})"/.exec(html)?.[1] ?? null;
const written = async (tenantId: string) => ({
  readers: await count("SELECT count(*) AS n FROM readers WHERE tenant_id = $1", [tenantId]),
  sessions: await count("SELECT count(*) AS n FROM reader_sessions WHERE tenant_id = $1", [tenantId]),
  used: await count("SELECT count(*) AS n FROM sign_in_tokens WHERE tenant_id = $1 AND used_at IS NOT NULL", [tenantId]),
});

describe("email links", () => {
  it("answers known and unknown addresses alike, mails a link that works once, and GET never acts", async () => {
    const t = await tenantWith({ methods: ["email"] });
    const address = "Ada@Readers.example";
    const unknown = await ask(t, address);
    expect(unknown.status).toBe(202);
    expect(unknown.text).toBe("{}");
    const { url, path, token, mail } = await linkFor(address);
    expect(url.startsWith(`${server.url}/auth/v1/${t.tenantId}/email/`)).toBe(true);
    expect(mail.subject).toBe("Sign in to The Daily");
    expect(mail.html).toContain(`href="${url}"`);
    // the token is stored only as its hash: not in sign_in_tokens, not in the queued message
    const [row] = await sql<{ kind: string; data: Record<string, string>; expiresAt: Date }>(
      `SELECT kind, data, expires_at AS "expiresAt" FROM sign_in_tokens WHERE tenant_id = $1 AND token_hash = $2`,
      [t.tenantId, sha(token)],
    );
    expect(row).toMatchObject({ kind: "email_link", data: { address, origin: ORIGIN, lang: "en" } });
    expect(row!.expiresAt.getTime() - clock.now().getTime()).toBe(15 * 60_000);
    expect(await count("SELECT count(*) AS n FROM email_messages WHERE text_body LIKE $1 OR html_body LIKE $1", [`%${token}%`])).toBe(0);
    expect(await count("SELECT count(*) AS n FROM sign_in_tokens WHERE data::text LIKE $1", [`%${token}%`])).toBe(0);

    // a mail scanner fetching the link changes nothing
    const before = await written(t.tenantId);
    for (let i = 0; i < 2; i++) {
      const page = await http("GET", path);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
      expect(page.text).toContain('<label for="name">Your name</label>');
      expect(page.text).toMatch(/<input [^>]*id="name"[^>]* required/);
      expect(page.text).toContain(">Sign in</button>");
    }
    expect(await written(t.tenantId)).toEqual(before);
    // a new reader must give a name: the form again, the link not spent
    const noName = await http("POST", path, { form: { name: "  " } });
    expect(noName.status).toBe(422);
    expect(noName.text).toContain('role="alert"');
    expect(await written(t.tenantId)).toEqual(before);

    const done = await http("POST", path, { form: { name: "Ada" } });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('"type":"engagement:signed-in"');
    expect(done.text).toContain(JSON.stringify(ORIGIN));
    const session = sessionOf(done.text)!;
    expect(session).toBeTruthy();
    const me = await t.as({ key: t.apiKey, identity: session }).get("/api/v1/me");
    // an opaque id (contract section 20 as amended): `email:` + 32 hex, never the address's plain hash
    const readerId = me.body.id as string;
    expect(readerId).toMatch(/^email:[0-9a-f]{32}$/);
    expect(readerId).not.toBe(`email:${sha(address.toLowerCase()).slice(0, 32)}`);
    expect(me.body).toEqual({ id: readerId, name: "Ada", avatarUrl: null, method: "email" });
    const [reader] = await sql<{ email: string }>("SELECT email FROM readers WHERE tenant_id = $1 AND id = $2", [t.tenantId, readerId]);
    expect(reader!.email).toBe(address);

    // the link works once
    const after = await written(t.tenantId);
    const again = await http("POST", path, { form: { name: "Mallory" } });
    expect(again.status).toBe(410);
    expect((await http("GET", path)).status).toBe(410);
    expect(await written(t.tenantId)).toEqual(after);

    // the address is known now: the same answer, byte for byte
    const known = await ask(t, address);
    const other = await ask(t, "nobody@readers.example");
    for (const r of [known, other]) {
      expect(r.status).toBe(unknown.status);
      expect(r.text).toBe(unknown.text);
      expect(r.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
    }
    // the second link's page knows the reader: the name is prefilled and may be left as it is
    const second = await linkFor(address, 2);
    const page = await http("GET", second.path);
    expect(page.text).toMatch(/<input [^>]*id="name"[^>]*value="Ada"/);
    expect(page.text).not.toMatch(/<input [^>]*id="name"[^>]* required/);
    const kept = await http("POST", second.path, { form: { name: "" } });
    expect(kept.status).toBe(200);
    const me2 = await t.as({ key: t.apiKey, identity: sessionOf(kept.text)! }).get("/api/v1/me");
    expect(me2.body.name).toBe("Ada");
  });

  it("refuses an expired link, a forged one and a cross-site post, writing nothing", async () => {
    const t = await tenantWith({ methods: ["email"] });
    expect((await ask(t, "late@readers.example")).status).toBe(202);
    const late = await linkFor("late@readers.example");
    expect((await ask(t, "csrf@readers.example")).status).toBe(202);
    const csrf = await linkFor("csrf@readers.example");
    const before = await written(t.tenantId);

    // another site's form, as a browser sends it, and as an older one does (Origin only)
    const crossSite = await http("POST", csrf.path, { form: { name: "Eve" }, headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSite.status).toBe(403);
    const foreign = await http("POST", csrf.path, { form: { name: "Eve" }, headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    // forged, malformed, and another tenant's token
    const forged = `/auth/v1/${t.tenantId}/email/${randomBytes(32).toString("base64url")}`;
    expect((await http("GET", forged)).status).toBe(400);
    expect((await http("POST", forged, { form: { name: "Eve" } })).status).toBe(400);
    expect((await http("POST", `/auth/v1/${t.tenantId}/email/not-a-token`, { form: { name: "Eve" } })).status).toBe(400);
    const other = await tenantWith({ methods: ["email"] });
    expect((await http("POST", `/auth/v1/${other.tenantId}/email/${csrf.token}`, { form: { name: "Eve" } })).status).toBe(400);

    clock.advance(15 * 60_000 + 1_000);
    const expired = await http("GET", late.path);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("already used or has expired");
    expect((await http("POST", late.path, { form: { name: "Late" } })).status).toBe(410);
    expect(await written(t.tenantId)).toEqual(before);
    expect(await written(other.tenantId)).toEqual({ readers: 0, sessions: 0, used: 0 });
  });

  it("sends at most 5 links per address per hour, answering the 6th the same, through the site's own SMTP server", async () => {
    const siteSmtp = await startSmtp();
    siteServers.push(siteSmtp);
    const t = await tenantWith({ methods: ["email"] }, { email: { smtpUrl: siteSmtp.url } });
    const answers = [];
    // the limit counts the address, whatever its case
    for (let i = 0; i < 6; i++) answers.push(await ask(t, i % 2 ? "six@readers.example" : "SIX@readers.example"));
    expect(answers.map((a) => [a.status, a.text])).toEqual(Array.from({ length: 6 }, () => [202, "{}"]));
    await pass();
    expect(mailTo("six@readers.example", siteSmtp)).toHaveLength(5);
    expect(mailTo("six@readers.example")).toHaveLength(0);
    expect(await count("SELECT count(*) AS n FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'email_link'", [t.tenantId])).toBe(5);
  });

  it("limits each address on its own", async () => {
    const t = await tenantWith({ methods: ["email"] });
    for (let i = 0; i < 6; i++) expect((await ask(t, "busy@readers.example")).status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'email_link'", [t.tenantId])).toBe(5);
    // another address is not held back by it
    expect((await ask(t, "seven@readers.example")).status).toBe(202);
    await linkFor("seven@readers.example");
  });

  it("refuses an origin the site does not allow, a bad address, and a site without the method", async () => {
    const t = await tenantWith({ methods: ["email"] });
    const bad = await ask(t, "ok@readers.example", "https://elsewhere.example");
    expect(bad.status).toBe(422);
    expect(JSON.parse(bad.text).errors).toEqual([{ path: "origin", message: expect.stringContaining("allowedOrigins") }]);
    const noAddress = await ask(t, "not an address");
    expect(noAddress.status).toBe(422);
    expect(JSON.parse(noAddress.text).errors[0].path).toBe("email");
    expect((await http("POST", `/auth/v1/${t.tenantId}/email`, { json: ["x"] })).status).toBe(422);
    const off = await tenantWith({ methods: ["guest"] });
    const refused = await ask(off, "ok@readers.example");
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).code).toBe("sign_in_method_disabled");
    await pass();
    expect(mailTo("ok@readers.example")).toHaveLength(0);
  });

  it("carries the asking page's relay nonce to the link's finish, which broadcasts only with it", async () => {
    const t = await tenantWith({ methods: ["email"] });
    const relay = "a".repeat(16) + "0123456789abcdef0123456789abcdef";
    const badRelay = await http("POST", `/auth/v1/${t.tenantId}/email`, {
      json: { email: "relay@readers.example", origin: ORIGIN, relay: "short" },
    });
    expect(badRelay.status).toBe(422);
    expect(JSON.parse(badRelay.text).errors).toEqual([{ path: "relay", message: expect.stringContaining("nonce") }]);
    const asked = await http("POST", `/auth/v1/${t.tenantId}/email`, { json: { email: "relay@readers.example", origin: ORIGIN, relay } });
    expect(asked.status).toBe(202);
    const { path, token } = await linkFor("relay@readers.example");
    const [row] = await sql<{ data: Record<string, string> }>("SELECT data FROM sign_in_tokens WHERE tenant_id = $1 AND token_hash = $2", [
      t.tenantId,
      sha(token),
    ]);
    expect(row!.data.relay).toBe(relay);
    const done = await http("POST", path, { form: { name: "Rae" } });
    expect(done.status, done.text).toBe(200);
    // the finish names the popup it is for (the listener forwards only a message carrying its own nonce)
    expect(done.text).toContain(`,${JSON.stringify(ORIGIN)},${JSON.stringify(relay)});`);
    expect(done.text).toContain("relay:r");
    // a link asked for without one broadcasts nothing (no popup can be told it is its own)
    await ask(t, "norelay@readers.example");
    const plain = await linkFor("norelay@readers.example");
    const finish = await http("POST", plain.path, { form: { name: "Nora" } });
    expect(finish.status).toBe(200);
    expect(finish.text).toContain(`,${JSON.stringify(ORIGIN)});`);
    expect(finish.text).toContain("if(!r)return;");
  });

  it("meets a flood from one client address with 429 and Retry-After on every /auth/v1 route", async () => {
    const t = await tenantWith({ methods: ["email"] });
    const statuses: number[] = [];
    // refused ones (an origin not allowed): nothing queued, and they count all the same
    for (let i = 0; i < 70; i++) statuses.push((await ask(t, `flood${i}@readers.example`, "https://flood.example")).status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(60); // SIGN_IN_REQUESTS_PER_ADDRESS
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const limited = await ask(t, "one-more@readers.example");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const page = await http("GET", `/auth/v1/${t.tenantId}/sign-in?origin=${encodeURIComponent(ORIGIN)}`);
    expect(page.status).toBe(429);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await http("GET", `/auth/v1/${t.tenantId}/email/${randomBytes(32).toString("base64url")}`)).status).toBe(429);
  });
});

describe("a reader signed in by email", () => {
  it("is an ordinary reader for reply emails: a reply to their comment is mailed to the address they signed in with", async () => {
    const t = await tenantWith({ methods: ["email"] }, { email: { defaultReplies: "immediate" } });
    const address = "reply-me@readers.example";
    expect((await ask(t, address)).status).toBe(202);
    const { path } = await linkFor(address);
    const session = sessionOf((await http("POST", path, { form: { name: "Rae" } })).text)!;
    expect(session).toBeTruthy();
    const rae = t.as({ key: t.apiKey, identity: session });
    expect((await t.api.put("/api/v1/discussions/email-readers", { title: "On lakes", url: "https://blog.example/lakes" })).status).toBe(
      201,
    );
    const mine = await rae.post("/api/v1/discussions/email-readers/comments", { body: "Lakes are still rivers" });
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    const zed = await t.reader("zed", { name: "Zed", iat: Math.floor(clock.now().getTime() / 1000) });
    const answer = await zed.post("/api/v1/discussions/email-readers/comments", { body: "They are not", parentId: mine.body.id });
    expect(answer.status).toBe(201);
    // immediate replies are coalesced for a couple of minutes before they go
    clock.advance(10 * 60_000);
    await pass();
    const replies = mailTo(address).filter((m) => m.text?.includes("They are not"));
    expect(replies).toHaveLength(1);
    expect(replies[0]!.text).toContain("Hello Rae,");
    expect(replies[0]!.text).toContain(`https://blog.example/lakes#comment-${answer.body.id}`);
  });
});

describe("guests' addresses", () => {
  async function solved(t: TestTenant): Promise<string> {
    const c = JSON.parse((await http("GET", `/auth/v1/${t.tenantId}/challenge`)).text) as Record<string, string> & { maxnumber: number };
    const solution = await solveChallenge(c.challenge!, c.salt!, c.algorithm, c.maxnumber).promise;
    return Buffer.from(JSON.stringify({ ...c, number: solution!.number })).toString("base64");
  }

  it("mails a confirmation link; the address earns email only once it is followed", async () => {
    const t = await tenantWith({ methods: ["guest"] });
    const address = "guest@readers.example";
    const r = await http("POST", `/auth/v1/${t.tenantId}/guest`, {
      json: { name: "Gus", email: address, altcha: await solved(t), lang: "de" },
    });
    expect(r.status, r.text).toBe(201);
    const readerId = JSON.parse(r.text).reader.id as string;
    const emailOf = async () =>
      (await sql<{ email: string | null }>("SELECT email FROM readers WHERE tenant_id = $1 AND id = $2", [t.tenantId, readerId]))[0]!.email;
    expect(await emailOf()).toBeNull();
    const link = await linkFor(address);
    expect(link.mail.subject).toBe("Bestätigen Sie Ihre E-Mail-Adresse für The Daily");
    const [row] = await sql<{ kind: string; expiresAt: Date }>(
      `SELECT kind, expires_at AS "expiresAt" FROM sign_in_tokens WHERE tenant_id = $1 AND token_hash = $2`,
      [t.tenantId, sha(link.token)],
    );
    expect(row!.kind).toBe("email_confirm");
    const page = await http("GET", link.path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('lang="de"');
    expect(page.text).toContain(">Bestätigen</button>");
    expect(await emailOf()).toBeNull();
    const confirmed = await http("POST", link.path, { form: {} });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.text).toContain("E-Mail-Adresse bestätigt");
    expect(await emailOf()).toBe(address);
    expect((await http("POST", link.path, { form: {} })).status).toBe(410);
  });
});

describe("the sign-in page", () => {
  const page = (t: TestTenant, query: string, headers: Record<string, string> = {}) =>
    http("GET", `/auth/v1/${t.tenantId}/sign-in${query}`, { headers });

  it("checks the origin and the methods, lists the enabled ones in order, and speaks the reader's language", async () => {
    const none = await tenantWith({ methods: [] });
    const missing = await page(none, "");
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await page(none, `?origin=${encodeURIComponent("https://elsewhere.example")}`)).status).toBe(400);
    expect((await page(none, `?origin=${encodeURIComponent(ORIGIN)}`)).status).toBe(403);
    expect((await http("GET", `/auth/v1/no-such-site/sign-in?origin=${encodeURIComponent(ORIGIN)}`)).status).toBe(404);

    const t = await tenantWith({
      methods: ["oidc", "guest", "email"],
      guest: { requireEmail: true, moderation: "pre" },
      // loopback endpoints (ALLOW_HTTP_WEBHOOKS=1 in tests): nothing is fetched, the page only links to the route
      oidc: [
        {
          id: "gh",
          label: "GitHub",
          authorizationEndpoint: "http://127.0.0.1:9/authorize",
          tokenEndpoint: "http://127.0.0.1:9/token",
          userinfoEndpoint: "http://127.0.0.1:9/user",
          clientId: "c",
          clientSecret: "s",
        },
      ],
    });
    const ok = await page(t, `?origin=${encodeURIComponent(ORIGIN)}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const order = ["Email me a link", "Continue as guest", "Sign in with GitHub"].map((s) => ok.text.indexOf(s));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(ok.text).toContain(`href="/auth/v1/${t.tenantId}/oidc/gh?origin=${encodeURIComponent(ORIGIN)}&amp;lang=en"`);
    expect(ok.text).toContain('<label for="guest-email">Email</label>');
    expect(ok.text).toContain(`challengeurl="/auth/v1/${t.tenantId}/challenge"`);
    // the widget's files from our own origin
    for (const file of ["altcha.js", "worker.js", "altcha.css", "i18n/de.js"]) {
      expect((await http("GET", `/auth/v1/static/altcha/${file}`)).status, file).toBe(200);
    }
    const de = await page(t, `?origin=${encodeURIComponent(ORIGIN)}`, { "accept-language": "fr;q=0.5, de-AT, en;q=0.8" });
    expect(de.text).toContain('<html lang="de"');
    expect(de.text).toContain("Link per E-Mail senden");
    const ja = await page(t, `?origin=${encodeURIComponent(ORIGIN)}&lang=ja`, { "accept-language": "de" });
    expect(ja.text).toContain('<html lang="ja"');
  });
});
