// Console operators (contract section 10): accounts per tenant with a role, a password hashed with
// argon2id (@node-rs/argon2), single-use sign-in links, and sessions. Used by the CLI
// (`engagement operator create`, `engagement console-link`) and by the console's sign-in routes. Each
// reads and writes one tenant's operators, links and sessions through that tenant's store (the tenant
// named by the link, the form or the operator); the tenant's own row through the auth cache.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import type { Operator } from "../../../generated/prisma/client.js";
import type { AppServices } from "../../../context/services.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { errors } from "../../../lib/errors.js";
import { newId } from "../../../lib/ids.js";
import { hashToken, newToken } from "../../../auth/console-session.js";

export type OperatorRole = "owner" | "moderator";

/** The operator a sign-in found (password, link or passkey): what its session and its answer need. */
export type SignedInOperatorRow = Pick<Operator, "id" | "tenantId" | "email" | "role">;
export const OPERATOR_ROLES: readonly OperatorRole[] = ["owner", "moderator"];

/** A console-link is good for this long, once. */
export const LINK_TTL_MS = 15 * 60_000;
/** The operator a bare `console-link --tenant` signs in as when the tenant has no owner yet. */
export const DEFAULT_OWNER_EMAIL = "owner@localhost";

type Services = Pick<AppServices, "stores" | "prisma" | "authCache" | "clock">;

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normaliseEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL_RE.test(e)) throw errors.validation([{ path: "email", message: "must be an email address" }]);
  return e;
}

/** Creates an operator; without a password one is generated (returned once, stored hashed). */
export async function createOperator(
  app: Services,
  opts: { tenantId: string; email: string; role?: OperatorRole; password?: string },
): Promise<{ operator: Operator; password: string }> {
  const email = normaliseEmail(opts.email);
  const role = opts.role ?? "owner";
  if (!OPERATOR_ROLES.includes(role)) throw errors.validation([{ path: "role", message: "must be owner or moderator" }]);
  const password = opts.password ?? randomBytes(18).toString("base64url");
  if (password.length < 12) throw errors.validation([{ path: "password", message: "must be at least 12 characters" }]);
  if (!(await tenantRow(app, opts.tenantId))) throw errors.notFound("Tenant");
  const { prisma } = app.stores(opts.tenantId);
  if (await prisma.operator.findFirst({ where: { email } })) {
    throw errors.conflict("operator_exists", `The tenant already has an operator ${email}.`);
  }
  const operator = await prisma.operator.create({
    data: { id: newId("op"), tenantId: opts.tenantId, email, role, passwordHash: await hash(password), createdAt: app.clock.now() },
  });
  return { operator, password };
}

/**
 * A single-use sign-in link (`engagement console-link`): a token signed with the admin JWT secret
 * naming the tenant, optionally the operator's email, and its expiry. It needs no database, so the
 * CLI can print one while an embedded server holds the data directory; the server checks it, finds
 * the operator and spends it (once) when the browser opens it.
 */
export function signConsoleLink(opts: { secret: string; tenantId: string; email?: string; now: Date; baseUrl: string }): {
  url: string;
  expiresAt: Date;
} {
  const expiresAt = new Date(opts.now.getTime() + LINK_TTL_MS);
  const payload = Buffer.from(
    JSON.stringify({ t: opts.tenantId, e: opts.email ? normaliseEmail(opts.email) : null, x: expiresAt.getTime(), n: newToken() }),
  ).toString("base64url");
  const url = new URL("/console/auth/link", opts.baseUrl);
  url.searchParams.set("token", `${payload}.${linkMac(opts.secret, payload)}`);
  return { url: url.toString(), expiresAt };
}

const linkMac = (secret: string, payload: string) => createHmac("sha256", secret).update(`console-link.${payload}`).digest("base64url");

/**
 * Why a link signs nobody in: `link-expired` (forged, expired or used already — one answer, as a
 * forged token tells nothing), or, for a genuine unexpired link, `unknown-tenant` / `unknown-operator`
 * (its email is no operator of the tenant: the person needs an account, not a new link).
 */
