// Passkeys' ceremonies (contract section 29), for readers (src/modules/sign-in/engine/passkeys.ts)
// and console operators (src/modules/console/) alike, on SimpleWebAuthn
// (@simplewebauthn/server: options, attestation and assertion checks, CBOR and COSE; nothing of that
// is written here). What this file decides:
//  - the relying party: the host of PUBLIC_URL and its origin; without PUBLIC_URL, outside
//    production, `localhost` and the port the server listens on (a browser refuses an IP address as a
//    relying party); in production without it, 409 passkeys_unavailable;
//  - registration asks for a discoverable credential (resident key required, so the browser can
//    offer it by autofill) and prefers user verification; no attestation is asked for;
//  - a credential in a request body is read into the fields the library takes, bounded in size
//    (readCredential), and the challenge it signed is read back from its client data (signedChallenge),
//    so the route can spend the stored challenge it names once, on any instance.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { Config } from "../config.js";
import { errors } from "../lib/errors.js";

/** How long a ceremony's challenge is good for (the options' `timeout` too). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** A credential's JSON in a body: far above any authenticator's, far below a body limit. */
const MAX_CREDENTIAL_CHARS = 16_384;
const B64URL = /^[A-Za-z0-9_-]*$/;

export interface RelyingParty {
  /** the RP ID: a host name */
  id: string;
  /** the origin the browser's client data must name */
  origin: string;
  /** what the authenticator shows beside the account */
  name: string;
}

/**
 * The relying party of this instance (see the file's head), `listening` the address the server is bound
 * to (public-base.ts's listeningBase); 409 passkeys_unavailable when there is none.
 */
export function relyingParty(config: Pick<Config, "PUBLIC_URL" | "NODE_ENV">, listening: string, name: string): RelyingParty {
  if (config.PUBLIC_URL) {
    const url = new URL(config.PUBLIC_URL);
    return { id: url.hostname, origin: url.origin, name };
  }
  if (config.NODE_ENV === "production") throw errors.passkeysUnavailable();
  const port = new URL(listening).port;
  return { id: "localhost", origin: `http://localhost${port ? `:${port}` : ""}`, name };
}

/** A credential as stored: what an assertion is checked against. */
export interface StoredCredential {
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: readonly string[];
}

/** A registration that verified: what to store. */
export interface NewCredential extends StoredCredential {
  deviceType: "singleDevice" | "multiDevice";
  backedUp: boolean;
}

/**
 * A challenge (base64url) as the bytes the library sends: given a string, it would send that string's
 * UTF-8, and the browser would sign the base64url of that rather than the challenge itself.
 */
const challengeBytes = (challenge: string) => new Uint8Array(Buffer.from(challenge, "base64url"));

/** Registration options: a discoverable credential for `userHandle`, none of `exclude` again. */
export function registrationOptions(opts: {
  rp: RelyingParty;
  challenge: string;
  userName: string;
  userDisplayName: string;
  userHandle: Uint8Array;
  exclude: readonly Pick<StoredCredential, "credentialId" | "transports">[];
}): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: opts.rp.name,
    rpID: opts.rp.id,
    userName: opts.userName,
    userDisplayName: opts.userDisplayName,
    userID: new Uint8Array(opts.userHandle),
    challenge: challengeBytes(opts.challenge),
    timeout: CHALLENGE_TTL_MS,
    attestationType: "none",
    excludeCredentials: opts.exclude.map((c) => ({ id: c.credentialId, transports: transportsOf(c.transports) })),
    authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "preferred" },
  });
}

/** Authentication options for a discoverable credential (no allow-list: the browser offers the passkeys it has). */
export function authenticationOptions(rp: RelyingParty, challenge: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: challengeBytes(challenge),
    timeout: CHALLENGE_TTL_MS,
    userVerification: "preferred",
  });
}

const transportsOf = (t: readonly string[]) => t.filter((x) => x.length <= 32) as AuthenticatorTransport[];

