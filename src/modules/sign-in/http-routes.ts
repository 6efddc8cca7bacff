// The hosted sign-in's routes (contract section 20), under /auth/v1/{tenantId}/: no key, the tenant
// named by the path. Every route counts against the client address's budget for the tenant
// (SIGN_IN_REQUESTS_PER_ADDRESS in 10 minutes, across instances: 429 with Retry-After), and a
// method's routes answer 403 sign_in_method_disabled unless the tenant's signIn.methods lists it.
//   GET  /auth/v1/{tenantId}/sign-in?origin=…[&lang=…] → the sign-in page (HTML; problem page 400 for
//                                        an origin not in allowedOrigins, 403 with no method enabled)
//   GET  /auth/v1/{tenantId}/challenge  → an ALTCHA challenge (guest)
//   POST /auth/v1/{tenantId}/guest      {"name","email"?,"altcha","website"?,"lang"?} → 201 {"token","reader"}
//   POST /auth/v1/{tenantId}/email      {"email","origin","lang"?,"relay"?} → 202 {} (known or not: the same answer)
//   GET  /auth/v1/{tenantId}/email/{token} → the link's page (HTML): it never acts, a mail scanner may fetch it
//   POST /auth/v1/{tenantId}/email/{token} (a form: name=…) → the finish page (session) or "confirmed"
//   GET  /auth/v1/static/…              → the ALTCHA widget's and SimpleWebAuthn's files (static-files.ts)
// Pages answer problems as pages (problemPage), the JSON routes as problem documents.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/services.js";
import type { Tenant } from "../../generated/prisma/client.js";
import { tenantRow } from "../../auth/auth-cache.js";
import { AppError, errors } from "../../lib/errors.js";
import { knownFailure } from "../../http/problem.js";
import { crossSiteForm } from "../../http/public-base.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { type SignInMethod } from "../../tenancy/settings/sign-in.js";
import { guestChallenge, guestSignIn, type GuestInput } from "./engine/guest.js";
import { escapeHtml, finishPage, hostedPage, problemPage, type HostedPage } from "./engine/pages.js";
import { signInPage } from "./engine/sign-in-page.js";
import { passkeyOffer } from "./engine/passkey-pages.js";
import { pickLanguage, say } from "./engine/strings.js";
import { chosenName, LinkProblem, openLink, requestEmailLink, useLink, type OpenLink } from "./engine/email-link.js";
import { mountStaticFiles } from "./static-files.js";

const NO_STORE = { "Cache-Control": "no-store" };

/** What admitSignIn reads of a request: the tenant in the path and the client's address. */
type TenantRequest = Pick<FastifyRequest, "ip"> & { params: { tenantId: string } };

/**
 * The request's tenant, once the client address's budget allows it; 404 for a tenant that does not
 * exist, 403 when `method` is given and not enabled.
 */
export async function admitSignIn(app: AppServices, req: TenantRequest, method?: SignInMethod): Promise<Tenant> {
  const tenantId = req.params.tenantId;
  await app.readerSignIn.perAddress.consume(`${tenantId}\n${req.ip}`);
  const tenant = tenantId.length <= 128 ? await tenantRow(app, tenantId) : null;
  if (!tenant) throw errors.notFound("Site");
  if (method && !resolveSettings(tenant.settings).signIn.methods.includes(method)) throw errors.signInMethodDisabled(method);
  return tenant;
}

const jsonObject = (body: unknown): Record<string, unknown> => {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw errors.validation([{ path: "body", message: "must be a JSON object" }]);
  return body as Record<string, unknown>;
};

export const sendPage = (reply: FastifyReply, page: HostedPage, status = 200) =>
  reply.status(status).headers(page.headers).type("text/html; charset=utf-8").send(page.html);

/**
 * A page route's failure as a page: what happened, in the page's language (the sign-in page's
 * `?lang=`, else Accept-Language's); a bug (null) is still a 500 problem document (logged).
 */
