// The console's Verify key (POST /api/v1/settings/safety/akismet/verify, GraphQL verifyAkismetKey,
// manage_settings; docs/safety.md): Akismet's `verify-key` asked from this server, through the same
// HTTP client and SSRF guard as the checks of comments (./client.ts), within
// AKISMET_VERIFY_TIMEOUT_MS. With no input it verifies the saved settings; a field given replaces the
// saved one for this call alone (nothing is stored), so a key can be tried before it is saved. The
// saved key only ever goes to the saved base URL: verifying at another one takes the key as well.
// Akismet's "valid" / "invalid" is the answer; no answer (a timeout, the network, a refused address,
// an HTTP status, anything else) is `valid: false` with the reason in `error`. The key is never
// answered nor logged.
import { performance } from "node:perf_hooks";
import { loadTenant, type RequestContext } from "../../context/request.js";
import { AppError, errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { SafetyAkismetPatchSchema } from "../../tenancy/settings/safety.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import { akismetUrl, verifyKey } from "./client.js";

/** What to verify: any field left out is the saved one's. `baseUrl: null` is Akismet's default (https://rest.akismet.com). */
export interface AkismetKeyInput {
  apiKey?: string | null;
  blog?: string | null;
  baseUrl?: string | null;
}

export interface AkismetKeyVerification {
  /** Akismet answered "valid": the key works for the blog */
  valid: boolean;
  /** why Akismet gave no verdict (timeout, network, refused address, HTTP status, another answer); null when it answered */
  error: string | null;
  /** Akismet's X-akismet-debug-help with an "invalid": what it found wrong */
  debugHelp: string | null;
  latencyMs: number;
}

export async function verifyAkismetKey(ctx: RequestContext, input: AkismetKeyInput | null | undefined): Promise<AkismetKeyVerification> {
  // GraphQL's null for a field left out is the same as leaving it out, but for baseUrl (null: the default)
  const given = Object.fromEntries(Object.entries(input ?? {}).filter(([k, v]) => v !== null || k === "baseUrl"));
  const parsed = SafetyAkismetPatchSchema.safeParse(given);
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const typed = parsed.data;
  const saved = resolveSettings((await loadTenant(ctx)).settings).safety.akismet;
  if (!saved && typed.apiKey === undefined) throw errors.akismetNotConfigured();

  const blog = typed.blog ?? saved?.blog;
  if (!blog) throw errors.validation([{ path: "blog", message: "is required: Akismet is not saved with one" }]);
  const baseUrl = typed.baseUrl === undefined ? saved?.baseUrl : (typed.baseUrl ?? undefined);
  if (typed.apiKey === undefined && akismetUrl({ baseUrl }, "verify-key") !== akismetUrl({ baseUrl: saved?.baseUrl }, "verify-key")) {
    throw errors.validation([
      { path: "apiKey", message: "is required to verify at another base URL: the saved key is only sent to the saved one" },
    ]);
  }
  // a base URL given here is held to the rule a saved one is (src/modules/akismet/settings.ts)
  if (typed.baseUrl) {
    const verdict = await checkWebhookUrl(`${typed.baseUrl.replace(/\/$/, "")}/1.1/verify-key`, ctx.app.webhooks.policy);
    if (!verdict.ok) throw errors.validation([{ path: "baseUrl", message: verdict.message }]);
  }

  let apiKey = typed.apiKey;
  if (apiKey === undefined) {
    try {
      apiKey = ctx.app.secretBox.open(saved!.apiKeyEnc);
    } catch (err) {
      const problem = err instanceof AppError ? err.detail : "it cannot be read";
      return { valid: false, error: `the saved key cannot be opened (${problem}): save the key again`, debugHelp: null, latencyMs: 0 };
    }
  }
  const started = performance.now();
  const outcome = await verifyKey(ctx.app, { apiKey, blog, baseUrl });
  const latencyMs = Math.round(performance.now() - started);
  if (outcome.kind === "error") return { valid: false, error: outcome.error, debugHelp: null, latencyMs };
  return { valid: outcome.valid, error: null, debugHelp: outcome.debugHelp, latencyMs };
}