export type LinkRefusal = "link-expired" | "unknown-tenant" | "unknown-operator";

/**
 * Spends a link once: its operator (the one named, else the tenant's first owner — created as
 * DEFAULT_OWNER_EMAIL, link sign-in only, when the tenant has none), or why it signs nobody in.
 */
export async function redeemConsoleLink(
  app: Services,
  secret: string,
  token: string,
): Promise<{ operator: Operator } | { refused: LinkRefusal }> {
  const expired = { refused: "link-expired" } as const;
  const [payload, mac] = token.split(".");
  if (!payload || !mac || token.length > 2048) return expired;
  const expected = Buffer.from(linkMac(secret, payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return expired;
  let claims: { t?: unknown; e?: unknown; x?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as typeof claims;
  } catch {
    return expired;
  }
  const now = app.clock.now();
  if (typeof claims.t !== "string" || typeof claims.x !== "number" || claims.x <= now.getTime()) return expired;
  const tenantId = claims.t;
  if (!(await tenantRow(app, tenantId))) return { refused: "unknown-tenant" };
  const { prisma } = app.stores(tenantId);
  const operator =
    typeof claims.e === "string"
      ? await prisma.operator.findFirst({ where: { email: claims.e } })
      : ((await prisma.operator.findFirst({ where: { role: "owner" }, orderBy: { createdAt: "asc" } })) ??
        (await prisma.operator.upsert({
          where: { tenantId_email: { tenantId, email: DEFAULT_OWNER_EMAIL } },
          create: { id: newId("op"), tenantId, email: DEFAULT_OWNER_EMAIL, role: "owner", createdAt: now },
          update: {},
        })));
  if (!operator) return { refused: "unknown-operator" };
  // single use: the first redemption records the link; any other finds it there
  const spent = await prisma.$executeRaw`
    INSERT INTO console_links (id, tenant_id, operator_id, expires_at, used_at, created_at)
    VALUES (${hashToken(token)}, ${tenantId}, ${operator.id}, ${new Date(claims.x)}, ${now}, ${now})
    ON CONFLICT (id) DO NOTHING`;
  return spent === 1 ? { operator } : expired;
}

/** A hash to verify against when the operator does not exist, so both paths cost the same. */
let dummyHash: Promise<string> | undefined;

/** The operator for an email and password, or null (one answer for every way of being wrong). */
export async function checkPassword(app: Services, tenantId: string, email: string, password: string): Promise<Operator | null> {
  let normalised: string;
  try {
    normalised = normaliseEmail(email);
  } catch {
    return null;
  }
  const operator =
    /^[A-Za-z0-9_-]{1,64}$/.test(tenantId) && (await tenantRow(app, tenantId))
      ? await app.stores(tenantId).prisma.operator.findFirst({ where: { email: normalised } })
      : null;
  dummyHash ??= hash(randomBytes(16).toString("hex"));
  const ok = await verify(operator?.passwordHash ?? (await dummyHash), password).catch(() => false);
  return operator?.passwordHash && ok ? operator : null;
}

/** Opens a session for the operator: the raw cookie value and the CSRF token. */
export async function openSession(
  app: Services,
  operator: { id: string; tenantId: string },
  maxSeconds: number,
): Promise<{ cookie: string; csrfToken: string; expiresAt: Date }> {
  const cookie = newToken();
  const csrfToken = newToken();
  const now = app.clock.now();
  const expiresAt = new Date(now.getTime() + maxSeconds * 1000);
  await app.stores(operator.tenantId).prisma.consoleSession.create({
    data: {
      id: hashToken(cookie),
      tenantId: operator.tenantId,
      operatorId: operator.id,
      csrfToken,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
    },
  });
  return { cookie, csrfToken, expiresAt };
}

/** Ends the signed-in operator's session (its tenant's, the cookie's). */
export async function closeSession(app: Services, operator: { tenantId: string }, cookie: string): Promise<void> {
  await app.stores(operator.tenantId).prisma.consoleSession.deleteMany({ where: { id: hashToken(cookie) } });
}
