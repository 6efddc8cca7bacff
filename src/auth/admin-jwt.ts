// Admin console JWT: HS256 only (alg pinned), `exp`, `sub` and `tid` required.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { SignJWT, errors as joseErrors, jwtVerify } from "jose";
import type { Config } from "../config.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { ALL_CAPABILITIES, type Principal } from "./principal.js";
import type { AuthCache } from "./auth-cache.js";

const enc = new TextEncoder();

/** In embedded mode the admin JWT secret is generated once and kept under DATA_DIR. */
export function resolveAdminSecret(config: Config): string {
  if (config.ADMIN_JWT_SECRET) return config.ADMIN_JWT_SECRET;
  mkdirSync(config.DATA_DIR, { recursive: true });
  const path = join(config.DATA_DIR, "admin-jwt-secret");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(32).toString("hex");
  writeFileSync(path, secret, { mode: 0o600, flag: "wx" });
  return secret;
}

export async function signAdminToken(opts: {
  secret: string;
  tenantId: string;
  subject?: string;
  ttlSeconds: number;
  now?: Date;
}): Promise<string> {
  const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  return new SignJWT({ tid: opts.tenantId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(opts.subject ?? "admin")
    .setIssuedAt(iat)
    .setExpirationTime(iat + opts.ttlSeconds)
    .sign(enc.encode(opts.secret));
}

export async function authenticateAdminToken(
  prisma: PrismaClient,
  token: string,
  secret: string,
  clock: Clock,
  cache?: AuthCache,
  maxTtlSeconds = 86_400,
): Promise<Principal> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, enc.encode(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "sub", "tid"],
      currentDate: clock.now(),
    }));
  } catch (err) {
    const expired = err instanceof joseErrors.JWTExpired;
    throw errors.unauthenticated(expired ? "The admin token has expired." : "The admin token is not valid.");
  }
  // a lifetime cap: exp − iat (or exp − now without iat), so a token minted "forever" is refused
  const now = Math.floor(clock.now().getTime() / 1000);
  const exp = payload.exp ?? 0;
  const lifetime = exp - (typeof payload.iat === "number" ? payload.iat : now);
  if (lifetime > maxTtlSeconds || (typeof payload.iat === "number" && payload.iat > now + 60)) {
    throw errors.unauthenticated(`The admin token lives longer than ADMIN_JWT_MAX_TTL (${maxTtlSeconds} s) or is issued in the future.`);
  }
  const tid = payload.tid;
  if (typeof tid !== "string" || typeof payload.sub !== "string") {
    throw errors.unauthenticated("The admin token is not valid.");
  }
  const tenant = cache?.tenant(tid) ?? (await prisma.tenant.findUnique({ where: { id: tid } }));
  if (!tenant) throw errors.unauthenticated("The admin token names an unknown tenant.");
  cache?.putTenant(tenant);
  return { kind: "admin", tenantId: tid, subject: payload.sub, capabilities: ALL_CAPABILITIES };
}
