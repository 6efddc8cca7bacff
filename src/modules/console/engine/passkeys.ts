// Console operators' passkeys (contract section 29: an operator adds one and signs in with it instead of
// a console link; the ceremonies' checks in src/auth/webauthn.ts, their rows in
// src/auth/passkey-records.ts, as readers' are):
//  - registration: a signed-in operator asks for options; the challenge is kept in sign_in_tokens under
//    the operator's tenant (kind console_passkey_registration, only its SHA-256, 5 minutes, single use)
//    with the operator it was given to; the credential that signed it is stored in operator_passkeys
//    for that operator alone (its public key, counter, transports, user handle, device type, backup
//    state, a label, when it was added and last used);
//  - the user handle the authenticator keeps is 32 random bytes per operator (the same for all of an
//    operator's passkeys, so an authenticator replaces rather than piles up), never their id or email;
//  - sign-in: the tenant is unknown until the credential is found, so the challenge is kept nowhere
//    when it is given: it is stateless, signed (signChallenge: an expiry, 16 random bytes and an
//    HMAC-SHA256 of both with the admin JWT secret, as console links are signed). The assertion's
//    challenge is checked (its MAC and expiry) and its credential found among every tenant's operator
//    passkeys (credential ids are unique); then the challenge is spent once by an insert into
//    console_links under the operator's tenant (the SHA-256 of the challenge as the row's id, kept
//    until the challenge expires): a second use, on any instance, finds the row and is refused, as a
//    second use of a console link is; only then are the signature and the counter checked (the
//    counter moved by a guarded UPDATE). Every refusal is 401 passkey_refused.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { AppServices } from "../../../context/services.js";
import type { Operator } from "../../../generated/prisma/client.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import type { SignedInOperatorRow } from "./operators.js";
import {
  beginRegistration,
  deletePasskey,
  finishRegistration,
  listPasskeys,
  OPERATOR_PASSKEYS,
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

/** The signed-in operator a registration is for (the console session's principal). */
export interface SignedInOperator {
  tenantId: string;
  operatorId: string;
  email: string;
}

/** The operator's passkeys, newest first. */
export const listOperatorPasskeys = (app: AppServices, op: SignedInOperator): Promise<Passkey[]> =>
  listPasskeys(app.stores(op.tenantId), OPERATOR_PASSKEYS, op.operatorId);

/** Removes one of the operator's passkeys; 404 for an id that is not theirs. */
export const deleteOperatorPasskey = (app: AppServices, op: SignedInOperator, id: string): Promise<void> =>
  deletePasskey(app.stores(op.tenantId), OPERATOR_PASSKEYS, op.operatorId, id);

/** Registration options for the operator (POST /console/auth/passkeys/options): their passkeys excluded. */
export async function operatorRegistrationOptions(app: AppServices, op: SignedInOperator, rp: RelyingParty) {
  const begun = await beginRegistration(app.stores(op.tenantId), OPERATOR_PASSKEYS, op.operatorId, app.clock.now());
  const tenant = await tenantRow(app, op.tenantId);
  return registrationOptions({
    rp,
    challenge: begun.challenge,
    // the browser's list holds every passkey of the service's host (readers' too): the tenant tells them apart
    userName: `${op.email} · ${tenant?.name ?? op.tenantId} console`,
    userDisplayName: op.email,
    userHandle: begun.userHandle,
    exclude: begun.exclude,
  });
}

/**
 * The credential the browser made with those options (POST /console/auth/passkeys
 * {"credential","label"?}): its challenge spent, checked, stored for the operator it was given to →
 * the passkey. 400 passkey_invalid for another operator's challenge, one that does not verify, or a
 * credential registered already.
 */
export function registerOperatorPasskey(app: AppServices, op: SignedInOperator, rp: RelyingParty, body: unknown): Promise<Passkey> {
  const credential = readCredential<RegistrationResponseJSON>(body);
  const label = readLabel(body);
  return finishRegistration(app.stores(op.tenantId), OPERATOR_PASSKEYS, op.operatorId, rp, credential, label, app.clock.now());
}

// --- sign-in: the stateless challenge (see the file's head)

/** version (1 byte) · expiry in ms (8) · random (16) · HMAC-SHA256 of those (32): 57 bytes, 76 characters of base64url */
const SIGNED_PART = 25;
const CHALLENGE_BYTES = SIGNED_PART + 32;
const challengeMac = (secret: string, signed: Buffer) => createHmac("sha256", secret).update("console-passkey.").update(signed).digest();

/** A sign-in challenge good until `now` + CHALLENGE_TTL_MS, signed with `secret`. */
export function signChallenge(secret: string, now: Date): string {
  const signed = Buffer.alloc(SIGNED_PART);
  signed.writeUInt8(1, 0);
  signed.writeBigUInt64BE(BigInt(now.getTime() + CHALLENGE_TTL_MS), 1);
  randomBytes(16).copy(signed, 9);
  return Buffer.concat([signed, challengeMac(secret, signed)]).toString("base64url");
}

/** When a challenge this instance (or another with the same secret) signed expires; null for any other, or one expired. */
export function challengeExpiry(secret: string, challenge: string, now: Date): Date | null {
  const bytes = Buffer.from(challenge, "base64url");
  if (bytes.length !== CHALLENGE_BYTES || bytes.toString("base64url") !== challenge || bytes[0] !== 1) return null;
  const signed = bytes.subarray(0, SIGNED_PART);
  if (!timingSafeEqual(bytes.subarray(SIGNED_PART), challengeMac(secret, signed))) return null;
  const expires = Number(signed.readBigUInt64BE(1));
  return expires > now.getTime() ? new Date(expires) : null;
}

/** Sign-in options (POST /console/auth/passkeys/authentication-options): a signed challenge, for any operator's passkey. */
export function operatorAuthenticationOptions(app: AppServices, rp: RelyingParty) {
  return authenticationOptions(rp, signChallenge(app.adminJwtSecret, app.clock.now()));
}

interface StoredRow extends StoredPasskey {
  tenantId: string;
  operatorId: string;
  email: string;
  role: Operator["role"];
}

/** The id of a credential in a body (for the throttle's count), or 422 when the body holds no credential. */
export const credentialIdOf = (body: unknown): string => readCredential<AuthenticationResponseJSON>(body).id;

/**
 * Signs in with a passkey (POST /console/auth/passkeys/authenticate {"credential"}): its operator, or
 * 401 passkey_refused (see the file's head). The caller opens the session.
 */
export async function authenticateOperator(app: AppServices, rp: RelyingParty, body: unknown): Promise<SignedInOperatorRow> {
  const credential = readCredential<AuthenticationResponseJSON>(body);
  const now = app.clock.now();
  const challenge = signedChallenge(credential);
  const expires = challenge ? challengeExpiry(app.adminJwtSecret, challenge, now) : null;
  if (!challenge || !expires) throw errors.passkeyRefused("its challenge is unknown, used or expired: start again.");
  // the credential among every tenant's operators' (unique across them): the one read that crosses tenants
  const [stored] = await app.sql.query<StoredRow>(
    `SELECT p.id, p.tenant_id AS "tenantId", p.operator_id AS "operatorId", o.email, o.role::text AS role, p.public_key AS "publicKey",
            p.counter::text AS counter, p.transports, p.user_handle AS "userHandle"
       FROM operator_passkeys p JOIN operators o ON o.id = p.operator_id WHERE p.credential_id = $1`,
    [credential.id],
    "operator_passkey_find",
  );
  if (!stored) throw errors.passkeyRefused("no operator's passkey has this credential.");
  assertSameAccount(credential, stored);
  const store = app.stores(stored.tenantId);
  // spent once, on any instance, whatever follows: the second insert of the same challenge finds the first
  const spent = await store.sql.query(
    `INSERT INTO console_links (tenant_id, id, operator_id, expires_at, used_at, created_at) VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [sha256(`console-passkey.${challenge}`, "hex"), stored.operatorId, expires, now],
    "operator_passkey_spend_challenge",
  );
  if (!spent.length) throw errors.passkeyRefused("its challenge is unknown, used or expired: start again.");
  await acceptAssertion(store, OPERATOR_PASSKEYS, rp, credential, challenge, stored, now);
  return { id: stored.operatorId, tenantId: stored.tenantId, email: stored.email, role: stored.role };
}
