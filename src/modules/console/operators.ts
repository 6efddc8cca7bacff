// Console operators (contract section 10): accounts per tenant with a role, a password hashed with
// argon2id (@node-rs/argon2), single-use sign-in links, and sessions. Used by the CLI
// (`engagement operator create`, `engagement console-link`) and by the console's sign-in routes.
import { randomBytes } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import type { PrismaClient, Operator } from "../../generated/prisma/client.js";
import type { Clock } from "../../lib/clock.js";
import { errors } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { hashToken, newToken } from "../../auth/console-session.js";

export type OperatorRole = "owner" | "moderator";
export const OPERATOR_ROLES: readonly OperatorRole[] = ["owner", "moderator"];

/** A console-link is good for this long, once. */
export const LINK_TTL_MS = 15 * 60_000;
/** The operator a bare `console-link --tenant` signs in as when the tenant has no owner yet. */
export const DEFAULT_OWNER_EMAIL = "owner@localhost";

interface Services {
  prisma: PrismaClient;
  clock: Clock;
}

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
  const tenant = await app.prisma.tenant.findUnique({ where: { id: opts.tenantId }, select: { id: true } });
  if (!tenant) throw errors.notFound("Tenant");
  const exists = await app.prisma.operator.findUnique({ where: { tenantId_email: { tenantId: opts.tenantId, email } } });
  if (exists) throw errors.conflict("operator_exists", `The tenant already has an operator ${email}.`);
  const operator = await app.prisma.operator.create({
    data: { id: newId("op"), tenantId: opts.tenantId, email, role, passwordHash: await hash(password), createdAt: app.clock.now() },
  });
  return { operator, password };
}

/**
 * A single-use sign-in link for an operator of the tenant: the one named, else the first owner;
 * a tenant with no operator yet gets its first owner (DEFAULT_OWNER_EMAIL, link sign-in only).
 */
export async function createConsoleLink(
  app: Services,
  opts: { tenantId: string; email?: string; baseUrl: string },
): Promise<{ url: string; operator: Operator; expiresAt: Date }> {
  const tenant = await app.prisma.tenant.findUnique({ where: { id: opts.tenantId }, select: { id: true } });
  if (!tenant) throw errors.notFound("Tenant");
  let operator: Operator | null;
  if (opts.email) {
    operator = await app.prisma.operator.findUnique({
      where: { tenantId_email: { tenantId: opts.tenantId, email: normaliseEmail(opts.email) } },
    });
    if (!operator) throw errors.notFound("Operator");
  } else {
    operator =
      (await app.prisma.operator.findFirst({ where: { tenantId: opts.tenantId, role: "owner" }, orderBy: { createdAt: "asc" } })) ??
      (await app.prisma.operator.upsert({
        where: { tenantId_email: { tenantId: opts.tenantId, email: DEFAULT_OWNER_EMAIL } },
        create: { id: newId("op"), tenantId: opts.tenantId, email: DEFAULT_OWNER_EMAIL, role: "owner", createdAt: app.clock.now() },
        update: {},
      }));
  }
  const token = newToken();
  const expiresAt = new Date(app.clock.now().getTime() + LINK_TTL_MS);
  await app.prisma.consoleLink.create({ data: { id: hashToken(token), tenantId: opts.tenantId, operatorId: operator.id, expiresAt } });
  const url = new URL("/console/auth/link", opts.baseUrl);
  url.searchParams.set("token", token);
  return { url: url.toString(), operator, expiresAt };
}

/** Redeems a link once (atomically); null when unknown, used or expired. */
export async function redeemConsoleLink(app: Services, token: string): Promise<{ operatorId: string; tenantId: string } | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const now = app.clock.now();
  const rows = await app.prisma.$queryRaw<{ operatorId: string; tenantId: string }[]>`
    UPDATE console_links SET used_at = ${now}
     WHERE id = ${hashToken(token)} AND used_at IS NULL AND expires_at > ${now}
    RETURNING operator_id AS "operatorId", tenant_id AS "tenantId"`;
  return rows[0] ?? null;
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
  const operator = /^[A-Za-z0-9_-]{1,64}$/.test(tenantId)
    ? await app.prisma.operator.findUnique({ where: { tenantId_email: { tenantId, email: normalised } } })
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
  await app.prisma.consoleSession.create({
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

export async function closeSession(app: Services, cookie: string): Promise<void> {
  await app.prisma.consoleSession.deleteMany({ where: { id: hashToken(cookie) } });
}
