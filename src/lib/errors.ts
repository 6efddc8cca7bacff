// Errors with a stable `code` and HTTP status. They extend GraphQLError so GraphQL answers carry
// `extensions.code` (yoga does not mask them), and REST turns them into RFC 9457 problem documents.
import { GraphQLError } from "graphql";

export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  detail?: string;
  errors?: FieldError[];
  /** Extra public members of the problem document (e.g. `required`). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

export class AppError extends GraphQLError {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly fieldErrors: FieldError[] | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, detail: string, opts: Omit<AppErrorOptions, "detail"> = {}) {
    super(detail, {
      extensions: {
        code,
        status,
        ...(opts.errors ? { errors: opts.errors } : {}),
        ...(opts.extra ?? {}),
      },
    });
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.fieldErrors = opts.errors;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }

  get title(): string {
    return TITLES[this.status] ?? "Error";
  }

  toProblem(): Record<string, unknown> {
    return {
      type: `https://engagement.dev/problems/${this.code.replace(/_/g, "-")}`,
      title: this.title,
      status: this.status,
      code: this.code,
      detail: this.detail,
      ...(this.fieldErrors ? { errors: this.fieldErrors } : {}),
      ...this.extra,
    };
  }
}

export const errors = {
  malformedJson: (detail = "The request body is not valid JSON.") => new AppError(400, "malformed_json", detail),
  invalidParameter: (errs: FieldError[]) =>
    new AppError(400, "invalid_parameter", errs.map((e) => `${e.path}: ${e.message}`).join("; "), { errors: errs }),
  unauthenticated: (detail = "Authentication required: send X-API-Key or an admin Bearer token.") =>
    new AppError(401, "unauthenticated", detail, { headers: { "WWW-Authenticate": 'Bearer realm="engagement"' } }),
  keyExpired: () => new AppError(401, "key_expired", "This API key has expired."),
  keyRevoked: () => new AppError(401, "key_revoked", "This API key has been revoked."),
  invalidIdentity: (detail: string) => new AppError(401, "invalid_identity", detail),
  missingCapability: (required: string) =>
    new AppError(403, "missing_capability", `This operation needs the '${required}' capability.`, {
      extra: { required },
    }),
  originNotAllowed: (origin: string) =>
    new AppError(403, "origin_not_allowed", `The origin ${origin} is not in this tenant's allowedOrigins (nor CORS_ORIGINS).`),
  notAuthor: (detail = "Only the author may do this.") => new AppError(403, "not_author", detail),
  operatorOnly: () => new AppError(403, "operator_only", "Only a console operator, signed in, has a moderation digest."),
  capabilityEscalation: (missing: string[]) =>
    new AppError(403, "capability_escalation", `A key may only grant capabilities it holds: ${missing.join(", ")}.`, {
      extra: { capabilities: missing },
    }),
  /** an unsubscribe POST without RFC 8058's one body (src/modules/email/http-routes.ts) */
  oneClickRequired: () =>
    new AppError(
      400,
      "one_click_required",
      "Send the body List-Unsubscribe=One-Click as application/x-www-form-urlencoded (RFC 8058); nothing was changed.",
    ),
  notFound: (what: string) => new AppError(404, "not_found", `${what} not found.`),
  /** POST /discussions/{id}/federate or /federation/announce while settings federation.enabled is false */
  federationDisabled: () =>
    new AppError(409, "federation_disabled", "Federation is off for this site: turn settings federation.enabled on (with a handle) first."),
  /** a fediverse announcement asked of an instance that serves no federation (production without PUBLIC_URL) */
  federationUnavailable: () =>
    new AppError(
      409,
      "federation_unavailable",
      "This instance serves no federation: in production its ActivityPub ids need PUBLIC_URL, which is not set.",
    ),
  /** a passkey route of an instance with no relying party: production without PUBLIC_URL (contract section 29) */
  passkeysUnavailable: () =>
    new AppError(
      409,
      "passkeys_unavailable",
      "This instance offers no passkeys: in production their relying party is the host of PUBLIC_URL, which is not set.",
    ),
  /** a passkey's registration that does not verify: another challenge, origin or relying party, a malformed credential (contract section 29) */
  passkeyInvalid: (detail: string) => new AppError(400, "passkey_invalid", `The passkey could not be registered: ${detail}`),
  /** a passkey sign-in refused: a credential unknown here, a spent challenge, a bad signature, a counter gone backwards (contract section 29) */
  passkeyRefused: (detail: string) => new AppError(401, "passkey_refused", `The passkey does not sign in here: ${detail}`),
  /** POST /discussions/{id}/federate for a discussion without a url: only a page can be an Article */
  discussionWithoutUrl: () =>
    new AppError(
      409,
      "discussion_without_url",
      "Only a discussion with a url (its page) is announced to the fediverse: set its url first.",
    ),
  /** an inbound ActivityPub activity without a valid HTTP signature of its actor's key (src/modules/federation/http-routes.ts) */
  signatureInvalid: () =>
    new AppError(401, "signature_invalid", "The activity carries no valid HTTP signature by a key of its actor: nothing was stored."),
  /** an inbound ActivityPub activity, signed, that is not one we take: not an activity, or its id on another origin than its actor's */
  activityInvalid: (detail: string) => new AppError(400, "activity_invalid", `${detail} Nothing was stored.`),
  /** an inbound ActivityPub activity from a domain in settings federation.blockedDomains */
  domainBlocked: (domain: string) =>
    new AppError(403, "domain_blocked", `Activities from ${domain} are refused by this site: nothing was stored.`, { extra: { domain } }),
  /** a browser's comment on a discussion that does not exist, and that its page may not create */
  discussionNotFound: (autoCreate: boolean) =>
    new AppError(
      404,
      "not_found",
      autoCreate
        ? "Discussion not found: a page creates its discussion with its first comment only from one of the site's allowedOrigins (an Origin header naming it)."
        : "Discussion not found: this site creates its discussions from its backend (PUT /api/v1/discussions/{id}); settings discussions.autoCreate is off.",
      { extra: { resource: "discussion" } },
    ),
  conflict: (code: string, detail: string) => new AppError(409, code, detail),
  /** the console's "Send test" with no `safety.hook` set */
  emailNotConfigured: () => new AppError(409, "email_not_configured", "Email is off: the service has no SMTP server (SMTP_URL)."),
  hookNotConfigured: () =>
    new AppError(409, "hook_not_configured", "No moderation hook is configured: set safety.hook in the settings first."),
  /** the console's Verify key with no `safety.akismet` set and no key given */
  akismetNotConfigured: () =>
    new AppError(
      409,
      "akismet_not_configured",
      "Akismet is not set: save safety.akismet in the settings first, or give the apiKey and blog to verify.",
    ),
  /** a page reaction while the tenant's pageReactionKinds is empty (contract section 18) */
  pageReactionsDisabled: () =>
    new AppError(409, "page_reactions_disabled", "Page reactions are off: set pageReactionKinds in the settings first."),
  /** PATCH /me or POST /me/sign-out with a reader the site's own sign-in asserts, not a hosted session (contract section 20) */
  notASession: () =>
    new AppError(
      409,
      "not_a_session",
      "This reader comes from the site's own sign-in (an identity assertion or provider token), not a session of the service's hosted sign-in: the site manages their name and sign-out.",
    ),
  /** a hosted sign-in route of a method the tenant's signIn.methods does not list (contract section 20) */
  signInMethodDisabled: (method: string) =>
    new AppError(403, "sign_in_method_disabled", `Sign-in by ${method} is not enabled for this site (settings signIn.methods).`),
  /** a hosted sign-in's `origin` that the tenant's allowedOrigins does not list (contract section 20) */
  signInOriginNotAllowed: (origin: string) =>
    new AppError(
      400,
      "sign_in_origin_not_allowed",
      `The page origin ${JSON.stringify(origin)} is not in this site's allowedOrigins: sign-in can only report back to a page of the site.`,
    ),
  /** an OIDC / OAuth 2 callback whose `state` is unknown, expired, already used or another provider's (contract section 20) */
  signInStateInvalid: () =>
    new AppError(
      400,
      "sign_in_state_invalid",
      "This sign-in is unknown, has expired, was already completed or belongs to another provider: close this window and sign in again.",
    ),
  /** an open sign-in's callback opened in a browser that did not begin it (no binding cookie, or another) */
  signInBrowserMismatch: () =>
    new AppError(
      400,
      "sign_in_browser_mismatch",
      "This sign-in was begun in another browser (or this browser refused or cleared its cookie): it can only finish where it began. Close this window and sign in again from the page you are on.",
    ),
  /** the provider sent the reader back with an error (`?error=access_denied`: they cancelled) */
  signInCancelled: (detail: string) => new AppError(400, "sign_in_cancelled", detail),
  /** the provider's answer was refused: no code, a code it would not exchange, an ID token that failed its checks */
  signInRefused: (detail: string) => new AppError(400, "sign_in_refused", detail),
  /** the provider could not be reached (down, slow, or an address the SSRF guard refuses) */
  signInProviderUnreachable: (detail: string) => new AppError(502, "sign_in_provider_unreachable", detail),
  /** a chat alert's Approve / Reject link (/moderate/v1/{token}) that was never made, or was altered (contract section 21) */
  alertLinkUnknown: () =>
    new AppError(404, "alert_link_unknown", "This moderation link is not valid: it was never made, or it was changed. Nothing was done."),
  /** a chat alert's link, or its alert's other one, used already: an alert's Approve and Reject links are one decision, made once */
  alertLinkUsed: (at: Date, decided = "") =>
    new AppError(
      410,
      "alert_link_used",
      `This alert's Approve and Reject links were already used (${at.toISOString()}): they are one decision, made once.${decided ? ` ${decided}` : ""} Nothing more was done.`,
    ),
  /** a chat alert's link whose comment was decided after the alert was sent (a moderator, another link, an edit, a deletion) */
  alertLinkDecided: (decided: string) =>
    new AppError(409, "alert_link_decided", `${decided} This link was made before that, so it changed nothing.`),
  /** a chat alert's link past its 7 days */
  alertLinkExpired: (at: Date) =>
    new AppError(
      410,
      "alert_link_expired",
      `This moderation link expired at ${at.toISOString()}. Nothing was done: moderate the comment in the console.`,
    ),
  /** the Send test of an alert the settings do not have (`alerts` has fewer) */
  alertNotConfigured: (index: number) =>
    new AppError(404, "alert_not_configured", `The settings have no alert at index ${index}: set alerts in the settings first.`),
  /** Bluesky (contract section 30) is off for the tenant: settings bluesky.enabled */
  blueskyDisabled: () => new AppError(409, "bluesky_disabled", "Bluesky is off for this site: set bluesky.enabled in the settings first."),
  /** posting from the site's account without one: settings bluesky.handle and bluesky.appPassword */
  blueskyAccountMissing: () =>
    new AppError(
      409,
      "bluesky_account_missing",
      "The site has no Bluesky account to post from: set bluesky.handle and bluesky.appPassword in the settings first.",
    ),
  /** the site's Bluesky server or the AppView refused or did not answer (down, slow, or an address the SSRF guard refuses) */
  blueskyUnreachable: (detail: string) => new AppError(502, "bluesky_unreachable", detail),
  /** settings federation.handle that another tenant of the server holds (contract section 24; tenants.federation_handle is unique) */
  handleTaken: (handle: string) =>
    new AppError(409, "handle_taken", `The fediverse handle ${JSON.stringify(handle)} is taken on this server: choose another.`, {
      extra: { handle },
    }),
  /** a discussion's url that another discussion of the tenant has (compared as src/modules/discussions/url-key.ts keys them; contract section 27) */
  urlTaken: (otherId: string) =>
    new AppError(
      409,
      "url_taken",
      `Another discussion of this site (${JSON.stringify(otherId)}) has this url: a page has one discussion.`,
      {
        extra: { discussionId: otherId },
      },
    ),
  /** a webmention whose target is no discussion's url (contract section 24; W3C Webmention §3.2.1; a site's with federation off is 404) */
  webmentionTargetUnsupported: () =>
    new AppError(
      400,
      "webmention_target_unsupported",
      "The target is not a page whose comments this service keeps (no discussion has it as its url).",
    ),
  /** a webmention from a domain every site it targets blocks (settings federation.blockedDomains) */
  webmentionSourceBlocked: () =>
    new AppError(400, "webmention_source_blocked", "Webmentions from the source's domain are not accepted by this site."),
  /** a vote while the tenant's settings say `votes: "off"` (contract section 18) */
  votesDisabled: () => new AppError(409, "votes_disabled", 'Votes are off on this site (settings votes is "off").'),
  payloadTooLarge: (limit: number) => new AppError(413, "payload_too_large", `The request body is larger than ${limit} bytes.`),
  unsupportedMediaType: (detail = "Send the body as JSON with Content-Type: application/json.") =>
    new AppError(415, "unsupported_media_type", detail),
  validation: (errs: FieldError[]) =>
    new AppError(422, "validation_failed", errs.map((e) => `${e.path}: ${e.message}`).join("; "), { errors: errs }),
  rateLimited: (retryAfterSeconds: number, headers: Record<string, string> = {}) =>
    new AppError(429, "rate_limited", `Too many requests; retry in ${retryAfterSeconds} s.`, {
      headers: { "Retry-After": String(retryAfterSeconds), ...headers },
    }),
  idempotencyKeyReused: () =>
    new AppError(
      422,
      "idempotency_key_reused",
      "This Idempotency-Key was used for a different request (method, path, body or credentials); use a new key for a new request.",
    ),
  idempotencyInProgress: (retryAfterSeconds: number) =>
    new AppError(409, "idempotency_in_progress", "A request with this Idempotency-Key is still running; retry shortly.", {
      headers: { "Retry-After": String(retryAfterSeconds) },
    }),
  /** a stored secret sealed under another key (restored from elsewhere, or the key changed): the operator must fix the key */
  secretKeyMismatch: () =>
    new AppError(
      503,
      "secret_key_mismatch",
      "A secret this request needs was stored under another encryption key and cannot be read; the service's operator has been told.",
    ),
  unavailable: (detail = "A dependency is unavailable; try again shortly.") =>
    new AppError(503, "unavailable", detail, { headers: { "Retry-After": "1" } }),
};

