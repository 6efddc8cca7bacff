// Tokens of a tenant's identity providers (src/auth/identity-providers.ts) against a real OpenID
// provider started here (test/support/oidc-provider.ts: oidc-provider with its own discovery and
// JWKS): what is accepted, every refusal a 401 invalid_identity with its reason, key rotation at the
// IdP picked up without a restart, and an IdP that goes down.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64url, SignJWT } from "jose";
import { createIdentityProviders, isProviderToken, type IdentityProviderSettings } from "../src/auth/identity-providers.js";
import { manualClock, systemClock } from "../src/lib/clock.js";
import { AppError } from "../src/lib/errors.js";
import { startTestIdp, type TestIdp } from "./support/oidc-provider.js";
import { startServer, type TestServer } from "./support/server.js";
import { client } from "./support/client.js";
import { createTestTenant, signIdentity } from "./support/fixtures.js";

let idp: TestIdp;
let other: TestIdp;
const claims = { name: "name", picture: "picture", email: "email" };
const byIssuer = (i: TestIdp, extra: Partial<IdentityProviderSettings> = {}): IdentityProviderSettings => ({
  issuer: i.issuer,
  audience: ["engagement-test"],
  algorithms: ["RS256", "PS256", "ES256", "EdDSA"],
  claims,
  ...extra,
});
const fetchImpl = (url: string, init: Parameters<typeof fetch>[1]) => fetch(url, init);

beforeAll(async () => {
  [idp, other] = await Promise.all([startTestIdp(), startTestIdp({ alg: "ES256" })]);
});
afterAll(async () => {
  await Promise.all([idp?.close(), other?.close()]);
});

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).status).toBe(401);
  expect((err as AppError).code).toBe("invalid_identity");
  return (err as AppError).detail;
}

