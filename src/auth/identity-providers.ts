// Reader tokens from a tenant's own identity providers (settings `identity.providers`, contract
// section 13): an ID or access token that the site's IdP (Auth0, Okta, Keycloak, Cognito, Clerk,
// Firebase, any OIDC server) signed, accepted in X-Service-Identity like the tenant's HS256 assertion.
//
// - Keys: jose's remote JWKS (`createRemoteJWKSet`), one per JWKS URL on this instance (each instance
//   caches on its own; keys are public, so tenants naming the same IdP share the set). Fetched when
//   first needed, kept `cacheMaxAgeMs` (10 min), fetched again on an unknown `kid` at most once per
//   `cooldownMs` (30 s), each fetch within `timeoutMs` (3 s). An IdP that is down never blocks a token
//   whose key is cached: when a refresh fails, the keys last fetched still verify.
// - Discovery: a provider named by `issuer` is looked up at `<issuer>/.well-known/openid-configuration`
//   (its `issuer` must be the one configured; its `jwks_uri` is used), cached like the keys.
// - Every fetch goes through the injected `fetch` (src/runtime.ts hands in the webhooks' HTTP client:
//   the same SSRF guard and allow-list, no redirects, a bounded answer).
// - The token: one of the provider's `algorithms` (RS256, PS256, ES256, EdDSA; never `none`, never
//   HS* — a public key is not an HMAC secret), `iss` (the provider's issuer when configured), `aud`
//   (the provider's audience), `exp` required, `nbf` honoured, `iat` at most 60 s ahead, a lifetime
//   (`exp − iat`, or `exp − now` without `iat`) of at most the provider's `maxTokenLifetimeSeconds`
//   (24 h by default), judged on the app's clock (contract sections 9 and 22).
// - The token belongs to the provider whose keys verified it: a token whose `iss` is a configured
//   provider's issuer is verified by that provider alone; a provider named by its key set alone takes
//   the others, and its readers are namespaced by the key set's URL (`<jwksUri>#<sub>`), so a key set
//   cannot speak for another provider's issuer. A provider's readers: `<iss>#<sub>`. Name, picture and
//   email come from the provider's claim mapping.
// Every refusal is 401 invalid_identity with a reason; nothing here answers 5xx or waits past the
// fetch timeout.
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type FetchImplementation,
  type JWTPayload,
  type RemoteJWKSet,
} from "jose";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { isHttpUrl } from "../lib/http-url.js";
import { DEFAULT_TOKEN_LIFETIME_SECONDS, PROVIDER_ALGORITHMS, type IdentityProviderSettings } from "../tenancy/settings/identity.js";
import type { ReaderIdentity } from "./identity.js";
import { CONTROL_CHARS as CONTROL, READER_NAME_MAX } from "../lib/reader-name.js";

export { PROVIDER_ALGORITHMS, type IdentityProviderSettings };
export type ProviderAlgorithm = IdentityProviderSettings["algorithms"][number];

/** A reader from a provider's token: the namespaced id, and what the claims mapped to. */
export interface ProviderIdentity extends ReaderIdentity {
  email: string | null;
  emailVerified: boolean;
  issuer: string;
  subject: string;
  exp: number;
}

export interface IdentityProviderOptions {
  /** fetches discovery documents and key sets (jose's FetchImplementation): the guarded client */
  fetch: FetchImplementation;
  clock: Clock;
  timeoutMs?: number;
  cooldownMs?: number;
  cacheMaxAgeMs?: number;
}

export interface IdentityProviders {
  /** A provider's token → the reader, or 401 invalid_identity saying why. */
  verify(token: string, providers: readonly IdentityProviderSettings[]): Promise<ProviderIdentity>;
}

/** Reader ids are at most 255 characters (contract section 3), the namespace included. */
const MAX_READER_ID = 255;

/** `<iss>#<sub>` (or `<jwksUri>#<sub>`): a provider's reader, apart from the readers of the tenant's assertions and other providers. */
export const providerReaderId = (namespace: string, subject: string): string => `${namespace}#${subject}`;

