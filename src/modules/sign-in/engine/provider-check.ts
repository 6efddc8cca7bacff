// The console's Test button for a hosted sign-in provider (contract section 20): the provider called
// from the server through the SSRF guard, and what answered. The sign-in flow itself is ./oidc.ts,
// whose discovery cache this shares.
import type { AppServices } from "../../../context/services.js";
import type { SignInProvider } from "../../../tenancy/settings/sign-in.js";
import { isOidc, messageChain, serverMetadata } from "./oidc.js";
import { providerFetch } from "./provider-fetch.js";

/** One check of the console's Test button. */
export interface ProviderCheck {
  /** discovery | jwks | authorization | token | userinfo (| clientSecret: src/modules/sign-in/provider-test.ts) */
  endpoint: string;
  url: string;
  ok: boolean;
  /** the HTTP status answered; null when none came */
  status: number | null;
  error: string | null;
}

export interface ProviderTestResult {
  ok: boolean;
  checks: ProviderCheck[];
  latencyMs: number;
}

/**
 * The console's Test button: an OpenID provider's discovery document is read afresh (its issuer
 * must match) and its key set fetched; a plain OAuth 2 provider's three endpoints must each answer
 * (any HTTP status below 500: nobody signs in, so a 401 or 400 is what they say to a stranger). All
 * through the SSRF guard. Whether the client id and secret are right only a real sign-in shows.
 */
export async function testProvider(app: AppServices, provider: SignInProvider): Promise<ProviderTestResult> {
  const started = performance.now();
  const fetcher = providerFetch(app.webhooks.http);
  const checks: ProviderCheck[] = [];
  const probe = async (endpoint: string, url: string, method: "GET" | "POST", accept: (status: number, body: string) => string | null) => {
    try {
      const res = await fetcher(url, {
        method,
        headers: { accept: "application/json", ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
        body: method === "POST" ? "grant_type=authorization_code" : undefined,
        redirect: "manual",
      });
      const problem = accept(res.status, await res.text());
      checks.push({ endpoint, url, ok: problem === null, status: res.status, error: problem });
    } catch (err) {
      checks.push({ endpoint, url, ok: false, status: null, error: messageChain(err) });
    }
  };
  const answers = (status: number) => (status < 500 ? null : `it answered HTTP ${status}`);

  if (isOidc(provider)) {
    const url = `${provider.issuer!.replace(/\/$/, "")}/.well-known/openid-configuration`;
    try {
      const { metadata } = await serverMetadata(app, provider, true);
      checks.push({ endpoint: "discovery", url, ok: true, status: 200, error: null });
      if (metadata.jwks_uri) {
        await probe("jwks", metadata.jwks_uri, "GET", (status, body) => {
          if (status !== 200) return `it answered HTTP ${status}`;
          try {
            const keys = (JSON.parse(body) as { keys?: unknown }).keys;
            return Array.isArray(keys) && keys.length > 0 ? null : "it holds no keys";
          } catch {
            return "it is not JSON";
          }
        });
      } else {
        checks.push({ endpoint: "jwks", url: "", ok: false, status: null, error: "the discovery document names no jwks_uri" });
      }
    } catch (err) {
      checks.push({ endpoint: "discovery", url, ok: false, status: null, error: messageChain(err) });
    }
  } else {
    await probe("authorization", provider.authorizationEndpoint!, "GET", answers);
    await probe("token", provider.tokenEndpoint!, "POST", answers);
    await probe("userinfo", provider.userinfoEndpoint!, "GET", answers);
  }
  return { ok: checks.every((c) => c.ok), checks, latencyMs: Math.round(performance.now() - started) };
}