describe("identity providers", () => {
  it("accepts a token of the provider found by OIDC discovery: the reader is namespaced by issuer", async () => {
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock });
    const token = await idp.token({
      sub: "u-1",
      name: "Ada",
      picture: "https://img.example/ada.png",
      email: "ada@example.com",
      email_verified: true,
    });
    expect(isProviderToken(token)).toBe(true);
    const reader = await providers.verify(token, [byIssuer(idp)]);
    expect(reader).toMatchObject({
      id: `${idp.issuer}#u-1`,
      name: "Ada",
      avatarUrl: "https://img.example/ada.png",
      email: "ada@example.com",
      emailVerified: true,
      issuer: idp.issuer,
      subject: "u-1",
    });
    // a provider named by its key set alone, with its own claim names
    const viaJwks = await providers.verify(await other.token({ sub: "u-1", nickname: "Bea" }), [
      { jwksUri: other.jwksUri, audience: ["engagement-test"], algorithms: ["ES256"], claims: { ...claims, name: "nickname" } },
    ]);
    // namespaced by its key set's URL: the keys speak for themselves, not for the issuer they name
    expect(viaJwks).toMatchObject({ id: `${other.jwksUri}#u-1`, name: "Bea", avatarUrl: null, email: null, emailVerified: false });
    expect(viaJwks.id).not.toBe(reader.id); // the same sub at two providers: two readers
  });

  it("refuses a wrong audience, a wrong issuer, an expired token, alg none and HS256 signed with the public key", async () => {
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock });
    const mine = [byIssuer(idp)];
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { audience: "someone-else" }), mine))).toMatch(/'aud'/);
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { issuer: "https://evil.example" }), mine))).toMatch(/issuer/);
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { expiresIn: "-1m" }), mine))).toMatch(/expired/);
    const none = `${base64url.encode(JSON.stringify({ alg: "none" }))}.${base64url.encode(JSON.stringify({ sub: "u", iss: idp.issuer, aud: "engagement-test", exp: 9e9 }))}.`;
    expect(isProviderToken(none)).toBe(false); // never taken for a provider's token
    expect(await refusal(providers.verify(none, mine))).toMatch(/algorithm/);
    // the classic confusion: the provider's public key used as an HMAC secret
    const jwks = (await (await fetch(idp.jwksUri)).json()) as { keys: Record<string, unknown>[] };
    const hs = await new SignJWT({ sub: "u" })
      .setProtectedHeader({ alg: "HS256", kid: jwks.keys[0]!.kid as string })
      .setIssuer(idp.issuer)
      .setAudience("engagement-test")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(jwks.keys[0])));
    expect(isProviderToken(hs)).toBe(false);
    expect(await refusal(providers.verify(hs, mine))).toMatch(/algorithm/);
    // signed by another provider's key while claiming this issuer
    const forged = await other.token({ sub: "u" }, { issuer: idp.issuer });
    expect(await refusal(providers.verify(forged, mine))).toMatch(/kid|signature/);
    // a provider the tenant did not configure
    expect(await refusal(providers.verify(await other.token({ sub: "u" }), mine))).toMatch(/no identity provider/);
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }), []))).toMatch(/no identity provider/);
    expect(await refusal(providers.verify("not.a.jwt", mine))).toMatch(/not a JWT/);
    // an algorithm the provider does not allow
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }), [byIssuer(idp, { algorithms: ["ES256"] })]))).toMatch(/algorithm/);
  });

  it("refuses a token issued in the future or living too long: iat ahead, exp far off, no iat with a far exp", async () => {
    const clock = manualClock(new Date());
    const providers = createIdentityProviders({ fetch: fetchImpl, clock });
    const mine = [byIssuer(idp)];
    const now = Math.floor(clock.now().getTime() / 1000);
    const tenYears = 10 * 365 * 86_400;
    expect(
      await refusal(providers.verify(await idp.token({ sub: "u" }, { issuedAt: now + tenYears, expiresIn: now + tenYears + 60 }), mine)),
    ).toMatch(/'iat' is more than 60 s in the future/);
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { issuedAt: now + 61, expiresIn: now + 600 }), mine))).toMatch(
      /'iat'/,
    );
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { issuedAt: now, expiresIn: now + tenYears }), mine))).toMatch(
      /longer than the 86400 s/,
    );
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { issuedAt: null, expiresIn: now + tenYears }), mine))).toMatch(
      /longer than the 86400 s .*now/,
    );
    // within the bounds: clock skew of under a minute, a day's lifetime
    expect((await providers.verify(await idp.token({ sub: "u" }, { issuedAt: now + 50, expiresIn: now + 600 }), mine)).id).toBe(
      `${idp.issuer}#u`,
    );
    expect((await providers.verify(await idp.token({ sub: "u" }, { issuedAt: now, expiresIn: now + 86_400 }), mine)).subject).toBe("u");
    expect((await providers.verify(await idp.token({ sub: "u" }, { issuedAt: null, expiresIn: now + 3_600 }), mine)).subject).toBe("u");
    // the provider's own cap
    const short = [byIssuer(idp, { maxTokenLifetimeSeconds: 600 })];
    expect(await refusal(providers.verify(await idp.token({ sub: "u" }, { issuedAt: now, expiresIn: now + 3_600 }), short))).toMatch(
      /600 s/,
    );
    const long = [byIssuer(idp, { maxTokenLifetimeSeconds: 7 * 86_400 })];
    expect((await providers.verify(await idp.token({ sub: "u" }, { issuedAt: now, expiresIn: now + 3 * 86_400 }), long)).subject).toBe("u");
  });

  it("a token belongs to the provider whose keys verified it: a bare key set cannot speak for another provider's issuer", async () => {
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock });
    // X named by its issuer (and key set), B by its key set alone
    const both: IdentityProviderSettings[] = [
      byIssuer(idp, { jwksUri: idp.jwksUri }),
      { jwksUri: other.jwksUri, audience: ["engagement-test"], algorithms: ["ES256"], claims },
    ];
    // signed with B's key, claiming X's issuer and X's reader
    const forged = await other.token({ sub: "victim" }, { issuer: idp.issuer });
    expect(await refusal(providers.verify(forged, both))).toMatch(/kid|signature/);
    // B's own tokens: B's readers, namespaced by B's key set whatever issuer they name
    const own = await providers.verify(await other.token({ sub: "victim" }, { issuer: "https://b.example" }), both);
    expect(own.id).toBe(`${other.jwksUri}#victim`);
    expect(own.id).not.toBe(`${idp.issuer}#victim`);
    // X's tokens still X's
    expect((await providers.verify(await idp.token({ sub: "victim" }), both)).id).toBe(`${idp.issuer}#victim`);
  });

  it("picks up a key rotated at the IdP without a restart, and an unknown kid refetches nothing within the cooldown", async () => {
    const idp2 = await startTestIdp();
    try {
      const mine = [byIssuer(idp2)];
      // past its cooldown (none here; 30 s by default), an unknown kid fetches the set again, once
      const rotating = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, cooldownMs: 0 });
      await rotating.verify(await idp2.token({ sub: "a" }), mine);
      expect(idp2.jwksFetches).toBe(1);
      await rotating.verify(await idp2.token({ sub: "a" }), mine);
      expect(idp2.jwksFetches).toBe(1); // cached
      const kid = await idp2.rotate();
      expect((await rotating.verify(await idp2.token({ sub: "b" }, { kid }), mine)).id).toBe(`${idp2.issuer}#b`);
      expect(idp2.jwksFetches).toBe(2);
      // within the cooldown of its last fetch, a kid the IdP never published is refused without a fetch
      const cooling = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, cooldownMs: 600_000 });
      await cooling.verify(await idp2.token({ sub: "a" }), mine);
      expect(idp2.jwksFetches).toBe(3);
      const stranger = await startTestIdp();
      const unknownKid = await stranger.token({ sub: "x" }, { issuer: idp2.issuer });
      await stranger.close();
      expect(await refusal(cooling.verify(unknownKid, mine))).toMatch(/kid/);
      await refusal(cooling.verify(unknownKid, mine));
      expect(idp2.jwksFetches).toBe(3);
    } finally {
      await idp2.close();
    }
  });

  it("an IdP that is down blocks no token whose key is cached; one whose key is unknown gets 401 with a reason", async () => {
    // the cache is past its age at every use: each verification tries to refresh
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, cacheMaxAgeMs: 0, cooldownMs: 0, timeoutMs: 500 });
    const idp3 = await startTestIdp();
    try {
      const mine = [byIssuer(idp3)];
      await providers.verify(await idp3.token({ sub: "a" }), mine);
      const later = await idp3.token({ sub: "a" });
      idp3.setDown(true);
      expect((await providers.verify(later, mine)).id).toBe(`${idp3.issuer}#a`);
      // a provider never reached: a 401 naming what failed, not a 5xx and not a hang
      const fresh = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, timeoutMs: 500 });
      const started = Date.now();
      expect(await refusal(fresh.verify(later, mine))).toMatch(/discovery document/);
      expect(Date.now() - started).toBeLessThan(5_000);
      const viaJwks = await refusal(fresh.verify(later, [{ ...byIssuer(idp3), issuer: undefined, jwksUri: idp3.jwksUri }]));
      expect(viaJwks).toMatch(/key set/);
    } finally {
      await idp3.close();
    }
  });

  it("a provider's EdDSA and PS256 keys verify as well", async () => {
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, cooldownMs: 0 });
    const ed = await startTestIdp({ alg: "EdDSA" });
    try {
      expect((await providers.verify(await ed.token({ sub: "e" }), [byIssuer(ed)])).subject).toBe("e");
      const kid = await ed.rotate({ alg: "PS256" });
      expect((await providers.verify(await ed.token({ sub: "p" }, { kid }), [byIssuer(ed)])).subject).toBe("p");
    } finally {
      await ed.close();
    }
  });
});