/** How far ahead of the clock a token's `iat` may be (contract section 9). */
const MAX_IAT_SKEW_SECONDS = 60;

/** Whether a token is for the providers (an asymmetric `alg`) rather than an HS256 assertion. */
export function isProviderToken(token: string): boolean {
  try {
    const { alg } = decodeProtectedHeader(token);
    return typeof alg === "string" && !alg.startsWith("HS") && alg !== "none";
  } catch {
    return false;
  }
}

const refuse = (reason: string) => errors.invalidIdentity(`The identity token is not accepted: ${reason}.`);

interface Discovered {
  jwksUri: string;
  at: number;
}

export function createIdentityProviders(options: IdentityProviderOptions): IdentityProviders {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const cacheMaxAgeMs = options.cacheMaxAgeMs ?? 600_000;
  const keySets = new Map<string, RemoteJWKSet>();
  const discovered = new Map<string, Discovered>();

  function keySet(jwksUri: string): RemoteJWKSet {
    let set = keySets.get(jwksUri);
    if (!set) {
      set = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: timeoutMs,
        cooldownDuration: cooldownMs,
        cacheMaxAge: cacheMaxAgeMs,
        [customFetch]: options.fetch,
      });
      keySets.set(jwksUri, set);
    }
    return set;
  }

  async function discover(issuer: string): Promise<string> {
    const hit = discovered.get(issuer);
    if (hit && Date.now() - hit.at < cacheMaxAgeMs) return hit.jwksUri;
    const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    try {
      const res = await options.fetch(url, {
        method: "GET",
        redirect: "manual",
        headers: new Headers({ accept: "application/json" }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.status !== 200) throw new Error(`it answered HTTP ${res.status}`);
      const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== issuer) throw new Error(`its issuer is ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(issuer)}`);
      if (!isHttpUrl(doc.jwks_uri)) throw new Error("it names no http(s) jwks_uri");
      discovered.set(issuer, { jwksUri: doc.jwks_uri, at: Date.now() });
      return doc.jwks_uri;
    } catch (err) {
      // the IdP is down, but what it said before still holds
      if (hit) return hit.jwksUri;
      throw refuse(`the provider's discovery document (${url}) could not be read: ${messageOf(err)}`);
    }
  }

  /** The token verified with a provider's keys; a failed refresh falls back to the keys fetched before. */
  async function verifyWith(token: string, provider: IdentityProviderSettings, jwksUri: string): Promise<JWTPayload> {
    const set = keySet(jwksUri);
    const verifyOptions = {
      algorithms: provider.algorithms,
      audience: provider.audience,
      ...(provider.issuer ? { issuer: provider.issuer } : {}),
      requiredClaims: ["exp", "sub", "iss"],
      currentDate: options.clock.now(),
    };
    try {
      return (await jwtVerify(token, set, verifyOptions)).payload;
    } catch (err) {
      const cached = set.jwks();
      if (cached && isFetchFailure(err)) return (await jwtVerify(token, createLocalJWKSet(cached), verifyOptions)).payload;
      throw err;
    }
  }

  return {
    async verify(token, providers) {
      if (providers.length === 0) throw refuse("the tenant has no identity provider for a token signed with a public key");
      let header;
      let claims: JWTPayload;
      try {
        header = decodeProtectedHeader(token);
        claims = decodeJwt(token);
      } catch {
        throw refuse("it is not a JWT");
      }
      if (typeof claims.iss !== "string") throw refuse("it has no 'iss' claim");
      const iss = claims.iss;
      // a token naming a configured provider's issuer is that provider's alone; a provider named by its
      // key set alone takes what those keys signed for any other issuer
      const byIssuer = providers.filter((p) => p.issuer === iss);
      const candidates = byIssuer.length > 0 ? byIssuer : providers.filter((p) => !p.issuer);
      if (candidates.length === 0) throw refuse(`no identity provider of the tenant has the issuer ${JSON.stringify(iss)}`);
      let lastError: unknown;
      for (const provider of candidates) {
        if (!provider.algorithms.includes(header.alg as ProviderAlgorithm)) {
          lastError = refuse(
            `its algorithm ${JSON.stringify(header.alg)} is not one the provider allows (${provider.algorithms.join(", ")})`,
          );
          continue;
        }
        try {
          const jwksUri = provider.jwksUri ?? (await discover(provider.issuer!));
          const payload = await verifyWith(token, provider, jwksUri);
          checkLifetime(payload, provider, Math.floor(options.clock.now().getTime() / 1000));
          return readerOf(payload, provider, provider.issuer ?? jwksUri);
        } catch (err) {
          lastError = err;
        }
      }
      throw translate(lastError);
    },
  };
}

