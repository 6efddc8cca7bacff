// A real OpenID provider for the tests (oidc-provider on loopback, its own discovery document and
// JWKS), holding signing keys the test made, so a test can sign the tokens that provider would issue
// and rotate its keys (a new `kid`) without restarting anything of the service's. With `signIn`, it
// also signs people in for real: one public client (authorization code + PKCE, no secret, as a page's
// script uses it), oidc-provider's development login and consent pages (any login and password; the
// login is the account's `sub`), and the accounts' claims in the ID token. With `signIn.clientSecret`
// the client is a confidential one instead (the service's hosted sign-in: client_secret_basic unless
// `tokenEndpointAuthMethod` says client_secret_post).
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration } from "oidc-provider";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

export type TestAlg = "RS256" | "PS256" | "ES256" | "EdDSA";

interface SigningKey {
  kid: string;
  alg: TestAlg;
  privateKey: CryptoKey;
  jwk: JWK;
}

/** A client that signs people in at the provider, and the accounts it knows (any other login is an account with only `sub`). */
export interface TestIdpSignIn {
  clientId: string;
  /** a confidential client (the secret at the token endpoint); none: a public client (PKCE alone) */
  clientSecret?: string;
  tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post";
  redirectUris: string[];
  /** by login: name, picture, email, email_verified… */
  accounts: Record<string, Record<string, unknown>>;
}

export interface TestIdp {
  issuer: string;
  jwksUri: string;
  /** a token this provider would issue: `aud`, `exp` in 10 min, the newest key unless `kid` is given */
  token(
    claims: Record<string, unknown>,
    opts?: {
      audience?: string;
      kid?: string;
      expiresIn?: string | number;
      issuer?: string;
      /** `iat` in seconds since the epoch; null: none (default: now) */
      issuedAt?: number | null;
    },
  ): Promise<string>;
  /** a new key becomes the signing key; the old ones stay published unless `retireOld` */
  rotate(opts?: { alg?: TestAlg; retireOld?: boolean }): Promise<string>;
  /** how many times the JWKS was fetched */
  readonly jwksFetches: number;
  /** stop answering (connections refused) or answer again */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

async function makeKey(alg: TestAlg, n: number): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}) });
  const kid = `key-${n}-${alg.toLowerCase()}-${randomBytes(4).toString("hex")}`;
  const jwk = { ...(await exportJWK(privateKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey, jwk };
}

/** Starts a provider on a free loopback port. */
export async function startTestIdp(opts: { alg?: TestAlg; signIn?: TestIdpSignIn } = {}): Promise<TestIdp> {
  let keys: SigningKey[] = [await makeKey(opts.alg ?? "RS256", 1)];
  let provider: Provider | undefined;
  let jwksFetches = 0;
  let down = false;
  const server: Server = createServer((req, res) => {
    if (down) {
      req.socket.destroy();
      return;
    }
    if (req.url?.startsWith("/jwks")) jwksFetches++;
    void provider!.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the provider publishes the public halves of the keys given to it (private JWKs: it would sign with them)
  const build = () => {
    provider = new Provider(issuer, {
      jwks: { keys: keys.map((k) => k.jwk) },
      clients: [],
      features: { devInteractions: { enabled: false } },
      ...(opts.signIn ? signInConfig(opts.signIn) : {}),
    });
    provider.on("server_error", () => undefined);
  };
  build();
  let counter = 1;
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    get jwksFetches() {
      return jwksFetches;
    },
    async token(claims, o = {}) {
      const key = o.kid ? keys.find((k) => k.kid === o.kid)! : keys[keys.length - 1]!;
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
        .setIssuer(o.issuer ?? issuer)
        .setAudience(o.audience ?? "engagement-test")
        .setExpirationTime(o.expiresIn ?? "10m");
      if (o.issuedAt !== null) jwt.setIssuedAt(o.issuedAt);
      return jwt.sign(key.privateKey);
    },
    async rotate(o = {}) {
      const key = await makeKey(o.alg ?? keys[keys.length - 1]!.alg, ++counter);
      keys = o.retireOld ? [key] : [...keys, key];
      build();
      return key.kid;
    },
    setDown(d) {
      down = d;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider's configuration for a real sign-in (see the file's comment). */
function signInConfig(signIn: TestIdpSignIn): Partial<Configuration> {
  return {
    clients: [
      {
        client_id: signIn.clientId,
        redirect_uris: signIn.redirectUris,
        response_types: ["code"],
        grant_types: ["authorization_code"],
        ...(signIn.clientSecret
          ? { client_secret: signIn.clientSecret, token_endpoint_auth_method: signIn.tokenEndpointAuthMethod ?? "client_secret_basic" }
          : { token_endpoint_auth_method: "none" }),
      },
    ],
    features: { devInteractions: { enabled: true } },
    claims: { openid: ["sub"], profile: ["name", "picture"], email: ["email", "email_verified"] },
    // the scopes' claims in the ID token itself: a page that has only the ID token has them all
    conformIdTokenClaims: false,
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris!.some((uri) => new URL(uri).origin === origin),
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ ...signIn.accounts[sub], sub }) }),
  };
}
