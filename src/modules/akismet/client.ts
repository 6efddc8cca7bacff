// Calls of Akismet's REST API (contract section 21, docs/safety.md): `comment-check` on the request
// path of a new comment, `submit-ham` / `submit-spam` after a moderator's decision (the request only:
// the webhook worker sends it, src/modules/moderation/engine/akismet-feedback.ts), `verify-key` for
// the console's Verify key (./verify.ts). Each is one form-
// encoded POST to {baseUrl}/1.1/<call> through the webhooks' HTTP client (src/outbound/
// http-client.ts: the SSRF guard, checked again at connect time, no redirects, the answer's size
// bounded). The base URL is reduced to its scheme, host and port (src/lib/outbound-url.ts) and the
// request target is built here from those fields alone.
import { parseOutboundUrl } from "../../lib/outbound-url.js";
import type { AppServices } from "../../context/services.js";
import { DEFAULT_AKISMET_BASE_URL, type SafetySettings } from "../../tenancy/settings/safety.js";
import { DeliveryError } from "../../outbound/http-client.js";

export const AKISMET_USER_AGENT = "engagement-service/1 | akismet";

/** A post waits at most this long for Akismet's answer; past it the comment is written as usual (fail open). */
export const AKISMET_CHECK_TIMEOUT_MS = 2_000;
/** The console's Verify key waits this long for Akismet's answer. */
export const AKISMET_VERIFY_TIMEOUT_MS = 5_000;

export type AkismetSettings = NonNullable<SafetySettings["akismet"]>;

/** What comment-check and the submit calls send about a comment. */
export interface AkismetComment {
  userIp: string | null;
  userAgent: string | null;
  author: string;
  content: string;
  permalink: string | null;
}

export type AkismetVerdict = "ham" | "spam" | "discard";

export type AkismetCall = "comment-check" | "submit-ham" | "submit-spam" | "verify-key";

export type AkismetOutcome = { kind: "verdict"; verdict: AkismetVerdict } | { kind: "error"; error: string };

/** `{baseUrl}/1.1/<call>` from the base URL's scheme, host and port alone. */
export function akismetUrl(settings: Pick<AkismetSettings, "baseUrl">, call: AkismetCall): string {
  const parsed = parseOutboundUrl(settings.baseUrl ?? DEFAULT_AKISMET_BASE_URL, "http");
  if (!parsed.ok) throw new Error(`unusable Akismet base URL: ${parsed.problem.message}`);
  const { scheme, host, port } = parsed.target;
  return `${scheme}://${host}:${port}/1.1/${call}`;
}

function formOf(apiKey: string, settings: AkismetSettings, comment: AkismetComment): string {
  const form = new URLSearchParams({ api_key: apiKey, blog: settings.blog });
  if (comment.userIp) form.set("user_ip", comment.userIp);
  if (comment.userAgent) form.set("user_agent", comment.userAgent);
  form.set("comment_type", "comment");
  form.set("comment_author", comment.author);
  form.set("comment_content", comment.content);
  if (comment.permalink) form.set("permalink", comment.permalink);
  return form.toString();
}

async function post(
  app: Pick<AppServices, "webhooks" | "secretBox">,
  settings: AkismetSettings,
  call: "comment-check" | "submit-ham" | "submit-spam",
  comment: AkismetComment,
  timeoutMs: number,
) {
  const apiKey = app.secretBox.open(settings.apiKeyEnc);
  return postForm(app, settings, call, formOf(apiKey, settings, comment), timeoutMs);
}

function postForm(
  app: Pick<AppServices, "webhooks">,
  settings: Pick<AkismetSettings, "baseUrl">,
  call: AkismetCall,
  form: string,
  timeoutMs: number,
) {
  return app.webhooks.http.post({
    url: akismetUrl(settings, call),
    body: form,
    timeoutMs,
    headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": AKISMET_USER_AGENT },
  });
}