describe("identity providers through the API", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { identityProviders: { cooldownMs: 0 } });
  });
  afterAll(() => server?.stop());

  it("a page signed in at the site's IdP posts with a publishable key, no backend of the tenant's in between", async () => {
    const t = await createTestTenant(server);
    const origin = "https://news.example";
    const set = await t.api.patch("/api/v1/settings", {
      allowedOrigins: [origin],
      identity: { providers: [{ issuer: idp.issuer, audience: "engagement-test" }] },
    });
    expect(set.status).toBe(200);
    expect(set.body.identity.providers).toEqual([
      { issuer: idp.issuer, audience: ["engagement-test"], algorithms: ["RS256", "PS256", "ES256", "EdDSA"], claims },
    ]);
    expect((await t.api.put("/api/v1/discussions/idp-1", { title: "IdP" })).status).toBe(201);
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const browser = client(server.url, { key: pk, headers: { origin } });
    const token = await idp.token({ sub: "reader-7", name: "Grace", picture: "https://img.example/g.png" });
    const posted = await browser.post("/api/v1/discussions/idp-1/comments", { body: "signed in at the IdP" }, { identity: token });
    expect(posted.status).toBe(201);
    expect(posted.body.author).toMatchObject({ id: `${idp.issuer}#reader-7`, name: "Grace", avatarUrl: "https://img.example/g.png" });
    // the same reader from the backend with an API key, and the tenant's own HS256 assertion still works
    const again = await t.api.post("/api/v1/discussions/idp-1/comments", { body: "again" }, { identity: token });
    expect(again.body.author.id).toBe(`${idp.issuer}#reader-7`);
    const hs = await signIdentity(t.identitySecret, "reader-7", { name: "Local Grace" });
    const local = await t.api.post("/api/v1/discussions/idp-1/comments", { body: "via the backend" }, { identity: hs });
    expect(local.status).toBe(201);
    expect(local.body.author.id).toBe("reader-7"); // not the IdP's reader: namespaces apart
    // the author edits with a fresh token of the same IdP
    const edited = await browser.patch(
      `/api/v1/comments/${posted.body.id}`,
      { body: "edited" },
      { identity: await idp.token({ sub: "reader-7" }) },
    );
    expect(edited.status).toBe(200);
  });

  it("refuses with 401 invalid_identity: another tenant's provider, a wrong audience, an expired token, HS256 with the public key", async () => {
    const a = await createTestTenant(server);
    const b = await createTestTenant(server);
    expect(
      (await a.api.patch("/api/v1/settings", { identity: { providers: [{ issuer: idp.issuer, audience: "engagement-test" }] } })).status,
    ).toBe(200);
    expect(
      (await b.api.patch("/api/v1/settings", { identity: { providers: [{ jwksUri: other.jwksUri, audience: ["engagement-test"] }] } }))
        .status,
    ).toBe(200);
    const post = (tenant: typeof a, identity: string) => tenant.api.post("/api/v1/discussions/idp-2/comments", { body: "x" }, { identity });
    const cases: [typeof a, string, RegExp][] = [
      [a, await other.token({ sub: "u" }), /no identity provider/],
      [b, await idp.token({ sub: "u" }), /kid|signature/],
      [a, await idp.token({ sub: "u" }, { audience: "another-app" }), /'aud'/],
      [a, await idp.token({ sub: "u" }, { expiresIn: "-5m" }), /expired/],
    ];
    const jwk = ((await (await fetch(idp.jwksUri)).json()) as { keys: object[] }).keys[0]!;
    const hs = await new SignJWT({ sub: "u", name: "U" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(idp.issuer)
      .setAudience("engagement-test")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(jwk)));
    cases.push([a, hs, /signature/]);
    for (const [tenant, identity, reason] of cases) {
      const r = await post(tenant, identity);
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      expect(r.body.code).toBe("invalid_identity");
      expect(r.body.detail).toMatch(reason);
    }
    // b's own reader goes through
    expect((await post(b, await other.token({ sub: "u", name: "U" }))).status).toBe(201);
  });

  it("validates providers in settings: an issuer or a jwksUri, asymmetric algorithms only, at most 5", async () => {
    const t = await createTestTenant(server);
    const bad = [
      { audience: "x" },
      { issuer: idp.issuer, audience: "x", algorithms: ["HS256"] },
      { issuer: idp.issuer, audience: "x", algorithms: ["none"] },
      { issuer: "not a url", audience: "x" },
      { issuer: idp.issuer },
    ];
    for (const provider of bad) {
      const r = await t.api.patch("/api/v1/settings", { identity: { providers: [provider] } });
      expect(r.status, JSON.stringify(provider)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    const six = Array.from({ length: 6 }, (_, i) => ({ jwksUri: `https://idp${i}.example/jwks`, audience: "x" }));
    expect((await t.api.patch("/api/v1/settings", { identity: { providers: six } })).status).toBe(422);
    expect((await t.api.patch("/api/v1/settings", { identity: { providers: six.slice(0, 5) } })).status).toBe(200);
    expect((await t.api.patch("/api/v1/settings", { identity: { providers: [] } })).body.identity.providers).toEqual([]);
  });
});