/**
 * The codes the database functions refuse with — `eng_refuse(status, code, detail[, extra])` in
 * prisma/sql/00-shared.sql raises SQLSTATE EN<status> with MESSAGE = code (and the problem's extra
 * members as JSON in HINT) — and their status. For 422
 * the code names the field at fault. The functions raise no other (test/unit/error-catalogue.test.ts
 * reads prisma/sql), and `databaseRefusal` is the one place their errors become ours.
 */
export const DATABASE_REFUSALS = {
  not_found: 404,
  not_author: 403,
  reader_banned: 403,
  discussion_locked: 409,
  discussion_archived: 409,
  comment_not_approved: 409,
  edit_window_closed: 409,
  idempotency_in_progress: 409,
  remote_object_held: 409,
  parentId: 422,
  comment: 422,
} as const satisfies Record<string, number>;

/** A database function's refusal (SQLSTATE EN…) as the error it stands for; null for any other error. */
export function databaseRefusal(err: unknown): AppError | null {
  // pg's error as it is, or the same error inside Prisma's (a raw query under a driver adapter: P2010)
  const wrapped = (err as { meta?: { driverAdapterError?: { cause?: unknown } } } | null)?.meta?.driverAdapterError?.cause;
  const e = (wrapped ?? err) as { code?: unknown; message?: unknown; detail?: unknown; hint?: unknown };
  if (typeof e.code !== "string" || !/^EN\d{3}$/.test(e.code)) return null;
  const code = String(e.message);
  const detail = typeof e.detail === "string" ? e.detail : "";
  const status = (DATABASE_REFUSALS as Record<string, number>)[code];
  // a refusal the catalogue lacks is a bug of ours: answered 500 and logged, never guessed at
  if (status === undefined || `EN${status}` !== e.code) return null;
  if (status === 422) return errors.validation([{ path: code, message: detail }]);
  if (code === "idempotency_in_progress") return errors.idempotencyInProgress(1);
  return new AppError(status, code, detail, { extra: refusalExtra(e.hint) });
}

