// OpenID Connect and OAuth 2 sign-in of the hosted pages (contract section 20), with the service as a
// confidential client of the tenant's provider (settings signIn.oidc). openid-client (v6) does the
// protocol — the authorization URL, PKCE (S256), the code exchange with the client secret, the ID
// token's checks (issuer, audience, expiry, `nonce`, its signature against the provider's key set)
// and userinfo — so nothing here is a hand-written OAuth flow. What is ours:
//
// - start (`GET /auth/v1/{tenantId}/oidc/{providerId}?origin=`): a PKCE verifier, a `state` and (for
//   OpenID Connect) a `nonce`, kept in sign_in_tokens (kind `oidc_state`, only the state's SHA-256 as
//   the key, with the verifier, nonce, page origin, provider id, redirect URI and the sign-in's
//   language, one of strings.ts's ten, for the callback's pages; 10 minutes); then a 302 to the
//   provider's authorization endpoint with redirect_uri
//   `<PUBLIC_URL>/auth/v1/{tenantId}/callback/{providerId}`.
// - the start also binds the sign-in to the browser (../browser-binding.ts): a random value in an
//   HttpOnly cookie, its SHA-256 kept with the state.
// - callback: the state is spent (an UPDATE that only an unused, unexpired row of this provider,
//   brought back by the browser holding its binding, matches: a replay, a forged or expired state,
//   another provider's, or one opened in another browser, writes nothing and is refused), then the
//   code is exchanged, the reader's claims mapped, and a session started. A refusal
//   (CallbackRefused) carries the language of the state's row when there is one.
// - Discovery when `issuer` is set (cached per issuer for DISCOVERY_TTL_MS, with the key set openid-
//   client fetched); without it, plain OAuth 2 with the three endpoints of the settings, GitHub's
//   shape: client_secret_post, the token answered as JSON (openid-client asks with Accept:
//   application/json), userinfo a GET with `Authorization: Bearer` answering {id, login, name,
//   avatar_url, email}.
// - Every call to a provider goes through the SSRF guard (./provider-fetch.ts).
// Under engine/: the tenant comes from the path, not from a key's request context.
import * as oidc from "openid-client";
import type { AppServices } from "../../../context/services.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { startSession } from "../../../auth/reader-sessions.js";
import { subjectOf } from "./claims.js";
import { AppError, errors } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { type SignInProvider } from "../../../tenancy/settings/sign-in.js";
import { DeliveryError } from "../../../outbound/http-client.js";
import type { SignedIn } from "./pages.js";
import { isSignInLanguage, type SignInLanguage } from "./strings.js";
import { PROVIDER_TIMEOUT_MS, providerFetch } from "./provider-fetch.js";

/** How long a started sign-in may come back to the callback. */
export const STATE_TTL_MS = 10 * 60_000;
/** How long a provider's discovery document (and the key set fetched with it) is reused. */
export const DISCOVERY_TTL_MS = 5 * 60_000;
const DEFAULT_OIDC_SCOPES = ["openid", "email", "profile"];

interface Discovered {
  metadata: oidc.ServerMetadata;
  jwks?: oidc.ExportedJWKSCache;
  at: number;
}

/** Discovery documents by issuer, one cache per app (each instance keeps its own). */
const discoveries = new WeakMap<AppServices, Map<string, Discovered>>();

export const isOidc = (p: SignInProvider): boolean => p.issuer !== undefined;

/** A provider's failure as the page shows it: unreachable (502) or refused (400), never a 500. */
function providerFailure(provider: SignInProvider, err: unknown, during: string): AppError {
  if (err instanceof AppError) return err;
  const reason = messageChain(err);
  if (findCause(err, (e) => e instanceof DeliveryError || (e instanceof Error && e.name === "TimeoutError")))
    return errors.signInProviderUnreachable(`${provider.label} could not be reached ${during}: ${reason}.`);
  return errors.signInRefused(`${provider.label} did not complete the sign-in ${during}: ${reason}.`);
}

function findCause(err: unknown, test: (e: unknown) => boolean): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (test(current)) return true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return false;
}

/** The error's message and its causes', short: what a tenant can act on (no answer bodies, no secrets). */
export function messageChain(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 3 && current instanceof Error; depth++) {
    if (current.message && !parts.includes(current.message)) parts.push(current.message);
    // the provider's own OAuth error (invalid_grant…): ResponseBodyError, AuthorizationResponseError
    const { error, error_description: description } = current as { error?: unknown; error_description?: unknown };
    if (typeof error === "string") parts.push(typeof description === "string" ? `${error} (${description})` : error);
    current = current.cause;
  }
  return (parts.join(": ") || "an unknown failure").slice(0, 300);
}

