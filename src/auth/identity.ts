// Reader identity assertion (X-Service-Identity): HS256 JWT signed with the tenant's identity secret.
// During a rotation's overlap (settings identity.secretOverlapHours, 24 h by default) the previous
// secret verifies too: a `kid` header picks the secret (its kid is identitySecretKid's digest of it);
// without one, the current secret is tried first, then the previous.
import { createHash } from "node:crypto";
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from "jose";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { HTTP_URL_RULE, isHttpUrl } from "../lib/http-url.js";
import { parseBadge } from "../lib/badge.js";
import { CONTROL_CHARS as CONTROL, isReaderName } from "../lib/reader-name.js";

export interface ReaderIdentity {
  id: string;
  name: string;
  avatarUrl: string | null;
  /**
   * The reader's email address, for reply emails only (contract section 15): an assertion's `email`
   * claim (the tenant's backend vouches for it); a provider's token gives it only with `email_verified`.
   */
  email?: string | null;
  /** The assertion's `badge` claim (contract section 21; src/lib/badge.ts); absent: none. */
  badge?: string | null;
}

/** What an `email` claim must look like to be kept (anything else is ignored, not refused). */
export const plausibleAddress = (v: unknown): v is string =>
  typeof v === "string" && v.length <= 320 && /^[^\s<>@,;]+@[^\s<>@,;]+\.[^\s<>@,;]+$/.test(v);

const MAX_LIFETIME_SECONDS = 3600;
/** Clock skew tolerated for `iat` in the future (contract section 9). */
const MAX_IAT_SKEW_SECONDS = 60;
const enc = new TextEncoder();

/**
 * Verified assertions, by token, with the secret that verified each: a page sends the same assertion
 * with every request for up to an hour, so each is verified once (its header not even decoded again).
 * A hit counts only while that secret is still one of the tenant's and before `exp` (to the second).
 */
const verified = new Map<string, { identity: ReaderIdentity; exp: number; secret: string }>();
const MAX_VERIFIED = 10_000;

/** A secret's `kid`: the first 16 hex digits of its SHA-256 (public, and stable for the secret). */
export const identitySecretKid = (secret: string): string => createHash("sha256").update(secret).digest("hex").slice(0, 16);

/**
 * The assertion's reader, verified with the secret its `kid` names, or else with each secret in turn
 * (the current one first). A secret's kid is only computed for a token that names one.
 */
export async function verifyIdentity(token: string, secrets: readonly string[], clock: Clock): Promise<ReaderIdentity> {
  // an assertion verified before, with a secret the tenant still has, until it expires: the same answer
  const hit = verified.get(token);
  if (hit && clock.now().getTime() < hit.exp * 1000 && secrets.includes(hit.secret)) return hit.identity;
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw errors.invalidIdentity("The identity assertion's signature or format is not valid.");
  }
  if (kid !== undefined) {
    const named = secrets.find((secret) => identitySecretKid(secret) === kid);
    if (named === undefined)
      throw errors.invalidIdentity(`The identity assertion's kid ${JSON.stringify(kid)} names no current identity secret of the tenant.`);
    return verifyWith(token, named, clock);
  }
  let first: unknown;
  for (const secret of secrets) {
    try {
      return await verifyWith(token, secret, clock);
    } catch (err) {
      first ??= err;
    }
  }
  throw first;
}

async function verifyWith(token: string, secret: string, clock: Clock): Promise<ReaderIdentity> {
  const identity = await verifyUncached(token, secret, clock);
  verified.delete(token);
  if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
  verified.set(token, { identity, exp: identity.exp, secret });
  return identity;
}

async function verifyUncached(token: string, secret: string, clock: Clock): Promise<ReaderIdentity & { exp: number }> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, enc.encode(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "sub"],
      currentDate: clock.now(),
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw errors.invalidIdentity("The identity assertion has expired.");
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      throw errors.invalidIdentity(`The identity assertion is invalid: ${err.message}.`);
    }
    throw errors.invalidIdentity("The identity assertion's signature or format is not valid.");
  }
  const { sub, name, avatarUrl, email, badge, exp, iat } = payload as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof sub !== "string" || sub.length === 0 || sub.length > 255 || CONTROL.test(sub)) {
    problems.push("'sub' must be a string of 1–255 chars without control characters");
  }
  if (!isReaderName(name)) {
    problems.push("'name' must be a string of 1–200 chars without control characters");
  }
  if (avatarUrl !== undefined && avatarUrl !== null && !isHttpUrl(avatarUrl)) {
    // avatars are shown in pages: the shared rule keeps `javascript:` or `data:` from an <img>
    problems.push(`'avatarUrl' ${HTTP_URL_RULE}`);
  }
  const claimedBadge = parseBadge(badge);
  if ("problem" in claimedBadge) problems.push(`'badge' ${claimedBadge.problem}`);
  const nowSec = Math.floor(clock.now().getTime() / 1000);
  if (typeof iat === "number" && iat > nowSec + MAX_IAT_SKEW_SECONDS) problems.push("'iat' must not be in the future");
  const start = typeof iat === "number" ? iat : nowSec;
  if (typeof exp === "number" && exp - start > MAX_LIFETIME_SECONDS) problems.push("'exp' must be at most 1 h after 'iat'");
  if (problems.length) throw errors.invalidIdentity(`The identity assertion is invalid: ${problems.join("; ")}.`);
  return {
    id: sub as string,
    name: name as string,
    avatarUrl: typeof avatarUrl === "string" ? avatarUrl : null,
    email: plausibleAddress(email) ? email : null,
    badge: "badge" in claimedBadge ? claimedBadge.badge : null,
    exp: exp as number,
  };
}
