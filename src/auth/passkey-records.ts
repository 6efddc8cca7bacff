// The stored side of passkeys (contract section 29), one for readers' (reader_passkeys: their owner a
// reader, src/modules/sign-in/engine/passkeys.ts) and console operators' (operator_passkeys: an
// operator, src/modules/console/engine/passkeys.ts); the ceremonies' checks are webauthn.ts's:
//  - registration: the owner's user handle (their first passkey's, or 32 new random bytes: the same
//    for all of an owner's passkeys, so an authenticator replaces rather than piles up; never their id
//    or an address), their credentials to exclude, and a challenge kept in sign_in_tokens (only its
//    SHA-256, CHALLENGE_TTL_MS, single use) with the owner it was given to; then the credential that
//    signed it, checked and stored for that owner alone;
//  - a sign-in's assertion: the account it names (its user handle) the passkey's, its signature and
//    counter checked (webauthn.ts), the counter moved forward once by a guarded UPDATE (two uses of
//    one signature race there and one loses), with when it was last used;
//  - the owner's list (newest first) and the removal of one of theirs.
import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { TenantStore } from "../db/tenant-store.js";
import { errors } from "../lib/errors.js";
import { newId } from "../lib/ids.js";
import { sha256 } from "../lib/sha256.js";
import { spendOneTimeToken } from "./one-time-tokens.js";
import {
  CHALLENGE_TTL_MS,
  defaultPasskeyLabel,
  signedChallenge,
  verifyAuthentication,
  verifyRegistration,
  type RelyingParty,
  type StoredCredential,
} from "./webauthn.js";