export const pageProblem =
  (langInQuery: boolean) =>
  (req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply | null => {
    if (err instanceof LinkProblem) {
      const title = say(err.lang, "link_bad_title");
      return sendPage(reply, problemPage({ lang: err.lang, title, detail: say(err.lang, err.key) }), err.status);
    }
    const lang = pickLanguage(langInQuery ? (req.query as { lang?: unknown }).lang : undefined, req.headers["accept-language"]);
    const known = err instanceof AppError ? err : knownFailure(err);
    if (!known) return null;
    for (const [k, v] of Object.entries(known.headers)) reply.header(k, v);
    const detail = known.status === 429 ? say(lang, "rate_limited") : known.detail;
    return sendPage(reply, problemPage({ lang, title: say(lang, "bad_origin_title"), detail }), known.status);
  };

/** The page a link opens: the name and "Sign in" (email_link), or "Confirm" (a guest's address). */
function linkPage(link: OpenLink, siteName: string, error?: string): HostedPage {
  const { lang } = link;
  const t = (k: Parameters<typeof say>[1]) => escapeHtml(say(lang, k, { site: siteName, email: link.address }));
  const alert = error ? `<p class="error" role="alert" id="name-error">${escapeHtml(error)}</p>` : "";
  if (link.kind === "email_confirm") {
    return hostedPage({
      lang,
      title: say(lang, "confirm_title"),
      body: `<p>${t("confirm_text")}</p><form method="post"><button type="submit">${t("confirm_button")}</button></form>`,
    });
  }
  const required = link.currentName === null ? " required" : "";
  return hostedPage({
    lang,
    title: say(lang, "link_title"),
    body: `<p>${t("link_text")}</p><form method="post">
<label for="name">${t("your_name")}</label><input type="text" id="name" name="name" autocomplete="nickname" maxlength="200" value="${escapeHtml(
      link.currentName ?? "",
    )}"${required}${error ? ' aria-invalid="true" aria-describedby="name-error"' : ""}>${alert}
<button type="submit">${t("sign_in_button")}</button></form>`,
  });
}

export function mountSignIn(fastify: FastifyInstance, app: AppServices): void {
  mountStaticFiles(fastify);

  mountPlainRoute<{ Params: { tenantId: string }; Querystring: Record<string, unknown> }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/sign-in",
    what: "sign-in page",
    problem: pageProblem(true),
    handler: async (req, reply) => {
      const lang = pickLanguage(req.query.lang, req.headers["accept-language"]);
      const tenant = await admitSignIn(app, req);
      const settings = resolveSettings(tenant.settings);
      const origin = req.query.origin;
      if (typeof origin !== "string" || !settings.allowedOrigins.includes(origin)) {
        return sendPage(reply, problemPage({ lang, title: say(lang, "bad_origin_title"), detail: say(lang, "bad_origin") }), 400);
      }
      if (settings.signIn.methods.length === 0) {
        return sendPage(reply, problemPage({ lang, title: say(lang, "bad_origin_title"), detail: say(lang, "no_methods") }), 403);
      }
      return sendPage(reply, signInPage({ lang, tenantId: tenant.id, tenantName: tenant.name, origin, signIn: settings.signIn }));
    },
  });

  mountPlainRoute<{ Params: { tenantId: string } }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/challenge",
    what: "sign-in",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "guest");
      return reply.headers(NO_STORE).send(await guestChallenge(app, tenant.id));
    },
  });

  mountPlainRoute<{ Params: { tenantId: string }; Body: unknown }>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/guest",
    what: "sign-in",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "guest");
      const session = await guestSignIn(app, tenant, jsonObject(req.body) as GuestInput);
      return reply.status(201).headers(NO_STORE).send(session);
    },
  });

  mountPlainRoute<{ Params: { tenantId: string }; Body: unknown }>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/email",
    what: "sign-in",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "email");
      await requestEmailLink(app, tenant, jsonObject(req.body));
      // the same answer whether the address is known, new, or past its hourly links
      return reply.status(202).headers(NO_STORE).send({});
    },
  });

  // the link's pages speak Accept-Language's language (the link's own, once it is read)
  mountPlainRoute<{ Params: { tenantId: string; token: string } }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/email/:token",
    what: "sign-in link",
    problem: pageProblem(false),
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req);
      const link = await openLink(app, tenant, req.params.token);
      return sendPage(reply, linkPage(link, tenant.name));
    },
  });

  // the link page's form: the one form post of the hosted sign-in, in a scope of its own so no JSON
  // route takes a form body
  void fastify.register(async (scope) => {
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 4096 }, (_req, body, done) =>
      done(null, new URLSearchParams(String(body))),
    );
    mountPlainRoute<{ Params: { tenantId: string; token: string }; Body: unknown }>(scope, app, {
      method: "POST",
      url: "/auth/v1/:tenantId/email/:token",
      what: "sign-in link",
      problem: pageProblem(false),
      handler: async (req, reply) => {
        const lang = pickLanguage(undefined, req.headers["accept-language"]);
        const tenant = await admitSignIn(app, req);
        if (crossSiteForm(app.config, req)) throw new LinkProblem(403, "cross_site", lang);
        const link = await openLink(app, tenant, req.params.token);
        const form = req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
        const name = link.kind === "email_link" ? chosenName(link, form.get("name")) : null;
        if (link.kind === "email_link" && name === null) {
          return sendPage(reply, linkPage(link, tenant.name, say(link.lang, "name_required")), 422);
        }
        const done = await useLink(app, tenant, req.params.token, link, name);
        if (done) {
          const offer = passkeyOffer(tenant, done.origin, link.lang);
          return sendPage(reply, finishPage({ lang: link.lang, origin: done.origin, session: done.session, relay: done.relay, offer }));
        }
        const title = say(link.lang, "confirmed_title");
        return sendPage(
          reply,
          hostedPage({
            lang: link.lang,
            title,
            body: `<p role="status">${escapeHtml(say(link.lang, "confirmed_text", { email: link.address }))}</p>`,
          }),
        );
      },
    });
  });
}
