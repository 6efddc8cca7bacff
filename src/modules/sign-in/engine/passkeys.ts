// Readers' passkeys (contract section 29; the ceremonies' checks in src/auth/webauthn.ts, their rows
// in src/auth/passkey-records.ts, as console operators' are):
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
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { AppServices } from "../../../context/services.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import type { ReaderIdentity } from "../../../auth/identity.js";
import type { TenantStore } from "../../../db/tenant-store.js";
import { startSession } from "../../../auth/reader-sessions.js";
import { spendOneTimeToken } from "../../../auth/one-time-tokens.js";
import {
  beginRegistration,
  deletePasskey as deleteOwned,
  finishRegistration,
  listPasskeys as listOwned,
  newChallenge,
  READER_PASSKEYS,
  acceptAssertion,
  assertSameAccount,
  type Passkey,
  type StoredPasskey,
} from "../../../auth/passkey-records.js";
import {
  authenticationOptions,
  CHALLENGE_TTL_MS,
  readCredential,
  readLabel,
  registrationOptions,
  signedChallenge,
  type RelyingParty,
} from "../../../auth/webauthn.js";
import { errors } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { SignedIn } from "./pages.js";

export type { Passkey };

/** The reader's passkeys, newest first. */
export const listPasskeys = (store: TenantStore, readerId: string): Promise<Passkey[]> => listOwned(store, READER_PASSKEYS, readerId);

/** Removes one of the reader's passkeys; 404 for an id that is not theirs. */
export const deletePasskey = (store: TenantStore, readerId: string, id: string): Promise<void> =>
  deleteOwned(store, READER_PASSKEYS, readerId, id);

/** Registration options for the reader (POST …/passkeys/options): their passkeys excluded. */
export async function passkeyRegistrationOptions(app: AppServices, tenant: Tenant, reader: ReaderIdentity, rp: RelyingParty) {
  const begun = await beginRegistration(app.stores(tenant.id), READER_PASSKEYS, reader.id, app.clock.now());
  return registrationOptions({
    rp,
    challenge: begun.challenge,
    // the autofill lists every passkey of the service's host: the site's name tells them apart
    userName: `${reader.name} · ${tenant.name}`,
    userDisplayName: reader.name,
    userHandle: begun.userHandle,
    exclude: begun.exclude,
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
  const now = app.clock.now();
  // a reader the site asserts may have no row yet: the session a passkey starts reads their name there
  await store.sql.query(
    `INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (tenant_id, id) DO NOTHING`,
    [reader.id, reader.name, reader.avatarUrl, now],
    "passkey_reader",
  );
  return finishRegistration(store, READER_PASSKEYS, reader.id, rp, credential, label, now);
}

/** Sign-in options (POST …/passkeys/authentication-options): a challenge for any passkey of the site, kept for CHALLENGE_TTL_MS. */
export async function passkeyAuthenticationOptions(app: AppServices, tenant: Tenant, rp: RelyingParty) {
  const challenge = newChallenge();
  const now = app.clock.now();
  await app.stores(tenant.id).sql.query(
    // `data` is what spending answers: present, so a spent challenge is told from an unknown one
    `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, data, created_at, expires_at) VALUES ($1, 'passkey_authentication', $2, '{}', $3, $4)`,
    [sha256(challenge, "hex"), now, new Date(now.getTime() + CHALLENGE_TTL_MS)],
    "passkey_challenge",
  );
  return authenticationOptions(rp, challenge);
}

interface StoredRow extends StoredPasskey {
  readerId: string;
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
  assertSameAccount(credential, stored);
  await acceptAssertion(store, READER_PASSKEYS, rp, credential, challenge!, stored, now);
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
