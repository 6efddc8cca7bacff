// Reader sessions of the service's hosted sign-in (contract section 20): an `rs_` token stands for a
// reader in X-Service-Identity wherever an assertion does, for the tenant's signIn.sessionDays. Only
// the token's SHA-256 is stored (reader_sessions); each request looks it up, so a sign-out (the row
// deleted) or a ban holds on every instance at once. A session reader is an ordinary reader: the
// readers row carries their name (PATCH /me), avatar and, for an email sign-in, the address.
// A ban (no `until`, not a shadow ban) revokes them: a session begun before a ban ended — before the
// ban, or while it was in force — is refused for good, so lifting the ban (or making it a suspension)
// brings none back and the reader signs in again; the rows go when they expire (the retention job).
// A suspension ends by itself and keeps the sessions (the writes refuse the reader until then:
// eng_assert_not_banned); a shadow ban refuses nothing, sessions included, as it must not show
// (docs/safety.md, "Bans").
import { randomBytes } from "node:crypto";
import type { ReaderIdentity } from "./identity.js";
import type { TenantStore } from "../db/tenant-store.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { sha256 } from "../lib/sha256.js";
import type { SignInMethod } from "../tenancy/settings/sign-in.js";

export const SESSION_PREFIX = "rs_";

/** A guest's reader id: `guest:` and 22 random URL-safe characters (contract section 20). */
export const GUEST_PREFIX = "guest:";
export const isGuestReader = (readerId: string): boolean => readerId.startsWith(GUEST_PREFIX);

/** Whether a token of X-Service-Identity is a reader session (rather than a signed assertion). */
export const isSessionToken = (token: string): boolean => token.startsWith(SESSION_PREFIX);

/** A session's reader, as X-Service-Identity gives it, with how they signed in. */
export interface SessionReader extends ReaderIdentity {
  method: SignInMethod;
}

/** The reader a new session stands for: written to (or refreshed on) their readers row. */
export interface SessionSubject {
  id: string;
  name: string;
  avatarUrl: string | null;
  /** a verified address (an email link, a provider's verified claim); null: leave the row's */
  email: string | null;
  method: SignInMethod;
  /** the OIDC provider's id, for method oidc */
  provider?: string | null;
}

const UPSERT_READER = `INSERT INTO readers (tenant_id, id, name, avatar_url, email, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $6)
  ON CONFLICT (tenant_id, id) DO UPDATE SET
    name = EXCLUDED.name, avatar_url = COALESCE(EXCLUDED.avatar_url, readers.avatar_url),
    email = COALESCE(EXCLUDED.email, readers.email),
    email_suppressed_at = CASE WHEN EXCLUDED.email IS DISTINCT FROM readers.email AND EXCLUDED.email IS NOT NULL THEN NULL ELSE readers.email_suppressed_at END,
    updated_at = EXCLUDED.updated_at`;

const INSERT_SESSION = `INSERT INTO reader_sessions (tenant_id, token_hash, reader_id, method, provider, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)`;

/**
 * A new session for the subject: their readers row written, the token answered once (`rs_` and 43
 * URL-safe characters: 256 random bits), only its hash stored.
 */
export async function startSession(
  store: TenantStore,
  clock: Clock,
  subject: SessionSubject,
  sessionDays: number,
): Promise<{ token: string; reader: { id: string; name: string; avatarUrl: string | null } }> {
  const token = SESSION_PREFIX + randomBytes(32).toString("base64url");
  const now = clock.now();
  const expires = new Date(now.getTime() + sessionDays * 86_400_000);
  await store.sql.query(UPSERT_READER, [subject.id, subject.name, subject.avatarUrl, subject.email, now], "session_reader");
  await store.sql.query(
    INSERT_SESSION,
    [sha256(token, "hex"), subject.id, subject.method, subject.provider ?? null, now, expires],
    "session_insert",
  );
  return { token, reader: { id: subject.id, name: subject.name, avatarUrl: subject.avatarUrl } };
}

// `banned`: a ban is in force; `revoked`: a ban ended (lifted, or replaced) after the session began
const LOOKUP = `SELECT s.reader_id AS id, r.name, r.avatar_url AS "avatarUrl", r.email, s.method,
    EXISTS (SELECT 1 FROM reader_sanctions b WHERE b.tenant_id = s.tenant_id AND b.reader_id = s.reader_id
            AND b.until IS NULL AND NOT b.shadow AND b.lifted_at IS NULL) AS banned,
    EXISTS (SELECT 1 FROM reader_sanctions b WHERE b.tenant_id = s.tenant_id AND b.reader_id = s.reader_id
            AND b.until IS NULL AND NOT b.shadow AND b.lifted_at >= s.created_at) AS revoked
  FROM reader_sessions s JOIN readers r ON r.tenant_id = s.tenant_id AND r.id = s.reader_id
  WHERE s.tenant_id = $1 AND s.token_hash = $2 AND s.expires_at > $3`;

/**
 * The session's reader; 401 invalid_identity when the token is unknown, expired or signed out, the
 * reader is banned, or a ban revoked it.
 */
export async function verifySession(store: TenantStore, clock: Clock, token: string): Promise<SessionReader> {
  const [row] = await store.sql.query<{
    id: string;
    name: string;
    avatarUrl: string | null;
    email: string | null;
    method: SignInMethod;
    banned: boolean;
    revoked: boolean;
  }>(LOOKUP, [sha256(token, "hex"), clock.now()], "session_lookup");
  if (!row) throw errors.invalidIdentity("The reader session is unknown, has expired or was signed out: sign in again.");
  if (row.banned) throw errors.invalidIdentity("This reader is banned: their sessions no longer sign them in.");
  if (row.revoked) throw errors.invalidIdentity("This session was revoked by a ban on the reader: sign in again.");
  return { id: row.id, name: row.name, avatarUrl: row.avatarUrl, email: row.email, badge: null, method: row.method };
}

/** Ends the session (POST /me/sign-out): refused on every instance from now on. */
export async function endSession(store: TenantStore, token: string): Promise<void> {
  await store.sql.query("DELETE FROM reader_sessions WHERE tenant_id = $1 AND token_hash = $2", [sha256(token, "hex")], "session_end");
}

/** The session reader's new name (PATCH /me): on their row, so their next comments carry it. */
export async function renameSessionReader(store: TenantStore, clock: Clock, readerId: string, name: string): Promise<void> {
  await store.sql.query(
    "UPDATE readers SET name = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2",
    [readerId, name, clock.now()],
    "session_rename",
  );
}

/** How a reader last signed in through the hosted pages (their page in the console); null: never. */
export async function lastSignIn(
  store: TenantStore,
  readerId: string,
): Promise<{ method: SignInMethod; provider: string | null; at: Date } | null> {
  const [row] = await store.sql.query<{ method: SignInMethod; provider: string | null; at: Date }>(
    `SELECT method, provider, created_at AS at FROM reader_sessions WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at DESC LIMIT 1`,
    [readerId],
    "session_last",
  );
  return row ?? null;
}