/** openid-client's options of every Configuration: the guarded fetch, its timeout, http to loopback only in development. */
function prepare(app: AppServices, config: oidc.Configuration): oidc.Configuration {
  config[oidc.customFetch] = providerFetch(app.webhooks.http);
  config.timeout = PROVIDER_TIMEOUT_MS / 1000;
  // plain http passes the guard only to loopback and only under ALLOW_HTTP_WEBHOOKS
  if (app.webhooks.policy.allowHttpLoopback) oidc.allowInsecureRequests(config);
  return config;
}

/** The provider's server metadata: discovered from its issuer (cached), or its endpoints from the settings. */
export async function serverMetadata(app: AppServices, provider: SignInProvider, fresh = false): Promise<Discovered> {
  if (!isOidc(provider)) {
    return {
      metadata: {
        // no issuer to check against: the authorization endpoint's origin names the server
        issuer: new URL(provider.authorizationEndpoint!).origin,
        authorization_endpoint: provider.authorizationEndpoint!,
        token_endpoint: provider.tokenEndpoint!,
        userinfo_endpoint: provider.userinfoEndpoint!,
        token_endpoint_auth_methods_supported: ["client_secret_post"],
        code_challenge_methods_supported: ["S256"],
      },
      at: app.clock.now().getTime(),
    };
  }
  const issuer = provider.issuer!;
  let cache = discoveries.get(app);
  if (!cache) discoveries.set(app, (cache = new Map()));
  const now = app.clock.now().getTime();
  const hit = cache.get(issuer);
  if (!fresh && hit && now - hit.at < DISCOVERY_TTL_MS) return hit;
  const config = await oidc.discovery(new URL(issuer), provider.clientId, undefined, oidc.None(), {
    [oidc.customFetch]: providerFetch(app.webhooks.http),
    timeout: PROVIDER_TIMEOUT_MS / 1000,
    ...(app.webhooks.policy.allowHttpLoopback ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  const entry: Discovered = { metadata: JSON.parse(JSON.stringify(config.serverMetadata())) as oidc.ServerMetadata, at: now };
  // a new document keeps the key set fetched before when it names the same one
  if (hit?.jwks && hit.metadata.jwks_uri === entry.metadata.jwks_uri) entry.jwks = hit.jwks;
  cache.set(issuer, entry);
  return entry;
}

/** client_secret_basic unless the provider lists only client_secret_post (plain OAuth 2: post, as GitHub wants). */
function clientAuth(metadata: oidc.ServerMetadata, secret: string): oidc.ClientAuth {
  const methods = metadata.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  return methods.includes("client_secret_basic") ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
}

/** The callback's address, where the provider sends the reader back. */
export const callbackUri = (base: string, tenantId: string, providerId: string): string =>
  `${base}/auth/v1/${encodeURIComponent(tenantId)}/callback/${encodeURIComponent(providerId)}`;

/** The tenant's provider by id; 404 when it has none of that id. */
export function findProvider(tenant: Tenant, providerId: string): SignInProvider {
  const provider = resolveSettings(tenant.settings).signIn.oidc.find((p) => p.id === providerId);
  if (!provider) throw errors.notFound("Sign-in provider");
  return provider;
}

/** The page origin a sign-in reports to: one of the tenant's allowedOrigins, exactly. */
export function checkOrigin(tenant: Tenant, origin: unknown): string {
  if (typeof origin !== "string" || origin.length === 0 || origin.length > 2048) {
    throw errors.signInOriginNotAllowed(typeof origin === "string" ? origin.slice(0, 100) : "");
  }
  if (!resolveSettings(tenant.settings).allowedOrigins.includes(origin)) throw errors.signInOriginNotAllowed(origin.slice(0, 100));
  return origin;
}

interface StateData {
  provider: string;
  origin: string;
  verifier: string;
  nonce: string | null;
  redirectUri: string;
  /** the sign-in's language, for the callback's pages (a row without one: they go by Accept-Language) */
  lang?: SignInLanguage;
  /** the SHA-256 of the starting browser's binding cookie (../browser-binding.ts): only that browser may finish */
  binding: string;
}

const INSERT_STATE = `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, data, created_at, expires_at)
  VALUES ($1, 'oidc_state', $2, $3::jsonb, $4, $5)`;

/**
 * A new sign-in at the provider: the state row written, the authorization URL answered (for a 302).
 * `base` is where the service is reached (PUBLIC_URL, else the address the service listens on: src/http/public-base.ts).
 */
export async function startProviderSignIn(
  app: AppServices,
  tenant: Tenant,
  provider: SignInProvider,
  origin: string,
  base: string,
  lang: SignInLanguage,
  binding: string,
): Promise<URL> {
  let discovered: Discovered;
  try {
    discovered = await serverMetadata(app, provider);
  } catch (err) {
    throw providerFailure(provider, err, "(its discovery document)");
  }
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = isOidc(provider) ? oidc.randomNonce() : null;
  const redirectUri = callbackUri(base, tenant.id, provider.id);
  const config = prepare(app, new oidc.Configuration(discovered.metadata, provider.clientId));
  const scopes = provider.scopes ?? (isOidc(provider) ? DEFAULT_OIDC_SCOPES : []);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    ...(scopes.length ? { scope: scopes.join(" ") } : {}),
    state,
    ...(nonce ? { nonce } : {}),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  const now = app.clock.now();
  const data: StateData = { provider: provider.id, origin, verifier, nonce, redirectUri, lang, binding };
  await app
    .stores(tenant.id)
    .sql.query(INSERT_STATE, [sha256(state, "hex"), JSON.stringify(data), now, new Date(now.getTime() + STATE_TTL_MS)], "oidc_state");
  return url;
}

// single use: only an unused, unexpired state of this very provider, back in the browser that began
// it, is spent, and only once
const SPEND_STATE = `UPDATE sign_in_tokens SET used_at = $3
  WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2 AND used_at IS NULL AND expires_at > $3
    AND data ->> 'provider' = $4 AND data ->> 'binding' = $5
  RETURNING data`;

/** The callback's query, as the provider sent it. */
export interface CallbackQuery {
  [name: string]: unknown;
  state?: unknown;
  code?: unknown;
  error?: unknown;
}

// the language of a state's row, whatever became of it (spent, expired, another provider's): only for
// the words of a refusal; and whether it was one another browser could still have finished
const STATE_LANG = `SELECT data ->> 'lang' AS lang,
    (used_at IS NULL AND expires_at > $3 AND data ->> 'provider' = $4) AS open
  FROM sign_in_tokens WHERE tenant_id = $1 AND kind = 'oidc_state' AND token_hash = $2`;

const PROVIDER_ERROR = /^[\x20-\x7e]{1,100}$/;

/**
 * A refused callback: the error (its status, code and the catalogue's English detail) and what its
 * page needs to say it in the sign-in's language — the language kept with the state, when its row is
 * there (null: none known, the route goes by Accept-Language), and the provider's `error` when the
 * provider ended the sign-in (printable ASCII, at most 100 characters).
 */
export class CallbackRefused extends Error {
  constructor(
    readonly error: AppError,
    readonly lang: SignInLanguage | null,
    readonly providerError: string | null = null,
  ) {
    super(error.detail);
  }
}

/** A stored language, trusted only when it is one of the ten. */
const storedLanguage = (v: unknown): SignInLanguage | null => (isSignInLanguage(v) ? v : null);

/**
 * The reader back from the provider: the state spent, the code exchanged, the reader's session
 * started. `binding` is the hash of the browser's binding cookie (null: it holds none); only the
 * browser that began the sign-in may finish it. Answers the session, the page origin it goes to and
 * the sign-in's language (null for a row that kept none); throws CallbackRefused with the AppError
 * the problem page shows (400 for a bad state, a state begun in another browser, a cancelled or
 * refused sign-in; 502 for a provider out of reach).
 */
export async function finishProviderSignIn(
  app: AppServices,
  tenant: Tenant,
  provider: SignInProvider,
  query: CallbackQuery,
  binding: string | null,
): Promise<{ origin: string; session: SignedIn; lang: SignInLanguage | null }> {
  const state = typeof query.state === "string" && query.state.length > 0 && query.state.length <= 512 ? query.state : null;
  const stateHash = state ? sha256(state, "hex") : null;
  const store = app.stores(tenant.id);
  const now = app.clock.now();
  // a browser with no binding matches no row (NULL equals nothing)
  const spend = async () =>
    stateHash
      ? (await store.sql.query<{ data: StateData }>(SPEND_STATE, [stateHash, now, provider.id, binding], "oidc_state_spend"))[0]
      : undefined;
  /** The state's row as it is (read, not spent): its language, and whether it is still open to its own browser. */
  const look = async () =>
    stateHash
      ? (await store.sql.query<{ lang: string | null; open: boolean }>(STATE_LANG, [stateHash, now, provider.id], "oidc_state_lang"))[0]
      : undefined;
  /** A refusal in the language of the state's row, if it has one. */
  const refused = async (err: AppError, providerError: string | null = null) =>
    new CallbackRefused(err, storedLanguage((await look())?.lang), providerError);

  if (query.error !== undefined) {
    // the reader cancelled (access_denied) or the provider ended the sign-in: the state is spent all the same
    const spent = await spend();
    const code = typeof query.error === "string" && PROVIDER_ERROR.test(query.error) ? query.error : null;
    const err = errors.signInCancelled(
      code === "access_denied"
        ? `Sign-in with ${provider.label} was cancelled: nothing was shared. Close this window and try again if you want to sign in.`
        : `Sign-in with ${provider.label} was cancelled: the provider answered ${code ?? "an error"}. Close this window and try again.`,
    );
    throw spent ? new CallbackRefused(err, storedLanguage(spent.data.lang), code) : await refused(err, code);
  }
  if (!stateHash) throw new CallbackRefused(errors.signInStateInvalid(), null);
  if (typeof query.code !== "string" || query.code.length === 0 || query.code.length > 2048) {
    throw await refused(errors.signInRefused(`${provider.label} sent no authorization code back.`));
  }
  const row = await spend();
  if (!row) {
    // a state its own browser could still finish, brought back by another one: said as such, and left
    // unspent (it is not this browser's to spend)
    const found = await look();
    throw new CallbackRefused(found?.open ? errors.signInBrowserMismatch() : errors.signInStateInvalid(), storedLanguage(found?.lang));
  }
  const saved = row.data;
  const lang = storedLanguage(saved.lang);

  try {
    // the secret is opened only now, for the one call that needs it
    const secret = app.secretBox.open(provider.clientSecretEnc);
    const claims = await exchange(app, provider, secret, saved, query);
    const subject = subjectOf(provider, claims, await app.readerIds.keyOf(tenant.id));
    const settings = resolveSettings(tenant.settings).signIn;
    const session = await startSession(store, app.clock, subject, settings.sessionDays);
    return { origin: saved.origin, session, lang };
  } catch (err) {
    if (err instanceof AppError) throw new CallbackRefused(err, lang);
    throw err;
  }
}

/** The code exchanged for tokens, the ID token checked (OIDC), userinfo fetched: the reader's claims. */
async function exchange(
  app: AppServices,
  provider: SignInProvider,
  secret: string,
  saved: StateData,
  query: CallbackQuery,
): Promise<Record<string, unknown>> {
  let discovered: Discovered;
  try {
    discovered = await serverMetadata(app, provider);
  } catch (err) {
    throw providerFailure(provider, err, "(its discovery document)");
  }
  const config = prepare(
    app,
    new oidc.Configuration(discovered.metadata, provider.clientId, { client_secret: secret }, clientAuth(discovered.metadata, secret)),
  );
  if (isOidc(provider)) {
    // the ID token's signature is checked against the provider's key set too (fetched through the guard)
    oidc.enableNonRepudiationChecks(config);
    if (discovered.jwks) oidc.setJwksCache(config, discovered.jwks);
  }
  // the URL the provider sent the reader to: the redirect URI of the start, with the provider's parameters
  const current = new URL(saved.redirectUri);
  for (const [name, value] of Object.entries(query)) if (typeof value === "string") current.searchParams.set(name, value);

  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: saved.verifier,
      expectedState: current.searchParams.get("state")!,
      ...(saved.nonce ? { expectedNonce: saved.nonce, idTokenExpected: true } : {}),
    });
  } catch (err) {
    throw providerFailure(provider, err, "(exchanging the authorization code)");
  } finally {
    const jwks = isOidc(provider) ? oidc.getJwksCache(config) : undefined;
    if (jwks) discovered.jwks = jwks;
  }

  try {
    if (isOidc(provider)) {
      const idClaims = tokens.claims();
      if (!idClaims) throw errors.signInRefused(`${provider.label} answered no ID token.`);
      const userinfo = discovered.metadata.userinfo_endpoint ? await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub) : {};
      // the ID token's claims win: they are signed and were checked
      return { ...userinfo, ...idClaims } as Record<string, unknown>;
    }
    const res = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(provider.userinfoEndpoint!), "GET");
    if (res.status !== 200) throw new Error(`its userinfo endpoint answered HTTP ${res.status}`);
    const body: unknown = await res.json().catch(() => null);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("its userinfo endpoint answered no JSON object");
    return body as Record<string, unknown>;
  } catch (err) {
    throw providerFailure(provider, err, "(reading the reader's profile)");
  }
}