/** A passkey as its owner sees it (GET /api/v1/me/passkeys, GET /console/auth/passkeys). */
export interface Passkey {
  id: string;
  label: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Whose passkeys: their table, the column naming the owner, the kind of their registration challenges. */
export interface PasskeyOwners {
  table: "reader_passkeys" | "operator_passkeys";
  column: "reader_id" | "operator_id";
  challengeKind: string;
  /** "reader" | "operator", for what a refusal says */
  who: string;
}

export const READER_PASSKEYS: PasskeyOwners = {
  table: "reader_passkeys",
  column: "reader_id",
  challengeKind: "passkey_registration",
  who: "reader",
};
export const OPERATOR_PASSKEYS: PasskeyOwners = {
  table: "operator_passkeys",
  column: "operator_id",
  challengeKind: "console_passkey_registration",
  who: "operator",
};

/** A ceremony's challenge: 32 random bytes, base64url. */
export const newChallenge = (): string => randomBytes(32).toString("base64url");

const VIEW = `id, label, created_at AS "createdAt", last_used_at AS "lastUsedAt"`;

/** The owner's passkeys, newest first. */
export function listPasskeys(store: TenantStore, owners: PasskeyOwners, ownerId: string): Promise<Passkey[]> {
  return store.sql.query<Passkey>(
    `SELECT ${VIEW} FROM ${owners.table} WHERE tenant_id = $1 AND ${owners.column} = $2 ORDER BY created_at DESC, id`,
    [ownerId],
    `${owners.table}_list`,
  );
}

/** Removes one of the owner's passkeys; 404 for an id that is not theirs. */
export async function deletePasskey(store: TenantStore, owners: PasskeyOwners, ownerId: string, id: string): Promise<void> {
  const gone = await store.sql.query(
    `DELETE FROM ${owners.table} WHERE tenant_id = $1 AND ${owners.column} = $2 AND id = $3 RETURNING id`,
    [ownerId, id],
    `${owners.table}_delete`,
  );
  if (!gone.length) throw errors.notFound("Passkey");
}

/** What registration options are made of: a challenge kept for the owner, their user handle, their credentials to exclude. */
export async function beginRegistration(
  store: TenantStore,
  owners: PasskeyOwners,
  ownerId: string,
  now: Date,
): Promise<{ challenge: string; userHandle: Uint8Array; exclude: Pick<StoredCredential, "credentialId" | "transports">[] }> {
  const held = await store.sql.query<{ credentialId: string; transports: string[] | null; userHandle: string }>(
    `SELECT credential_id AS "credentialId", transports, user_handle AS "userHandle"
       FROM ${owners.table} WHERE tenant_id = $1 AND ${owners.column} = $2 ORDER BY created_at`,
    [ownerId],
    `${owners.table}_held`,
  );
  const userHandle = held[0]?.userHandle ?? randomBytes(32).toString("base64url");
  const challenge = newChallenge();
  await store.sql.query(
    `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, data, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      owners.challengeKind,
      sha256(challenge, "hex"),
      JSON.stringify({ ownerId, userHandle }),
      now,
      new Date(now.getTime() + CHALLENGE_TTL_MS),
    ],
    `${owners.table}_challenge`,
  );
  return {
    challenge,
    userHandle: new Uint8Array(Buffer.from(userHandle, "base64url")),
    exclude: held.map((c) => ({ credentialId: c.credentialId, transports: c.transports ?? [] })),
  };
}

/**
 * The credential the browser made with those options: its challenge spent (once, on any instance),
 * checked, stored for the owner it was given to → the passkey. 400 passkey_invalid for a challenge
 * unknown, spent, expired or another owner's, a credential that does not verify or is stored already.
 */
export async function finishRegistration(
  store: TenantStore,
  owners: PasskeyOwners,
  ownerId: string,
  rp: RelyingParty,
  credential: RegistrationResponseJSON,
  label: string | undefined,
  now: Date,
): Promise<Passkey> {
  const challenge = signedChallenge(credential);
  const kept = challenge
    ? await spendOneTimeToken<{ ownerId: string; userHandle: string }>(store, owners.challengeKind, challenge, now, `${owners.table}_spend`)
    : null;
  if (!kept) throw errors.passkeyInvalid("its challenge is unknown, used or expired: ask for new options.");
  if (kept.ownerId !== ownerId) throw errors.passkeyInvalid(`its challenge was given to another ${owners.who}.`);
  const made = await verifyRegistration(rp, credential, challenge!);
  const [row] = await store.sql.query<Passkey>(
    `INSERT INTO ${owners.table} (tenant_id, id, ${owners.column}, credential_id, public_key, counter, transports, user_handle, device_type, backed_up, label, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT DO NOTHING RETURNING ${VIEW}`,
    [
      newId("pk"),
      ownerId,
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
    `${owners.table}_insert`,
  );
  if (!row) throw errors.passkeyInvalid("this credential is registered already.");
  return row;
}

/** A stored passkey as a sign-in reads it (its counter as text: a bigint). */
export interface StoredPasskey {
  id: string;
  publicKey: Uint8Array;
  counter: string;
  transports: string[] | null;
  userHandle: string;
}

/** 401 passkey_refused unless the assertion names the account the passkey was made for (when it names one). */
export function assertSameAccount(credential: AuthenticationResponseJSON, stored: Pick<StoredPasskey, "userHandle">): void {
  const handle = credential.response.userHandle;
  if (handle !== undefined && handle !== stored.userHandle) throw errors.passkeyRefused("the credential names another account.");
}

/** The assertion checked against the stored passkey (401 passkey_refused), and the passkey's use recorded. */
export async function acceptAssertion(
  store: TenantStore,
  owners: PasskeyOwners,
  rp: RelyingParty,
  credential: AuthenticationResponseJSON,
  challenge: string,
  stored: StoredPasskey,
  now: Date,
): Promise<void> {
  const newCounter = await verifyAuthentication(rp, credential, challenge, {
    credentialId: credential.id,
    publicKey: stored.publicKey,
    counter: Number(stored.counter),
    transports: stored.transports ?? [],
  });
  await recordUse(store, owners, stored.id, newCounter, now);
}

/** A passkey that signed in: its new counter and when, once; 401 passkey_refused when the counter did not go up. */
async function recordUse(store: TenantStore, owners: PasskeyOwners, id: string, newCounter: number, now: Date): Promise<void> {
  const moved = await store.sql.query(
    `UPDATE ${owners.table} SET counter = $3, last_used_at = $4 WHERE tenant_id = $1 AND id = $2 AND (counter < $3 OR $3 = 0) RETURNING id`,
    [id, newCounter, now],
    `${owners.table}_used`,
  );
  if (!moved.length) throw errors.passkeyRefused("its signature counter went backwards, as a cloned authenticator's does.");
}
