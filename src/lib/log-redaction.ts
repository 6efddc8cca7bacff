// The one redaction of secrets from everything the service writes to its log (access lines, errors,
// warnings, anything a library logs through our logger): pino's `hooks.streamWrite` runs it on each
// finished line (src/lib/logger.ts, createLogger), so no logger, field or message can carry one past it.
//
// What it takes out, wherever it stands in the line:
//  - the one-time tokens that travel in a path: an email sign-in link (`/auth/v1/{tenant}/email/{token}`),
//    a chat alert's Approve or Reject link (`/moderate/v1/{token}`), an unsubscribe link
//    (`/api/v1/unsubscribe/{token}`): the segment becomes `[redacted]`; and the path of a chat's
//    incoming-webhook URL (Slack's `/services/…`, Discord's `/api/webhooks/…`), which is its credential;
//  - the value of a query parameter that names a secret (`?token=`, `ticket`, `key`, `code`, `state`,
//    `secret`, `password`, `signature`, `identity`, `session`, `access_token`, `id_token`, `relay`);
//  - values of our own secret shapes anywhere: reader sessions `rs_…`, API keys `ek_…` and `pk_…`,
//    identity secrets `is_…`, stream tickets `st_…`, signing secrets `whsec_…` (the prefix is kept,
//    so a line still says which kind it was), and JSON Web Tokens (admin tokens, identity assertions).
// The access log also strips the query string before logging (src/http/observability.ts) and names
// the route's template beside the path.

const REDACTED = "[redacted]";

/** Path segments that are one-time tokens, after the prefix that announces them (a route's `:token` stays). */
const TOKEN_IN_PATH = /(\/auth\/v1\/[^/?#\s"\\]+\/email\/|\/moderate\/v1\/|\/api\/v1\/unsubscribe\/)(?!:)[^/?#\s"\\]+/g;

/** A chat's incoming-webhook URL is its own credential: Slack's `/services/T…/B…/…`, Discord's `/api/webhooks/{id}/{token}`. */
const CHAT_HOOK_PATH = /(\/services\/|\/api\/webhooks\/)[^?#\s"\\]+/g;

/** A query parameter naming a secret, and its value. */
const SECRET_PARAM =
  /([?&](?:token|ticket|key|code|state|secret|password|signature|identity|session|access_token|id_token|relay)=)[^&#\s"\\]+/gi;

/** Our own secrets' shapes: the prefix kept, the rest taken. */
const SECRET_VALUE = /\b(rs_|ek_|pk_|is_|st_|whsec_)[A-Za-z0-9_+/=-]{16,}/g;

/** A JSON Web Token: three base64url parts, the first a JSON header (`eyJ`). */
const JWT = /\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/g;

/** A quick look for anything the patterns could take: most lines have none, and pay only this. */
const MAYBE = /\/email\/|\/moderate\/|\/unsubscribe\/|\/services\/|\/webhooks\/|=|rs_|ek_|pk_|is_|st_|whsec_|eyJ/;

/** `text` with every secret it holds replaced (see above); the same string when it holds none. */
export function redactSecrets(text: string): string {
  if (!MAYBE.test(text)) return text;
  return text
    .replace(TOKEN_IN_PATH, `$1${REDACTED}`)
    .replace(CHAT_HOOK_PATH, `$1${REDACTED}`)
    .replace(SECRET_PARAM, `$1${REDACTED}`)
    .replace(SECRET_VALUE, `$1${REDACTED}`)
    .replace(JWT, REDACTED);
}
