// Tokens of a tenant's identity providers (src/auth/identity-providers.ts) against a real OpenID
// provider started here (test/support/oidc-provider.ts: oidc-provider with its own discovery and
// JWKS): what is accepted, every refusal a 401 invalid_identity with its reason, key rotation at the
// IdP picked up without a restart, and an IdP that goes down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64url, SignJWT } from "jose";
import { createIdentityProviders, isProviderToken, type IdentityProviderSettings } from "../src/auth/identity-providers.js";
import { systemClock } from "../src/lib/clock.js";
import { AppError } from "../src/lib/errors.js";
import { startTestIdp, type TestIdp } from "./support/oidc-provider.js";

let idp: TestIdp;
let other: TestIdp;
const claims = { name: "name", picture: "picture", email: "email" };
const byIssuer = (i: TestIdp, extra: Partial<IdentityProviderSettings> = {}): IdentityProviderSettings => ({
  issuer: i.issuer,
  audience: "engagement-test",
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
      { jwksUri: other.jwksUri, audience: "engagement-test", algorithms: ["ES256"], claims: { ...claims, name: "nickname" } },
    ]);
    expect(viaJwks).toMatchObject({ id: `${other.issuer}#u-1`, name: "Bea", avatarUrl: null, email: null, emailVerified: false });
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

  it("picks up a key rotated at the IdP without a restart, refetching on an unknown kid at most once per cooldown", async () => {
    // jose's cooldown counts from the last fetch: a short one here, where the default is 30 s
    const cooldownMs = 300;
    const providers = createIdentityProviders({ fetch: fetchImpl, clock: systemClock, cooldownMs });
    const idp2 = await startTestIdp();
    try {
      const mine = [byIssuer(idp2)];
      await providers.verify(await idp2.token({ sub: "a" }), mine);
      expect(idp2.jwksFetches).toBe(1);
      await providers.verify(await idp2.token({ sub: "a" }), mine);
      expect(idp2.jwksFetches).toBe(1); // cached
      const kid = await idp2.rotate();
      await new Promise((resolve) => setTimeout(resolve, cooldownMs + 50));
      expect((await providers.verify(await idp2.token({ sub: "b" }, { kid }), mine)).id).toBe(`${idp2.issuer}#b`);
      expect(idp2.jwksFetches).toBe(2); // the unknown kid fetched the set again, once
      // a kid the IdP never published: refused, and within the cooldown the set is not fetched again
      const stranger = await startTestIdp();
      const unknownKid = await stranger.token({ sub: "x" }, { issuer: idp2.issuer });
      await stranger.close();
      const detail = await refusal(providers.verify(unknownKid, mine));
      expect(detail).toMatch(/kid/);
      await refusal(providers.verify(unknownKid, mine));
      expect(idp2.jwksFetches).toBe(2); // both within the cooldown of the last fetch
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