describe("identity secret rotation with overlap", () => {
  const clock = manualClock(new Date());
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { clock });
  });
  afterAll(() => server?.stop());

  it("both secrets verify for identity.secretOverlapHours; a kid header picks one; then only the new one", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.put("/api/v1/discussions/rot-1", {})).status).toBe(201);
    const nowSec = () => Math.floor(clock.now().getTime() / 1000);
    const sign = (secret: string, kid?: string) =>
      new SignJWT({ name: "Rita" })
        .setProtectedHeader({ alg: "HS256", ...(kid ? { kid } : {}) })
        .setSubject("rita")
        .setIssuedAt(nowSec())
        .setExpirationTime(nowSec() + 600)
        .sign(new TextEncoder().encode(secret));
    const post = async (identity: string) => (await t.api.post("/api/v1/discussions/rot-1/comments", { body: "hi" }, { identity })).status;

    const r = await t.api.post("/api/v1/settings/identity-secret/rotate");
    expect(r.status).toBe(200);
    const { identitySecret, kid } = r.body as { identitySecret: string; kid: string };
    expect(kid).toMatch(/^[0-9a-f]{16}$/);
    expect(Date.parse(r.body.previousSecretExpiresAt) - clock.now().getTime()).toBe(24 * 3_600_000);
    const oldKid = createHash("sha256").update(t.identitySecret).digest("hex").slice(0, 16);

    // during the overlap: old and new, with or without a kid
    expect(await post(await sign(t.identitySecret))).toBe(201);
    expect(await post(await sign(identitySecret))).toBe(201);
    expect(await post(await sign(identitySecret, kid))).toBe(201);
    expect(await post(await sign(t.identitySecret, oldKid))).toBe(201);
    // a kid picks its secret: signed with the new one but naming the old one's kid, refused
    expect(await post(await sign(identitySecret, oldKid))).toBe(401);
    const unknown = await t.api.post(
      "/api/v1/discussions/rot-1/comments",
      { body: "hi" },
      { identity: await sign(identitySecret, "nope") },
    );
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toMatch(/kid "nope"/);

    // past the overlap: only the new secret
    clock.advance(24 * 3_600_000 + 1_000);
    expect(await post(await sign(t.identitySecret))).toBe(401);
    expect(await post(await sign(t.identitySecret, oldKid))).toBe(401);
    expect(await post(await sign(identitySecret))).toBe(201);
  });
});