/**
 * The body's `credential` as the library reads it (the JSON @simplewebauthn/browser makes), or 400
 * validation_failed: an object of base64url strings, at most 16 KB in all.
 */
export function readCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(body: unknown): T {
  const bad = (message: string) => errors.validation([{ path: "credential", message }]);
  const credential = typeof body === "object" && body !== null ? (body as Record<string, unknown>).credential : undefined;
  if (typeof credential !== "object" || credential === null || Array.isArray(credential)) {
    throw bad("must be the credential the browser made (an object, as @simplewebauthn/browser answers it)");
  }
  if (JSON.stringify(credential).length > MAX_CREDENTIAL_CHARS) throw bad("is too large");
  const c = credential as Record<string, unknown>;
  const response = c.response as Record<string, unknown> | undefined;
  if (typeof c.id !== "string" || !B64URL.test(c.id) || c.id.length === 0 || c.id.length > 1366) throw bad("needs its id (base64url)");
  if (c.type !== "public-key") throw bad('needs type "public-key"');
  if (typeof response !== "object" || response === null || typeof response.clientDataJSON !== "string") {
    throw bad("needs its response with clientDataJSON");
  }
  return credential as T;
}

/** The challenge the credential's client data signed, or null when it names none. */
export function signedChallenge(credential: RegistrationResponseJSON | AuthenticationResponseJSON): string | null {
  try {
    const data = JSON.parse(Buffer.from(credential.response.clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    return typeof data.challenge === "string" && B64URL.test(data.challenge) && data.challenge.length <= 256 ? data.challenge : null;
  } catch {
    return null;
  }
}

/** A registration checked against its challenge and this relying party: the credential to store, or 400 passkey_invalid. */
export async function verifyRegistration(
  rp: RelyingParty,
  credential: RegistrationResponseJSON,
  challenge: string,
): Promise<NewCredential> {
  let result;
  try {
    result = await verifyRegistrationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch (err) {
    throw errors.passkeyInvalid(err instanceof Error ? err.message : "it does not verify.");
  }
  if (!result.verified || !result.registrationInfo) throw errors.passkeyInvalid("it does not verify.");
  const info = result.registrationInfo;
  return {
    credentialId: info.credential.id,
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    transports: info.credential.transports ?? credential.response.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  };
}

/**
 * An assertion checked against the stored credential: its new counter, or 401 passkey_refused — a
 * bad signature, another origin, and a counter that did not go up where the authenticator keeps one
 * (a cloned authenticator).
 */
export async function verifyAuthentication(
  rp: RelyingParty,
  credential: AuthenticationResponseJSON,
  challenge: string,
  stored: StoredCredential,
): Promise<number> {
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(stored.publicKey),
        counter: stored.counter,
        transports: transportsOf(stored.transports),
      },
      requireUserVerification: false,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : "";
    if (/counter/i.test(message)) {
      throw errors.passkeyRefused(
        "its signature counter went backwards, as a cloned authenticator's does; remove this passkey and add it again.",
      );
    }
    throw errors.passkeyRefused(message || "it does not verify.");
  }
  if (!result.verified) throw errors.passkeyRefused("it does not verify.");
  return result.authenticationInfo.newCounter;
}

/** The label a new passkey gets when none is given: "Passkey" and the day it was added. */
export const defaultPasskeyLabel = (now: Date): string => `Passkey ${now.toISOString().slice(0, 10)}`;

/** A label in a body: 1–60 characters of one line; undefined when absent; 422 otherwise. */
export function readLabel(body: unknown): string | undefined {
  const label = typeof body === "object" && body !== null ? (body as Record<string, unknown>).label : undefined;
  if (label === undefined || label === null) return undefined;
  if (typeof label !== "string" || !label.trim() || label.trim().length > 60 || /[\p{Cc}\u2028\u2029]/u.test(label)) {
    throw errors.validation([{ path: "label", message: "must be 1–60 characters on one line" }]);
  }
  return label.trim();
}