/** `iat` at most 60 s ahead; `exp − iat` (or `exp − now`) within the provider's lifetime cap. */
function checkLifetime(payload: JWTPayload, provider: IdentityProviderSettings, now: number): void {
  const { iat, exp } = payload;
  if (iat !== undefined && iat > now + MAX_IAT_SKEW_SECONDS) throw refuse(`its 'iat' is more than ${MAX_IAT_SKEW_SECONDS} s in the future`);
  const cap = provider.maxTokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
  const lifetime = exp! - (iat ?? now);
  if (lifetime > cap)
    throw refuse(`it lives ${lifetime} s, longer than the ${cap} s the provider allows ('exp' − ${iat === undefined ? "now" : "'iat'"})`);
}

function readerOf(payload: JWTPayload, provider: IdentityProviderSettings, namespace: string): ProviderIdentity {
  const claim = (name: string): unknown => (payload as Record<string, unknown>)[name];
  const sub = payload.sub!;
  const iss = payload.iss!;
  if (sub.length === 0 || CONTROL.test(sub)) throw refuse("its 'sub' is empty or holds control characters");
  const id = providerReaderId(namespace, sub);
  if (id.length > MAX_READER_ID) throw refuse(`its issuer (or key set) and 'sub' together exceed ${MAX_READER_ID} characters`);
  const rawName = claim(provider.claims.name);
  const name =
    typeof rawName === "string" && rawName.trim() && !CONTROL.test(rawName)
      ? rawName.slice(0, READER_NAME_MAX)
      : sub.slice(0, READER_NAME_MAX);
  const picture = claim(provider.claims.picture);
  const email = claim(provider.claims.email);
  return {
    id,
    name,
    avatarUrl: isHttpUrl(picture) ? picture : null,
    email: typeof email === "string" ? email : null,
    emailVerified: claim("email_verified") === true,
    issuer: iss,
    subject: sub,
    exp: payload.exp!,
  };
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** a key set that could not be fetched (down, slow, refused by the SSRF guard, not a JWKS) */
const isFetchFailure = (err: unknown): boolean =>
  err instanceof joseErrors.JWKSTimeout ||
  err instanceof joseErrors.JWKSInvalid ||
  (err instanceof Error && !(err instanceof joseErrors.JOSEError));

/** jose's and fetch's failures as 401 invalid_identity with the reason a tenant can act on */
function translate(err: unknown): Error {
  if (err instanceof Error && "status" in err && (err as { status?: unknown }).status === 401) return err;
  if (err instanceof joseErrors.JWTExpired) return refuse("it has expired");
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return refuse(`its '${err.claim}' claim ${err.reason === "check_failed" ? "does not match" : "is missing or invalid"}: ${err.message}`);
  if (err instanceof joseErrors.JWKSNoMatchingKey) return refuse("no key of the provider's key set matches its 'kid'");
  if (err instanceof joseErrors.JWKSTimeout) return refuse("the provider's key set did not answer in time");
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return refuse("its signature does not verify");
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return refuse("its algorithm is not allowed");
  if (err instanceof joseErrors.JOSEError) return refuse(err.message);
  return refuse(`the provider's key set could not be fetched: ${messageOf(err)}`);
}
