// Console sessions (contract section 10): a signed-in browser holds a random value in an HttpOnly,
// SameSite=Strict cookie; the database keeps its sha256 with the operator, a CSRF token, the last
// time it was seen (idle expiry) and an absolute expiry. Every API request made with the cookie and
// a method that can change something must send the CSRF token in X-CSRF-Token.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import { parse as parseCookie } from "cookie";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { ROLE_CAPABILITIES, type Principal } from "./principal.js";

export const SESSION_COOKIE = "eng_console";
export const CSRF_HEADER = "x-csrf-token";
/** lastSeenAt is written at most this often per session */
const TOUCH_RESOLUTION_MS = 60_000;

export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
}

/** The configured idle and absolute lifetimes. */
export const sessionPolicy = (app: {
  config: { CONSOLE_SESSION_IDLE_SECONDS: number; CONSOLE_SESSION_MAX_SECONDS: number };
}): SessionPolicy => ({
  idleMs: app.config.CONSOLE_SESSION_IDLE_SECONDS * 1000,
  absoluteMs: app.config.CONSOLE_SESSION_MAX_SECONDS * 1000,
});

export const hashToken = (raw: string) => sha256(raw, "hex");
export const newToken = () => randomBytes(32).toString("base64url");

export function sessionCookieOf(cookieHeader: string | null | undefined): string | null {
  if (!cookieHeader) return null;
  return parseCookie(cookieHeader)[SESSION_COOKIE] ?? null;
}

interface SessionRow {
  id: string;
  tenantId: string;
  operatorId: string;
  csrfToken: string;
  lastSeenAt: Date;
  expiresAt: Date;
  email: string;
  role: "owner" | "moderator";
}

/** The operator behind a session cookie; 401 when unknown, signed out, idle too long or past its absolute expiry. */
export async function authenticateSession(
  prisma: PrismaClient,
  raw: string,
  clock: Clock,
  policy: SessionPolicy,
): Promise<{ principal: Principal; csrfToken: string; sessionId: string }> {
  const expired = () => errors.unauthenticated("The console session has expired or ended; sign in again.");
  const [row] = await prisma.$queryRaw<SessionRow[]>`
    SELECT s.id, s.tenant_id AS "tenantId", s.operator_id AS "operatorId", s.csrf_token AS "csrfToken",
           s.last_seen_at AS "lastSeenAt", s.expires_at AS "expiresAt", o.email, o.role::text AS role
      FROM console_sessions s JOIN operators o ON o.id = s.operator_id
     WHERE s.id = ${hashToken(raw)}`;
  if (!row) throw expired();
  const now = clock.now().getTime();
  if (row.expiresAt.getTime() <= now || row.lastSeenAt.getTime() + policy.idleMs <= now) throw expired();
  if (now - row.lastSeenAt.getTime() >= TOUCH_RESOLUTION_MS) {
    void prisma.consoleSession.updateMany({ where: { id: row.id }, data: { lastSeenAt: new Date(now) } }).catch(() => undefined);
  }
  return {
    principal: {
      kind: "operator",
      tenantId: row.tenantId,
      operatorId: row.operatorId,
      email: row.email,
      role: row.role,
      capabilities: ROLE_CAPABILITIES[row.role],
    },
    csrfToken: row.csrfToken,
    sessionId: row.id,
  };
}

/** Constant-time comparison of the request's X-CSRF-Token with the session's. */
export function csrfMatches(sent: string | null, expected: string): boolean {
  if (!sent) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