const describe = (err: unknown): string =>
  err instanceof DeliveryError ? `${err.kind}: ${err.message}` : err instanceof Error ? err.message : String(err);

/**
 * comment-check: "true" is spam (with `X-akismet-pro-tip: discard`, spam not worth a look), "false"
 * ham; anything else (another answer, a status other than 200, a timeout, a refusal) is an error.
 */
export async function checkComment(
  app: Pick<AppServices, "webhooks" | "secretBox">,
  settings: AkismetSettings,
  comment: AkismetComment,
  timeoutMs = AKISMET_CHECK_TIMEOUT_MS,
): Promise<AkismetOutcome> {
  try {
    const res = await post(app, settings, "comment-check", comment, timeoutMs);
    const body = res.body.trim();
    if (res.statusCode !== 200) return { kind: "error", error: `Akismet answered HTTP ${res.statusCode}` };
    if (body === "false") return { kind: "verdict", verdict: "ham" };
    if (body === "true") {
      const tip = res.headers["x-akismet-pro-tip"];
      return { kind: "verdict", verdict: (Array.isArray(tip) ? tip[0] : tip)?.trim() === "discard" ? "discard" : "spam" };
    }
    const debug = res.headers["x-akismet-debug-help"];
    return { kind: "error", error: `Akismet answered ${JSON.stringify(body.slice(0, 100))}${debug ? ` (${String(debug)})` : ""}` };
  } catch (err) {
    return { kind: "error", error: describe(err) };
  }
}

/**
 * The request of a submit-ham / submit-spam (the webhook worker sends it: src/modules/moderation/engine/akismet-feedback.ts):
 * the form with the key opened from the settings, to the settings' base URL.
 */
export function submitRequest(
  secretBox: Pick<AppServices["secretBox"], "open">,
  settings: AkismetSettings,
  call: "submit-ham" | "submit-spam",
  comment: AkismetComment,
): { url: string; body: string; headers: Record<string, string> } {
  return {
    url: akismetUrl(settings, call),
    body: formOf(secretBox.open(settings.apiKeyEnc), settings, comment),
    headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": AKISMET_USER_AGENT },
  };
}

/** What verify-key said: the key is valid for the blog, or not; or why there is no answer. */
export type AkismetKeyOutcome = { kind: "answer"; valid: boolean; debugHelp: string | null } | { kind: "error"; error: string };

/**
 * verify-key: `key` and `blog`, form-encoded (the key also as `api_key`, the name Akismet's other
 * calls take); "valid" or "invalid" (with `X-akismet-debug-help` saying why), anything else (another
 * answer, a status other than 200, a timeout, a refusal) is an error.
 */
export async function verifyKey(
  app: Pick<AppServices, "webhooks">,
  target: { apiKey: string; blog: string; baseUrl?: string | undefined },
  timeoutMs = AKISMET_VERIFY_TIMEOUT_MS,
): Promise<AkismetKeyOutcome> {
  try {
    const form = new URLSearchParams({ key: target.apiKey, api_key: target.apiKey, blog: target.blog }).toString();
    const res = await postForm(app, target, "verify-key", form, timeoutMs);
    const body = res.body.trim();
    const debugHeader = res.headers["x-akismet-debug-help"];
    const debugHelp = (Array.isArray(debugHeader) ? debugHeader[0] : debugHeader)?.trim() || null;
    if (res.statusCode !== 200) return { kind: "error", error: `Akismet answered HTTP ${res.statusCode}` };
    if (body === "valid") return { kind: "answer", valid: true, debugHelp: null };
    if (body === "invalid") return { kind: "answer", valid: false, debugHelp };
    return { kind: "error", error: `Akismet answered ${JSON.stringify(body.slice(0, 100))}${debugHelp ? ` (${debugHelp})` : ""}` };
  } catch (err) {
    return { kind: "error", error: describe(err) };
  }
}
