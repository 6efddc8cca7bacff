// The console's Test button of a sign-in provider (contract section 20; GraphQL testSignInProvider,
// REST POST /api/v1/settings/sign-in/providers/{id}/test, manage_settings): is the provider there,
// from this server, past the SSRF guard? An OpenID provider's discovery document is read afresh and
// its key set fetched; a plain OAuth 2 provider's three endpoints must each answer. The sealed client
// secret must open with this instance's key. Nobody signs in: whether the client id and secret are the
// right ones only a real sign-in shows. The answer never holds the secret.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { AppError } from "../../lib/errors.js";
import { callbackUri, findProvider } from "./engine/oidc.js";
import { testProvider, type ProviderTestResult } from "./engine/provider-check.js";

export type SignInProviderTest = ProviderTestResult & {
  /** the redirect URI to register at the provider; null while PUBLIC_URL is unset */
  redirectUri: string | null;
};

export async function testSignInProvider(ctx: RequestContext, id: string): Promise<SignInProviderTest> {
  const tenant = await loadTenant(ctx);
  const provider = findProvider(tenant, id);
  const base = ctx.app.config.PUBLIC_URL?.replace(/\/+$/, "");
  const redirectUri = base ? callbackUri(base, tenant.id, provider.id) : null;
  const result = await testProvider(ctx.app, provider);
  let secretProblem: string | null = null;
  try {
    ctx.app.secretBox.open(provider.clientSecretEnc);
  } catch (err) {
    secretProblem = err instanceof AppError ? err.detail : "the stored client secret cannot be opened: set it again";
  }
  const checks = [...result.checks, { endpoint: "clientSecret", url: "", ok: secretProblem === null, status: null, error: secretProblem }];
  return { ...result, ok: checks.every((c) => c.ok), checks, redirectUri };
}
