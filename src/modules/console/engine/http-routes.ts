// Console sign-in (contract section 10): the single-use link printed by `engagement console-link`,
// email + password, sign-out and the current session (its tenant's id and name, the operator, the CSRF token). The session is an HttpOnly, SameSite=Strict
// cookie (Secure behind https); the console reads its CSRF token from GET /console/auth/session and
// sends it in X-CSRF-Token. Failed sign-in attempts are limited per account and per address, shared by
// every instance (app.signInThrottle), and every password failure has one message. A refused link
// redirects with why (?signin=link-expired | unknown-operator | unknown-tenant; operators.ts decides).
// Operators' passkeys, added while signed in and signing in as the password does, are passkey-routes.ts's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { serialize } from "cookie";
import type { AppServices } from "../../../context/services.js";
import { AppError, errors } from "../../../lib/errors.js";
import { mountPlainRoute } from "../../../http/plain-route.js";
import { isSecureRequest } from "../../../http/public-base.js";
import { authenticateSession, SESSION_COOKIE, sessionCookieOf, sessionPolicy } from "../../../auth/console-session.js";
import { checkPassword, closeSession, openSession, redeemConsoleLink } from "./operators.js";
import { mountOperatorPasskeys, type SignInReply } from "./passkey-routes.js";
import { tenantRow } from "../../../auth/auth-cache.js";

/** What a sign-in answers (password or passkey), as GET /console/auth/session does. */
export interface SignedInBody {
  tenantId: string;
  tenantName: string | null;
  operator: { id: string; email: string; role: string };
  csrfToken: string;
}

export function mountConsoleAuth(fastify: FastifyInstance, app: AppServices): void {
  const secure = (req: FastifyRequest) => isSecureRequest(app.config, req);

  const setSession = (req: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number) =>
    reply.header(
      "Set-Cookie",
      serialize(SESSION_COOKIE, value, { httpOnly: true, sameSite: "strict", secure: secure(req), path: "/", maxAge: maxAgeSeconds }),
    );

  /** The tenant's name, which the console shows before its id. */
  const tenantNameOf = async (tenantId: string) => (await tenantRow(app, tenantId))?.name ?? null;

  // opens a session for the operator on the reply (its cookie) and answers the body a sign-in answers
  const signedIn: SignInReply = async (req, reply, operator) => {
    const session = await openSession(app, operator, app.config.CONSOLE_SESSION_MAX_SECONDS);
    setSession(req, reply, session.cookie, app.config.CONSOLE_SESSION_MAX_SECONDS);
    const body: SignedInBody = {
      tenantId: operator.tenantId,
      tenantName: await tenantNameOf(operator.tenantId),
      operator: { id: operator.id, email: operator.email, role: operator.role },
      csrfToken: session.csrfToken,
    };
    return reply.header("Cache-Control", "no-store").send(body);
  };

  const handle = (method: "GET" | "POST", url: string, handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
    mountPlainRoute(fastify, app, { method, url, what: "console auth", handler });

  handle("GET", "/console/auth/link", async (req, reply) => {
    const token = String((req.query as Record<string, unknown>).token ?? "");
    const redeemed = await redeemConsoleLink(app, app.adminJwtSecret, token);
    if ("refused" in redeemed) return reply.header("Cache-Control", "no-store").redirect(`/console/?signin=${redeemed.refused}`, 303);
    const { operator } = redeemed;
    const session = await openSession(app, operator, app.config.CONSOLE_SESSION_MAX_SECONDS);
    setSession(req, reply, session.cookie, app.config.CONSOLE_SESSION_MAX_SECONDS);
    return reply.header("Cache-Control", "no-store").redirect("/console/", 303);
  });

  handle("POST", "/console/auth/sign-in", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const tenantId = typeof body.tenantId === "string" ? body.tenantId : "";
    const email = typeof body.email === "string" ? body.email : "";
    const password = typeof body.password === "string" ? body.password : "";
    // counted before the password is checked, across instances (src/auth/sign-in-throttle.ts)
    const attempt = { address: req.ip, tenantId, email };
    await app.signInThrottle.begin(attempt);
    let operator: Awaited<ReturnType<typeof checkPassword>>;
    try {
      operator = await checkPassword(app, tenantId, email, password);
    } catch (err) {
      await app.signInThrottle.abandoned(attempt);
      throw err;
    }
    if (!operator) throw new AppError(401, "invalid_credentials", "The tenant, email or password is not right.");
    await app.signInThrottle.succeeded(attempt);
    return signedIn(req, reply, operator);
  });

  handle("GET", "/console/auth/session", async (req, reply) => {
    const cookie = sessionCookieOf(req.headers.cookie);
    if (!cookie) throw errors.unauthenticated("Not signed in to the console.");
    const { principal: p, csrfToken } = await authenticateSession(app.prisma, cookie, app.clock, sessionPolicy(app));
    if (p.kind !== "operator") throw errors.unauthenticated("Not signed in to the console.");
    return reply.header("Cache-Control", "no-store").send({
      tenantId: p.tenantId,
      tenantName: await tenantNameOf(p.tenantId),
      operator: { id: p.operatorId, email: p.email, role: p.role },
      csrfToken,
    });
  });

  // the CSRF check of an operator's POST applies (X-CSRF-Token): the context is made, a caller or not
  mountPlainRoute(fastify, app, {
    method: "POST",
    url: "/console/auth/sign-out",
    what: "console auth",
    caller: "optional",
    handler: async (req, reply, ctx) => {
      const cookie = sessionCookieOf(req.headers.cookie);
      if (ctx.principal?.kind === "operator" && cookie) await closeSession(app, ctx.principal, cookie);
      setSession(req, reply, "", 0);
      return reply.status(204).send();
    },
  });

  mountOperatorPasskeys(fastify, app, signedIn);
}
