/**
 * Endpoint signing secrets at rest: sealed with the app's SecretBox (AES-256-GCM), each with an
 * 8-hex `kid`. The newest secret (validUntil = null) signs; after a rotation the previous one
 * carries `validUntil` (24 h later) and is only listed, never used to sign (API.md §0 "Signature").
 */
import type { SecretBox } from "../lib/secret-box.js";

/** How long the previous secret stays valid after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface SealedSecret {
  kid: string;
  secretEnc: string;
  validUntil: Date | null;
}

export interface SigningKey {
  kid: string;
  secret: string;
}

/**
 * Every secret valid at `now`, the signing one first: the Standard Webhooks signature carries one
 * entry per secret during a rotation's overlap.
 */
export function validSecrets(box: SecretBox, secrets: readonly SealedSecret[], now: Date): string[] {
  return [...secrets]
    .filter((s) => s.validUntil === null || s.validUntil.getTime() > now.getTime())
    .sort((a, b) => (a.validUntil === null ? -1 : b.validUntil === null ? 1 : b.validUntil.getTime() - a.validUntil.getTime()))
    .map((s) => box.open(s.secretEnc));
}

/** The key that signs now: the one secret without `validUntil`. */
export function currentSigningKey(box: SecretBox, secrets: readonly SealedSecret[]): SigningKey | null {
  const current = secrets.find((s) => s.validUntil === null);
  return current ? { kid: current.kid, secret: box.open(current.secretEnc) } : null;
}
