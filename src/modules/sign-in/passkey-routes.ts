// Readers' passkeys on the hosted sign-in (contract section 29; engine/passkeys.ts), under
// /auth/v1/{tenantId}/, each counted against the client address's budget and 403
// sign_in_method_disabled unless signIn.methods lists `passkey` (admitSignIn):
//   POST …/passkeys/options                → 200 PublicKeyCredentialCreationOptionsJSON (X-Service-Identity: the reader; 401 without)
//   POST …/passkeys {"credential","label"?} → 201 {"id","label","createdAt","lastUsedAt"} (the same identity)
//   POST …/passkeys/authentication-options → 200 PublicKeyCredentialRequestOptionsJSON
//   POST …/passkeys/authenticate {"credential"} → 200 {"token","reader"}: a session, as the guest form's
//   GET  …/passkeys/new?origin=…[&lang=…][&offer=1] → the page that adds one (engine/passkey-pages.ts)
// The relying party is the host of PUBLIC_URL (src/auth/webauthn.ts); 409 passkeys_unavailable in
// production without it.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/services.js";
import type { Tenant } from "../../generated/prisma/client.js";
import { verifyReaderToken } from "../../context/request.js";
import { relyingParty } from "../../auth/webauthn.js";
import { errors } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { listeningBase } from "../../http/public-base.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { admitSignIn, pageProblem, sendPage } from "./http-routes.js";
import { authenticateWithPasskey, passkeyAuthenticationOptions, passkeyRegistrationOptions, registerPasskey } from "./engine/passkeys.js";
import { addPasskeyPage } from "./engine/passkey-pages.js";
import { pickLanguage, say } from "./engine/strings.js";
import { problemPage } from "./engine/pages.js";

const NO_STORE = { "Cache-Control": "no-store" };

/** The reader of the request's X-Service-Identity on this tenant (any kind of identity); 401 without one. */
async function readerOf(app: AppServices, tenant: Tenant, req: FastifyRequest) {
  const token = req.headers["x-service-identity"];
  if (typeof token !== "string" || !token) {
    throw errors.invalidIdentity(
      "Adding a passkey needs the reader's identity in X-Service-Identity (a session of the hosted sign-in or the site's assertion).",
    );
  }
  return verifyReaderToken(app, tenant, token);
}

export function mountPasskeys(fastify: FastifyInstance, app: AppServices): void {
  type Route = { Params: { tenantId: string }; Body: unknown };
  const rp = (req: FastifyRequest, tenant: Tenant) => relyingParty(app.config, listeningBase(app.config, req.server.server), tenant.name);

  mountPlainRoute<Route>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/passkeys/options",
    what: "passkey",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "passkey");
      const reader = await readerOf(app, tenant, req);
      return reply.headers(NO_STORE).send(await passkeyRegistrationOptions(app, tenant, reader, rp(req, tenant)));
    },
  });

  mountPlainRoute<Route>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/passkeys",
    what: "passkey",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "passkey");
      const reader = await readerOf(app, tenant, req);
      return reply
        .status(201)
        .headers(NO_STORE)
        .send(await registerPasskey(app, tenant, reader, rp(req, tenant), req.body));
    },
  });

  mountPlainRoute<Route>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/passkeys/authentication-options",
    what: "passkey",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "passkey");
      return reply.headers(NO_STORE).send(await passkeyAuthenticationOptions(app, tenant, rp(req, tenant)));
    },
  });

  mountPlainRoute<Route>(fastify, app, {
    method: "POST",
    url: "/auth/v1/:tenantId/passkeys/authenticate",
    what: "passkey",
    handler: async (req, reply) => {
      const tenant = await admitSignIn(app, req, "passkey");
      return reply.headers(NO_STORE).send(await authenticateWithPasskey(app, tenant, rp(req, tenant), req.body));
    },
  });

  mountPlainRoute<{ Params: { tenantId: string }; Querystring: Record<string, unknown> }>(fastify, app, {
    method: "GET",
    url: "/auth/v1/:tenantId/passkeys/new",
    what: "passkey page",
    problem: pageProblem(true),
    handler: async (req, reply) => {
      const lang = pickLanguage(req.query.lang, req.headers["accept-language"]);
      const tenant = await admitSignIn(app, req, "passkey");
      const origin = req.query.origin;
      if (typeof origin !== "string" || !resolveSettings(tenant.settings).allowedOrigins.includes(origin)) {
        return sendPage(reply, problemPage({ lang, title: say(lang, "bad_origin_title"), detail: say(lang, "bad_origin") }), 400);
      }
      rp(req, tenant); // 409 passkeys_unavailable before a page that could add nothing
      return sendPage(
        reply,
        addPasskeyPage({ lang, tenantId: tenant.id, tenantName: tenant.name, origin, offer: req.query.offer === "1" }),
      );
    },
  });
}
