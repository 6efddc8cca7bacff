// Reader identity assertion (X-Service-Identity): HS256 JWT signed with the tenant's identity secret.
import { errors as joseErrors, jwtVerify } from "jose";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";

export interface ReaderIdentity {
  id: string;
  name: string;
  avatarUrl: string | null;
}

const MAX_LIFETIME_SECONDS = 3600;
const enc = new TextEncoder();

export async function verifyIdentity(token: string, secret: string, clock: Clock): Promise<ReaderIdentity> {
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
  const { sub, name, avatarUrl, exp, iat } = payload as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof sub !== "string" || sub.length === 0 || sub.length > 255) problems.push("'sub' must be a string of 1–255 chars");
  if (typeof name !== "string" || name.length === 0 || name.length > 200) problems.push("'name' must be a string of 1–200 chars");
  if (avatarUrl !== undefined && avatarUrl !== null && typeof avatarUrl !== "string") problems.push("'avatarUrl' must be a string");
  const nowSec = Math.floor(clock.now().getTime() / 1000);
  const start = typeof iat === "number" ? iat : nowSec;
  if (typeof exp === "number" && exp - start > MAX_LIFETIME_SECONDS) problems.push("'exp' must be at most 1 h after 'iat'");
  if (problems.length) throw errors.invalidIdentity(`The identity assertion is invalid: ${problems.join("; ")}.`);
  return { id: sub as string, name: name as string, avatarUrl: typeof avatarUrl === "string" ? avatarUrl : null };
}
