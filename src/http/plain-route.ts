// The one way a plain fastify route (a feature's http-routes.ts: a file as the body, a form post, a
// feed, a page, a redirect, a stream) is mounted. What the REST router does before and after its
// operation, this does before and after the route's handler:
//   - the request context, when the route has a caller (`caller`): createRequestContext from the
//     headers (or the credentials the route reads elsewhere, the feeds' `?key=`), its RateLimit-*
//     headers announced (announceRateLimit), then what the route requires of the caller (a principal,
//     a capability; 401 and 403 as REST answers them), then where its reads go (routeReads);
//   - the handler, which writes its own answer (JSON, HTML, NDJSON, a redirect) on the reply;
//   - any refusal it throws as the problem document (sendProblem): an AppError as it is, a failure
//     that is not a bug of ours as knownFailure says (503, 400), anything else logged and 500.
// A route whose refusals are pages rather than problem documents (the hosted sign-in, a chat alert's
// links) passes `problem`, which answers what it knows its own way.
// The request id and the access record are fastify's hooks (mountObservability), as for every route.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteGenericInterface } from "fastify";
import { createRequestContext, requirePrincipal, type AppServices, type RequestContext } from "../context/request.js";
import type { HeaderBag } from "../context/headers.js";
import { routeReads } from "../context/read-routing.js";
import { hasCapability } from "../auth/principal.js";
import type { Capability } from "../auth/capabilities.js";
import { AppError, errors } from "../lib/errors.js";
import { announceRateLimit } from "./request-context.js";
import { endpointReads, type DatabaseRoute } from "./database-routes.js";
import { internalError, knownFailure, sendProblem } from "./problem.js";

/** What a route requires of its caller: that there is one, or one with a capability. */
export type CallerRule = "optional" | "required" | { capability: Capability };

interface RouteBase<G extends RouteGenericInterface> {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  /** what failed, for the log line of an unexpected error ("<what> failed") */
  what: string;
  bodyLimit?: number;
  /**
   * A refusal answered otherwise than as a problem document (a page): what the handler threw, answered
   * here, or null to leave it to the problem document (a bug's 500 included).
   */
  problem?: (req: FastifyRequest<G>, reply: FastifyReply, thrown: unknown) => FastifyReply | null;
}

/** A route with no caller of a key: a token in the URL, a tenant in the path, a signed body. */
export interface OpenRoute<G extends RouteGenericInterface> extends RouteBase<G> {
  caller?: undefined;
  handler: (req: FastifyRequest<G>, reply: FastifyReply) => unknown;
}

/** A route of a caller: its request context is made as REST makes it. */
export interface CallerRoute<G extends RouteGenericInterface> extends RouteBase<G> {
  caller: CallerRule;
  /** the credentials, when the route reads them elsewhere than the headers (default: the headers) */
  credentials?: (req: FastifyRequest<G>) => HeaderBag;
  /** the route's reads (src/http/database-routes.ts): a replica's when its entry says so */
  reads?: DatabaseRoute;
  handler: (req: FastifyRequest<G>, reply: FastifyReply, ctx: RequestContext) => unknown;
}

export type PlainRoute<G extends RouteGenericInterface> = OpenRoute<G> | CallerRoute<G>;

/**
 * The request context of a plain route's caller, as REST makes it: the context (its unit of the
 * rate limit spent), the RateLimit-* headers, then the route's rule for the caller.
 */
export async function plainContext(
  app: AppServices,
  req: FastifyRequest,
  reply: FastifyReply,
  rule: CallerRule,
  headers: HeaderBag = req.headers,
): Promise<RequestContext> {
  const ctx = announceRateLimit(await createRequestContext(app, headers, { method: req.method, ip: req.ip }), reply, false);
  if (rule === "optional") return ctx;
  const principal = requirePrincipal(ctx);
  if (typeof rule === "object" && !hasCapability(principal, rule.capability)) throw errors.missingCapability(rule.capability);
  return ctx;
}

/** A thrown value as the refusal it answers: AppError, a known failure, else 500 (logged). */
export function refusalOf(req: FastifyRequest, err: unknown, what: string): AppError {
  const known = err instanceof AppError ? err : knownFailure(err);
  if (known) return known;
  req.log.error({ err }, `${what} failed`);
  return internalError();
}

/** Mounts `route` on `fastify` (or a scope of it, with its own content-type parsers). */
export function mountPlainRoute<G extends RouteGenericInterface = RouteGenericInterface>(
  fastify: FastifyInstance,
  app: AppServices,
  route: PlainRoute<G>,
): void {
  fastify.route({
    method: route.method,
    url: route.url,
    ...(route.bodyLimit !== undefined ? { bodyLimit: route.bodyLimit } : {}),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      // the route's own view of its params, query and body (fastify does not check them: the handler does)
      const req = request as FastifyRequest<G>;
      try {
        if (route.caller === undefined) return await route.handler(req, reply);
        const ctx = await plainContext(app, req, reply, route.caller, route.credentials ? route.credentials(req) : req.headers);
        if (route.reads) routeReads(ctx, endpointReads(route.reads));
        return await route.handler(req, reply, ctx);
      } catch (err) {
        return route.problem?.(req, reply, err) ?? sendProblem(reply, refusalOf(req, err, route.what));
      }
    },
  });
}
