// The hosted sign-in's routes (contract section 20), under /auth/v1/{tenantId}/: no key, the tenant
// named by the path. Every route counts against the client address's budget for the tenant
// (SIGN_IN_REQUESTS_PER_ADDRESS in 10 minutes, across instances: 429 with Retry-After), and a
// method's routes answer 403 sign_in_method_disabled unless the tenant's signIn.methods lists it.
//   GET  /auth/v1/{tenantId}/challenge  → an ALTCHA challenge (guest)
//   POST /auth/v1/{tenantId}/guest      {"name","email"?,"altcha","website"?} → 201 {"token","reader"}
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/services.js";
import type { Tenant } from "../../generated/prisma/client.js";
import { tenantRow } from "../../auth/auth-cache.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings, type SignInMethod } from "../../tenancy/settings-model.js";
import { guestChallenge, guestSignIn, type GuestInput } from "./engine/guest.js";

const NO_STORE = { "Cache-Control": "no-store" };

/**
 * The request's tenant, once the client address's budget allows it; 404 for a tenant that does not
 * exist, 403 when `method` is given and not enabled.
 */
export async function admitSignIn(
  app: AppServices,
  req: FastifyRequest<{ Params: { tenantId: string } }>,
  method?: SignInMethod,
): Promise<Tenant> {
  const tenantId = req.params.tenantId;
  await app.readerSignIn.perAddress.consume(`${tenantId}\n${req.ip}`);
  const tenant = tenantId.length <= 128 ? await tenantRow(app, tenantId) : null;
  if (!tenant) throw errors.notFound("Site");
  if (method && !resolveSettings(tenant.settings).signIn.methods.includes(method)) throw errors.signInMethodDisabled(method);
  return tenant;
}

export function mountSignIn(fastify: FastifyInstance, app: AppServices): void {
  fastify.get<{ Params: { tenantId: string } }>("/auth/v1/:tenantId/challenge", async (req, reply) => {
    const tenant = await admitSignIn(app, req, "guest");
    return reply.headers(NO_STORE).send(await guestChallenge(app, tenant.id));
  });

  fastify.post<{ Params: { tenantId: string }; Body: unknown }>("/auth/v1/:tenantId/guest", async (req, reply) => {
    const tenant = await admitSignIn(app, req, "guest");
    const body = req.body;
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw errors.validation([{ path: "body", message: "must be a JSON object" }]);
    const session = await guestSignIn(app, tenant, body as GuestInput);
    return reply.status(201).headers(NO_STORE).send(session);
  });
}
