// Guests of the hosted sign-in (contract section 20): a name (and, if the tenant wants one, an
// address) behind an ALTCHA proof of work instead of a third-party captcha. The challenge is signed
// with a key of the tenant's own (derived from ADMIN_JWT_SECRET), so one tenant's challenge is no
// solution for another; altcha-lib (its v1 protocol, the contract's shape) makes and checks it. A
// solution is single use (its challenge is recorded as spent in sign_in_tokens, an insert that a
// replay finds taken) and expires 5 minutes after the challenge was made (the injectable clock). A
// filled honeypot field `website` is refused. Nothing is written for a refused attempt. An address a
// guest gives earns a confirmation link (email-link.ts); readers.email stays null until it is followed.
// Under engine/: the tenant comes from the path, not from a request context of a key.
import { createHmac, randomBytes } from "node:crypto";
import { createChallenge, extractParams, verifySolution } from "altcha-lib/v1";
import type { Challenge, Payload } from "altcha-lib/v1/types";
import type { AppServices } from "../../../context/services.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { GUEST_PREFIX, startSession } from "../../../auth/reader-sessions.js";
import { plausibleAddress } from "../../../auth/identity.js";
import { errors, type FieldError } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { sendGuestConfirmation } from "./email-link.js";
import { pickLanguage } from "./strings.js";
import { isReaderName, READER_NAME_RULE } from "../../../lib/reader-name.js";

/** How long a challenge may be solved and used. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/**
 * The work: the secret number is below this, so a solver hashes half of it on average. Measured
 * (`npm run bench:proof-of-work`): at 4× slower than this machine's CPU, as a mid-range phone, p50
 * 0.4 s and p90 0.9 s on one thread; 50,000 took 2.5 s there. It costs a native bot little: the
 * challenge's worth is single use with the per-address budget and guests' comments held, not the work.
 */
export const CHALLENGE_MAX_NUMBER = 10_000;

const altchaKey = (app: AppServices, tenantId: string) =>
  createHmac("sha256", app.adminJwtSecret).update(`engagement altcha v1\n${tenantId}`).digest("hex");

/** A new challenge for the tenant's guest form (GET /auth/v1/{tenantId}/challenge). */
export async function guestChallenge(app: AppServices, tenantId: string): Promise<Challenge> {
  const challenge = await createChallenge({
    hmacKey: altchaKey(app, tenantId),
    maxnumber: CHALLENGE_MAX_NUMBER,
    expires: new Date(app.clock.now().getTime() + CHALLENGE_TTL_MS),
  });
  return {
    algorithm: challenge.algorithm,
    challenge: challenge.challenge,
    maxnumber: CHALLENGE_MAX_NUMBER,
    salt: challenge.salt,
    signature: challenge.signature,
  };
}

/** The base64 JSON of a solved challenge, or null when it is not one. */
function decodeSolution(value: unknown): Payload | null {
  if (typeof value !== "string" || value.length > 2048) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const p = parsed as Record<string, unknown>;
  const strings = ["algorithm", "challenge", "salt", "signature"].every((k) => typeof p[k] === "string" && (p[k] as string).length <= 512);
  return strings && Number.isSafeInteger(p.number) ? (p as unknown as Payload) : null;
}

const SPEND = `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, created_at, expires_at)
  VALUES ($1, 'altcha', $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1 AS spent`;

export interface GuestInput {
  name?: unknown;
  email?: unknown;
  altcha?: unknown;
  website?: unknown;
  /** the page's language, for the confirmation email */
  lang?: unknown;
}

/**
 * Signs a guest in (POST /auth/v1/{tenantId}/guest): 201 {token, reader}. 422 for a filled honeypot,
 * a bad name or address, or a solution that is missing, forged, expired or already used.
 */
export async function guestSignIn(app: AppServices, tenant: Tenant, input: GuestInput) {
  const settings = resolveSettings(tenant.settings).signIn;
  const unknown = Object.keys(input).filter((k) => !["name", "email", "altcha", "website", "lang"].includes(k));
  if (unknown.length) throw errors.validation(unknown.map((path) => ({ path, message: "is not a known field" })));
  // the honeypot first: a bot that fills every field learns nothing else
  if (input.website !== undefined && input.website !== null && input.website !== "") {
    throw errors.validation([{ path: "website", message: "must be left empty" }]);
  }
  const problems: FieldError[] = [];
  const name = typeof input.name === "string" ? input.name.trim() : input.name;
  if (!isReaderName(name)) {
    problems.push({ path: "name", message: READER_NAME_RULE });
  }
  const email = typeof input.email === "string" && input.email.trim() !== "" ? input.email.trim() : null;
  if (email !== null && !plausibleAddress(email)) problems.push({ path: "email", message: "must be an email address" });
  if (email === null && settings.guest.requireEmail) problems.push({ path: "email", message: "is required" });
  const solution = decodeSolution(input.altcha);
  if (!solution) problems.push({ path: "altcha", message: "must be a solved challenge (base64 JSON of ALTCHA's payload)" });
  if (problems.length) throw errors.validation(problems);

  const expires = Number(extractParams(solution!).expires);
  if (!Number.isFinite(expires) || expires * 1000 <= app.clock.now().getTime()) {
    throw errors.validation([{ path: "altcha", message: "has expired: solve a new challenge" }]);
  }
  // checkExpires false: the expiry was judged above by the injectable clock
  if (!(await verifySolution(solution!, altchaKey(app, tenant.id), false))) {
    throw errors.validation([{ path: "altcha", message: "does not solve a challenge of this site" }]);
  }
  const store = app.stores(tenant.id);
  const now = app.clock.now();
  const spent = await store.sql.query(SPEND, [sha256(solution!.challenge, "hex"), now, new Date(expires * 1000)], "altcha_spend");
  if (spent.length === 0) throw errors.validation([{ path: "altcha", message: "was already used: solve a new challenge" }]);

  const id = GUEST_PREFIX + randomBytes(16).toString("base64url");
  // an address a guest gives is not theirs until a link confirms it: it earns no email before then
  const session = await startSession(
    store,
    app.clock,
    { id, name: name as string, avatarUrl: null, email: null, method: "guest" },
    settings.sessionDays,
  );
  if (email !== null) await sendGuestConfirmation(app, tenant, { readerId: id, address: email, lang: pickLanguage(input.lang, undefined) });
  return session;
}
