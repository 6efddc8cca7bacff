// The hosted sign-in's OpenID Connect and OAuth 2 routes (contract section 20; the flow is
// src/modules/sign-in/engine/oidc.ts). Both are pages a popup shows, so every refusal is a problem
// page (src/modules/sign-in/engine/pages.ts) with the status and text of its error-catalogue entry:
//   GET /auth/v1/{tenantId}/oidc/{providerId}?origin=<page origin>  → 302 to the provider
//       (400 sign_in_origin_not_allowed, 404 for an unknown provider, 403 while oidc is off, 429)
//   GET /auth/v1/{tenantId}/callback/{providerId}?code&state         → the finish page posting
//       {"type":"engagement:signed-in","token","reader"} to the page's origin
//       (400 sign_in_state_invalid | sign_in_cancelled | sign_in_refused, 502 sign_in_provider_unreachable)
import type { FastifyInstance, FastifyReply } from "fastify";
import type { AppServices } from "../../context/services.js";
import { publicBase } from "../../http/public-base.js";
import { AppError } from "../../lib/errors.js";
import { admitSignIn } from "./http-routes.js";
import { checkOrigin, findProvider, finishProviderSignIn, startProviderSignIn, type CallbackQuery } from "./engine/oidc.js";
import { finishPage, problemPage, type HostedPage } from "./engine/pages.js";

const LANG = "en";

const TITLES: Record<string, string> = {
  sign_in_cancelled: "Sign-in cancelled",
  sign_in_state_invalid: "This sign-in cannot be completed",
  sign_in_refused: "Sign-in failed",
  sign_in_provider_unreachable: "The sign-in provider could not be reached",
  sign_in_origin_not_allowed: "Sign-in is not available for this page",
  rate_limited: "Too many attempts",
};

const send = (reply: FastifyReply, status: number, page: HostedPage, headers: Record<string, string> = {}) =>
  reply
    .status(status)
    .headers({ ...page.headers, ...headers })
    .type("text/html; charset=utf-8")
    .send(page.html);

/** An AppError as a problem page: its status, its detail; anything else goes on to the error handler. */
async function asPage(reply: FastifyReply, app: AppServices, run: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.status >= 500) app.log.warn({ code: err.code, detail: err.detail }, "hosted sign-in at a provider failed");
    const page = problemPage({ lang: LANG, title: TITLES[err.code] ?? err.title, detail: err.detail });
    return send(reply, err.status, page, err.headers);
  }
}

export function mountOidcSignIn(fastify: FastifyInstance, app: AppServices): void {
  fastify.get<{ Params: { tenantId: string; providerId: string }; Querystring: Record<string, unknown> }>(
    "/auth/v1/:tenantId/oidc/:providerId",
    async (req, reply) =>
      asPage(reply, app, async () => {
        const tenant = await admitSignIn(app, req, "oidc");
        const provider = findProvider(tenant, req.params.providerId);
        const origin = checkOrigin(tenant, req.query.origin);
        const url = await startProviderSignIn(app, tenant, provider, origin, publicBase(app.config, req));
        return reply.status(302).headers({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", Location: url.href }).send();
      }),
  );

  fastify.get<{ Params: { tenantId: string; providerId: string }; Querystring: CallbackQuery }>(
    "/auth/v1/:tenantId/callback/:providerId",
    async (req, reply) =>
      asPage(reply, app, async () => {
        const tenant = await admitSignIn(app, req, "oidc");
        const provider = findProvider(tenant, req.params.providerId);
        const { origin, session } = await finishProviderSignIn(app, tenant, provider, req.query);
        return send(reply, 200, finishPage({ lang: LANG, origin, session }));
      }),
  );
}