/** Extra members of the problem (`eng_refuse`'s 4th argument, raised as the HINT: a JSON object, e.g. reader_banned's `until`). */
function refusalExtra(hint: unknown): Record<string, unknown> {
  if (typeof hint !== "string" || !hint.startsWith("{")) return {};
  try {
    const extra: unknown = JSON.parse(hint);
    return extra && typeof extra === "object" && !Array.isArray(extra) ? (extra as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Turns a zod error into our 422 (or 400 for parameters) with every problem listed. */
export function fieldErrorsFromZod(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix?: string,
): FieldError[] {
  return issues.map((i) => {
    const p = i.path.map((s, idx) => (typeof s === "number" ? `[${s}]` : `${idx > 0 ? "." : ""}${String(s)}`)).join("");
    return { path: prefix ? (p ? `${prefix}.${p}` : prefix) : p || "body", message: inWords(i) };
  });
}

/** What zod's bounds and types say by default ("Too small: expected number to be >=1"), in words ("must be at least 1"); its other messages, and rules' own, as they are. */
function inWords(issue: {
  message: string;
  code?: unknown;
  origin?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  inclusive?: unknown;
  expected?: unknown;
}): string {
  // digits as they are (10000, not 10,000): clients and tests match the bound as the settings give it
  const n = (v: unknown) => String(v);
  const unit = issue.origin === "string" ? " characters" : issue.origin === "array" || issue.origin === "set" ? " items" : "";
  if (issue.code === "too_small" && issue.message.startsWith("Too small"))
    return issue.inclusive === false ? `must be more than ${n(issue.minimum)}${unit}` : `must be at least ${n(issue.minimum)}${unit}`;
  if (issue.code === "too_big" && issue.message.startsWith("Too big"))
    return issue.inclusive === false ? `must be less than ${n(issue.maximum)}${unit}` : `must be at most ${n(issue.maximum)}${unit}`;
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input") && typeof issue.expected === "string")
    return `must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`;
  return issue.message;
}
