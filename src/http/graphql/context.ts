// The per-request context of /graphql: REST's request context (src/context/request.ts), with its
// RateLimit-* headers set on the answer as REST sets them (src/http/request-context.ts). Built by
// the yoga server's `context` (src/http/graphql/server.ts), the direct path
// (src/http/graphql/direct.ts) and the mutations under an Idempotency-Key
// (src/http/graphql/idempotent.ts). `ServerContext` is what each request hands yoga from fastify.
import type { FastifyReply, FastifyRequest } from "fastify";
import { createRequestContext, type AppServices, type RequestContext } from "../../context/request.js";
import { announceRateLimit } from "../request-context.js";

export type ServerContext = {
  req: FastifyRequest;
  reply: FastifyReply;
  /** the request context the direct path built already (yoga then uses it rather than build one) */
  prebuilt?: RequestContext;
  /**
   * what building the context threw, met already by the direct or idempotent path: yoga answers it
   * rather than build the context again, which would count the request against the rate limit again
   */
  contextFailure?: unknown;
};

/** A /graphql request's context: REST's, and its RateLimit-* headers on the answer, again after each further root field. */
export async function graphqlContext(
  app: AppServices,
  headers: Parameters<typeof createRequestContext>[1],
  method: string,
  reply: FastifyReply | undefined,
  ip?: string,
): Promise<RequestContext> {
  return announceRateLimit(await createRequestContext(app, headers, { method, ip }), reply, true);
}
