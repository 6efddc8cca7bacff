// Readers' passkeys (contract section 29; the ceremonies' checks in src/auth/webauthn.ts):
//  - registration: a reader of any identity (a hosted session, the site's assertion, a provider's
//    token) asks for options; the challenge is kept in sign_in_tokens (kind passkey_registration, only
//    its SHA-256, 5 minutes, single use) with the reader it was given to; the credential that signed
//    it is stored in reader_passkeys for that reader alone;
//  - sign-in: options with a fresh challenge (kind passkey_authentication), then the assertion: the
//    challenge it signed is spent (once, on any instance), the credential looked up on the tenant of
//    the path only (another tenant's passkey is unknown here), the signature and the counter checked,
//    and a session started for its reader (method `passkey`), as every hosted method does;
//  - the user handle the authenticator keeps is 32 random bytes per reader and tenant (the same for
//    all of a reader's passkeys, so an authenticator replaces rather than piles up), never the
//    reader's id or an address;
//  - erasure deletes the reader's passkeys (eng_erase_reader); the export lists them.
import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { AppServices } from "../../../context/services.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import type { ReaderIdentity } from "../../../auth/identity.js";
import type { TenantStore } from "../../../db/tenant-store.js";
import { startSession } from "../../../auth/reader-sessions.js";
import { spendOneTimeToken } from "../../../auth/one-time-tokens.js";
import {
  authenticationOptions,
  CHALLENGE_TTL_MS,
  defaultPasskeyLabel,
  readCredential,
  readLabel,
  registrationOptions,
  signedChallenge,
  verifyAuthentication,
  verifyRegistration,
  type RelyingParty,
} from "../../../auth/webauthn.js";
import { errors } from "../../../lib/errors.js";
import { newId } from "../../../lib/ids.js";
import { sha256 } from "../../../lib/sha256.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { SignedIn } from "./pages.js";

