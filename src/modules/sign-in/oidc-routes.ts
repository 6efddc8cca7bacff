// The hosted sign-in's OpenID Connect and OAuth 2 routes (contract section 20; the flow is
// src/modules/sign-in/engine/oidc.ts). Both are pages a popup shows, so every refusal is a problem
// page (src/modules/sign-in/engine/pages.ts) with the status of its error-catalogue entry:
//   GET /auth/v1/{tenantId}/oidc/{providerId}?origin=<page origin>[&lang=…]  → 302 to the provider, with
//       the browser's binding cookie (browser-binding.ts)
//       (400 sign_in_origin_not_allowed, 404 for an unknown provider, 403 while oidc is off, 429)
//   GET /auth/v1/{tenantId}/callback/{providerId}?code&state                  → the finish page posting
//       {"type":"engagement:signed-in","token","reader"} to the page's origin
//       (400 sign_in_state_invalid | sign_in_browser_mismatch | sign_in_cancelled | sign_in_refused,
//       502 sign_in_provider_unreachable); only in the browser holding the start's binding cookie
// Languages (engine/strings.ts): the start's is `?lang=` when it is one of the ten, else the best of
// Accept-Language, else English — the sign-in page's rule (its provider links carry its `lang`). It is
// kept with the state, and the callback's pages speak it; a callback whose state's row is gone (or
// never was) goes by Accept-Language. A provider's own words (what it answered) stay in English, marked
// so, under the page's text; a refusal we have no words for is an English page (lang="en").
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/services.js";
import { publicBase } from "../../http/public-base.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { AppError } from "../../lib/errors.js";
import { admitSignIn } from "./http-routes.js";
import { bindBrowser, browserBinding } from "./browser-binding.js";
import {
  CallbackRefused,
  checkOrigin,
  findProvider,
  finishProviderSignIn,
  startProviderSignIn,
  type CallbackQuery,
} from "./engine/oidc.js";
import { finishPage, problemPage, type HostedPage } from "./engine/pages.js";
import { passkeyOffer } from "./engine/passkey-pages.js";
import { pickLanguage, say, type SignInLanguage, type SignInStringKey } from "./engine/strings.js";

/** The words of a refusal: its title and text (with `{label}`), and whether the catalogue's detail is shown under them. */
interface Words {
  title: SignInStringKey;
  text: SignInStringKey;
  note: boolean;
}

const WORDS: Record<string, Words> = {
  sign_in_state_invalid: { title: "oidc_state_invalid_title", text: "oidc_state_invalid", note: false },
  sign_in_browser_mismatch: { title: "oidc_state_invalid_title", text: "oidc_other_browser", note: false },
  sign_in_cancelled: { title: "oidc_cancelled_title", text: "oidc_cancelled", note: false },
  sign_in_refused: { title: "oidc_refused_title", text: "oidc_refused", note: true },
  sign_in_provider_unreachable: { title: "oidc_unreachable_title", text: "oidc_unreachable", note: true },
  sign_in_origin_not_allowed: { title: "bad_origin_title", text: "bad_origin", note: true },
  sign_in_method_disabled: { title: "bad_origin_title", text: "no_methods", note: false },
  rate_limited: { title: "bad_origin_title", text: "rate_limited", note: false },
};

const send = (reply: FastifyReply, status: number, page: HostedPage, headers: Record<string, string> = {}) =>
  reply
    .status(status)
    .headers({ ...page.headers, ...headers })
    .type("text/html; charset=utf-8")
    .send(page.html);

/**
 * The refusal's page in `lang`: the words of its code, or the catalogue's English for a code with
 * none. `label` is the provider's (every refusal naming it comes once the provider is known).
 */
function refusalPage(err: AppError, lang: SignInLanguage, label: string, providerError: string | null): HostedPage {
  const words = WORDS[err.code];
  if (!words) return problemPage({ lang: "en", title: err.title, detail: err.detail });
  // the provider ended the sign-in with an error other than the reader's cancelling: its code is said
  const text =
    err.code === "sign_in_cancelled" && providerError !== "access_denied"
      ? say(lang, "oidc_cancelled_error", { label, error: providerError ?? "?" })
      : say(lang, words.text, { label });
  return problemPage({ lang, title: say(lang, words.title), detail: text, ...(words.note ? { note: err.detail } : {}) });
}

/**
 * An AppError (or a refused callback) as a problem page: its status, in the sign-in's language —
 * `lang` when the route knows it, else the refusal's own, else Accept-Language's. Anything else goes
 * on to mountPlainRoute (a 500 problem document). Its own wrapper, not mountPlainRoute's `problem`:
 * the page needs what the handler learnt before it failed (the language, the provider's label).
 */
async function asPage(
  req: FastifyRequest,
  reply: FastifyReply,
  app: AppServices,
  known: { lang: SignInLanguage | null; label: string | null },
  run: () => Promise<FastifyReply>,
): Promise<FastifyReply> {
  try {
    return await run();
  } catch (thrown) {
    const refusal = thrown instanceof CallbackRefused ? thrown : null;
    const err = refusal ? refusal.error : thrown;
    if (!(err instanceof AppError)) throw thrown;
    if (err.status >= 500) app.log.warn({ code: err.code, detail: err.detail }, "hosted sign-in at a provider failed");
    const lang = known.lang ?? refusal?.lang ?? pickLanguage(undefined, req.headers["accept-language"]);
    return send(reply, err.status, refusalPage(err, lang, known.label ?? "", refusal?.providerError ?? null), err.headers);
  }
}

export function mountOidcSignIn(fastify: FastifyInstance, app: AppServices): void {
  mountPlainRoute<{ Params: { tenantId: string; providerId: string }; Querystring: Record<string, unknown> }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/oidc/:providerId",
    what: "oidc sign-in",
    handler: async (req, reply) => {
      const known = { lang: pickLanguage(req.query.lang, req.headers["accept-language"]), label: null as string | null };
      return asPage(req, reply, app, known, async () => {
        const tenant = await admitSignIn(app, req, "oidc");
        const provider = findProvider(tenant, req.params.providerId);
        known.label = provider.label;
        const origin = checkOrigin(tenant, req.query.origin);
        const binding = bindBrowser(app.config, req, reply);
        const url = await startProviderSignIn(app, tenant, provider, origin, publicBase(app.config, req), known.lang, binding);
        return reply.status(302).headers({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", Location: url.href }).send();
      });
    },
  });

  mountPlainRoute<{ Params: { tenantId: string; providerId: string }; Querystring: CallbackQuery }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/callback/:providerId",
    what: "oidc sign-in",
    handler: async (req, reply) => {
      // the language is the sign-in's (kept with its state), known once the state is read
      const known = { lang: null as SignInLanguage | null, label: null as string | null };
      return asPage(req, reply, app, known, async () => {
        const tenant = await admitSignIn(app, req, "oidc");
        const provider = findProvider(tenant, req.params.providerId);
        known.label = provider.label;
        const { origin, session, lang } = await finishProviderSignIn(app, tenant, provider, req.query, browserBinding(app.config, req));
        const pageLang = lang ?? pickLanguage(undefined, req.headers["accept-language"]);
        return send(reply, 200, finishPage({ lang: pageLang, origin, session, offer: passkeyOffer(tenant, origin, pageLang) }));
      });
    },
  });
}
