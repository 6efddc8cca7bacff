// Console operators' passkeys (contract section 29; engine: passkeys.ts), beside the console's other
// sign-in routes (http-routes.ts):
//   POST   /console/auth/passkeys/options          → 200 PublicKeyCredentialCreationOptionsJSON (the session's operator; 401 without)
//   POST   /console/auth/passkeys {"credential","label"?} → 201 {"id","label","createdAt","lastUsedAt"}
//   GET    /console/auth/passkeys                  → 200 {"items":[…],"nextCursor":null}: the operator's own
//   DELETE /console/auth/passkeys/{id}             → 204; 404 for an id that is not the operator's
//   POST   /console/auth/passkeys/authentication-options → 200 PublicKeyCredentialRequestOptionsJSON (no session)
//   POST   /console/auth/passkeys/authenticate {"credential"} → 200 the body /console/auth/sign-in answers,
//          with its session cookie; 401 passkey_refused
// The first four need the console session (the cookie; a POST or DELETE its X-CSRF-Token, as every
// operator's request that changes something). Sign-in options count against the client address's
// budget of sign-in requests (SIGN_IN_REQUESTS_PER_ADDRESS in 10 minutes); an assertion is counted as a
// password attempt is (app.signInThrottle: its credential as the account, the client address), across
// instances, a refused one spending the address's tries. The relying party is the host of PUBLIC_URL
// (src/auth/webauthn.ts); 409 passkeys_unavailable in production without it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppServices } from "../../../context/services.js";
import type { RequestContext } from "../../../context/request.js";
import { relyingParty } from "../../../auth/webauthn.js";
import { AppError, errors } from "../../../lib/errors.js";
import { mountPlainRoute } from "../../../http/plain-route.js";
import { listeningBase } from "../../../http/public-base.js";
import type { SignedInOperatorRow } from "./operators.js";
import {
  authenticateOperator,
  credentialIdOf,
  deleteOperatorPasskey,
  listOperatorPasskeys,
  operatorAuthenticationOptions,
  operatorRegistrationOptions,
  registerOperatorPasskey,
  type SignedInOperator,
} from "./passkeys.js";

/** How a sign-in is answered (http-routes.ts): a session opened for the operator, its cookie and body. */
export type SignInReply = (req: FastifyRequest, reply: FastifyReply, operator: SignedInOperatorRow) => Promise<FastifyReply>;

const NO_STORE = { "Cache-Control": "no-store" };
/** what the authenticator shows beside the account */
const RP_NAME = "Engagement console";

/** The operator of the request's console session; 401 for any other caller or none. */
function operatorOf(ctx: RequestContext): SignedInOperator {
  const p = ctx.principal;
  if (p?.kind !== "operator") throw errors.unauthenticated("Passkeys are added by an operator signed in to the console.");
  return { tenantId: p.tenantId, operatorId: p.operatorId, email: p.email };
}

export function mountOperatorPasskeys(fastify: FastifyInstance, app: AppServices, signedIn: SignInReply): void {
  const rp = (req: FastifyRequest) => relyingParty(app.config, listeningBase(app.config, req.server.server), RP_NAME);
  const what = "console passkey";

  mountPlainRoute(fastify, app, {
    method: "POST",
    url: "/console/auth/passkeys/options",
    what,
    caller: "optional",
    handler: async (req, reply, ctx) => {
      const op = operatorOf(ctx);
      return reply.headers(NO_STORE).send(await operatorRegistrationOptions(app, op, rp(req)));
    },
  });

  mountPlainRoute(fastify, app, {
    method: "POST",
    url: "/console/auth/passkeys",
    what,
    caller: "optional",
    handler: async (req, reply, ctx) => {
      const op = operatorOf(ctx);
      return reply
        .status(201)
        .headers(NO_STORE)
        .send(await registerOperatorPasskey(app, op, rp(req), req.body));
    },
  });

  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/console/auth/passkeys",
    what,
    caller: "optional",
    handler: async (_req, reply, ctx) => {
      const items = await listOperatorPasskeys(app, operatorOf(ctx));
      return reply.headers(NO_STORE).send({ items, nextCursor: null });
    },
  });

  mountPlainRoute<{ Params: { id: string } }>(fastify, app, {
    method: "DELETE",
    url: "/console/auth/passkeys/:id",
    what,
    caller: "optional",
    handler: async (req, reply, ctx) => {
      await deleteOperatorPasskey(app, operatorOf(ctx), req.params.id);
      return reply.status(204).send();
    },
  });

  mountPlainRoute(fastify, app, {
    method: "POST",
    url: "/console/auth/passkeys/authentication-options",
    what,
    handler: async (req, reply) => {
      const party = rp(req);
      await app.readerSignIn.perAddress.consume(`console passkey\n${req.ip}`);
      return reply.headers(NO_STORE).send(await operatorAuthenticationOptions(app, party));
    },
  });

  mountPlainRoute(fastify, app, {
    method: "POST",
    url: "/console/auth/passkeys/authenticate",
    what,
    handler: async (req, reply) => {
      const party = rp(req);
      // counted as a password attempt is, once the body is a credential (a malformed one is 422, uncounted)
      const attempt = { address: req.ip, tenantId: "", email: `passkey:${credentialIdOf(req.body)}` };
      await app.signInThrottle.begin(attempt);
      let operator;
      try {
        operator = await authenticateOperator(app, party, req.body);
      } catch (err) {
        // a refusal counts; a failure of ours (the database) does not
        if (!(err instanceof AppError)) await app.signInThrottle.abandoned(attempt);
        throw err;
      }
      await app.signInThrottle.succeeded(attempt);
      return signedIn(req, reply, operator);
    },
  });
}