/** A passkey as its reader sees it (GET /api/v1/me/passkeys). */
export interface Passkey {
  id: string;
  label: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const newChallenge = () => randomBytes(32).toString("base64url");

/** Keeps a ceremony's challenge (its hash) for CHALLENGE_TTL_MS. */
async function keepChallenge(app: AppServices, tenantId: string, kind: string, challenge: string, data: Record<string, unknown>) {
  const now = app.clock.now();
  await app
    .stores(tenantId)
    .sql.query(
      `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, data, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [kind, sha256(challenge, "hex"), JSON.stringify(data), now, new Date(now.getTime() + CHALLENGE_TTL_MS)],
      "passkey_challenge",
    );
}

const PASSKEY_COLUMNS = `id, label, created_at AS "createdAt", last_used_at AS "lastUsedAt"`;

/** The reader's passkeys, newest first. */
export function listPasskeys(store: TenantStore, readerId: string): Promise<Passkey[]> {
  return store.sql.query<Passkey>(
    `SELECT ${PASSKEY_COLUMNS} FROM reader_passkeys WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at DESC, id`,
    [readerId],
    "passkeys_list",
  );
}

/** Removes one of the reader's passkeys; 404 for an id that is not theirs. */
export async function deletePasskey(store: TenantStore, readerId: string, id: string): Promise<void> {
  const gone = await store.sql.query(
    "DELETE FROM reader_passkeys WHERE tenant_id = $1 AND reader_id = $2 AND id = $3 RETURNING id",
    [readerId, id],
    "passkey_delete",
  );
  if (!gone.length) throw errors.notFound("Passkey");
}

/** The reader's user handle (their first passkey's), or a new one. */
async function userHandleOf(store: TenantStore, readerId: string): Promise<string> {
  const [row] = await store.sql.query<{ userHandle: string }>(
    `SELECT user_handle AS "userHandle" FROM reader_passkeys WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at LIMIT 1`,
    [readerId],
    "passkey_user_handle",
  );
  return row?.userHandle ?? randomBytes(32).toString("base64url");
}

/** Registration options for the reader (POST …/passkeys/options): their passkeys excluded. */
export async function passkeyRegistrationOptions(app: AppServices, tenant: Tenant, reader: ReaderIdentity, rp: RelyingParty) {
  const store = app.stores(tenant.id);
  const userHandle = await userHandleOf(store, reader.id);
  const exclude = await store.sql.query<{ credentialId: string; transports: string[] | null }>(
    `SELECT credential_id AS "credentialId", transports FROM reader_passkeys WHERE tenant_id = $1 AND reader_id = $2`,
    [reader.id],
    "passkey_exclude",
  );
  const challenge = newChallenge();
  await keepChallenge(app, tenant.id, "passkey_registration", challenge, { readerId: reader.id, userHandle });
  return registrationOptions({
    rp,
    challenge,
    // the autofill lists every passkey of the service's host: the site's name tells them apart
    userName: `${reader.name} · ${tenant.name}`,
    userDisplayName: reader.name,
    userHandle: Buffer.from(userHandle, "base64url"),
    exclude: exclude.map((c) => ({ credentialId: c.credentialId, transports: c.transports ?? [] })),
  });
}

/**
 * The credential the browser made with those options (POST …/passkeys {"credential","label"?}): its
 * challenge spent, checked, stored for the reader it was given to → 201 the passkey. 400
 * passkey_invalid for another reader's challenge or one that does not verify.
 */
export async function registerPasskey(
  app: AppServices,
  tenant: Tenant,
  reader: ReaderIdentity,
  rp: RelyingParty,
  body: unknown,
): Promise<Passkey> {
  const credential = readCredential<RegistrationResponseJSON>(body);
  const label = readLabel(body);
  const store = app.stores(tenant.id);
  const challenge = signedChallenge(credential);
  const now = app.clock.now();
  const kept = challenge
    ? await spendOneTimeToken<{ readerId: string; userHandle: string }>(
        store,
        "passkey_registration",
        challenge,
        now,
        "passkey_challenge_spend",
      )
    : null;
  if (!kept) throw errors.passkeyInvalid("its challenge is unknown, used or expired: ask for new options.");
  if (kept.readerId !== reader.id) throw errors.passkeyInvalid("its challenge was given to another reader.");
  const made = await verifyRegistration(rp, credential, challenge!);
  // a reader the site asserts may have no row yet: the session a passkey starts reads their name there
  await store.sql.query(
    `INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (tenant_id, id) DO NOTHING`,
    [reader.id, reader.name, reader.avatarUrl, now],
    "passkey_reader",
  );
  const [row] = await store.sql.query<Passkey>(
    `INSERT INTO reader_passkeys (tenant_id, id, reader_id, credential_id, public_key, counter, transports, user_handle, device_type, backed_up, label, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (tenant_id, credential_id) DO NOTHING RETURNING ${PASSKEY_COLUMNS}`,
    [
      newId("pk"),
      reader.id,
      made.credentialId,
      Buffer.from(made.publicKey),
      made.counter,
      [...made.transports],
      kept.userHandle,
      made.deviceType,
      made.backedUp,
      label ?? defaultPasskeyLabel(now),
      now,
    ],
    "passkey_insert",
  );
  if (!row) throw errors.passkeyInvalid("this credential is registered already.");
  return row;
}

/** Sign-in options (POST …/passkeys/authentication-options): a challenge for any passkey of the site. */
export async function passkeyAuthenticationOptions(app: AppServices, tenant: Tenant, rp: RelyingParty) {
  const challenge = newChallenge();
  await keepChallenge(app, tenant.id, "passkey_authentication", challenge, {});
  return authenticationOptions(rp, challenge);
}

interface StoredRow {
  id: string;
  readerId: string;
  publicKey: Buffer;
  counter: string;
  transports: string[] | null;
  userHandle: string;
}

/**
 * Signs in with a passkey (POST …/passkeys/authenticate {"credential"}): a session of its reader, as
 * every hosted method's; 401 passkey_refused otherwise (see the file's head).
 */
export async function authenticateWithPasskey(app: AppServices, tenant: Tenant, rp: RelyingParty, body: unknown): Promise<SignedIn> {
  const credential = readCredential<AuthenticationResponseJSON>(body);
  const store = app.stores(tenant.id);
  const now = app.clock.now();
  const challenge = signedChallenge(credential);
  const kept = challenge ? await spendOneTimeToken(store, "passkey_authentication", challenge, now, "passkey_challenge_spend") : null;
  if (!kept) throw errors.passkeyRefused("its challenge is unknown, used or expired: start again.");
  const [stored] = await store.sql.query<StoredRow>(
    `SELECT id, reader_id AS "readerId", public_key AS "publicKey", counter::text AS counter, transports, user_handle AS "userHandle"
       FROM reader_passkeys WHERE tenant_id = $1 AND credential_id = $2`,
    [credential.id],
    "passkey_find",
  );
  if (!stored) throw errors.passkeyRefused("no passkey of this site has this credential.");
  const handle = credential.response.userHandle;
  if (handle !== undefined && handle !== stored.userHandle) throw errors.passkeyRefused("the credential names another account.");
  const counter = Number(stored.counter);
  const newCounter = await verifyAuthentication(rp, credential, challenge!, {
    credentialId: credential.id,
    publicKey: stored.publicKey,
    counter,
    transports: stored.transports ?? [],
  });
  // the counter moves forward once: two uses of one signature race here and one loses
  const moved = await store.sql.query(
    `UPDATE reader_passkeys SET counter = $3, last_used_at = $4 WHERE tenant_id = $1 AND id = $2 AND (counter < $3 OR $3 = 0) RETURNING id`,
    [stored.id, newCounter, now],
    "passkey_used",
  );
  if (!moved.length) throw errors.passkeyRefused("its signature counter went backwards, as a cloned authenticator's does.");
  const [reader] = await store.sql.query<{ name: string; avatarUrl: string | null }>(
    `SELECT name, avatar_url AS "avatarUrl" FROM readers WHERE tenant_id = $1 AND id = $2`,
    [stored.readerId],
    "passkey_reader_name",
  );
  if (!reader) throw errors.passkeyRefused("its reader is gone.");
  return startSession(
    store,
    app.clock,
    { id: stored.readerId, name: reader.name, avatarUrl: reader.avatarUrl, email: null, method: "passkey" },
    resolveSettings(tenant.settings).signIn.sessionDays,
  );
}
