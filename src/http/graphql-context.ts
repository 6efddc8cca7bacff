// The per-request context of /graphql: REST's request context (src/context/request.ts), with its
// RateLimit-* headers set on the answer as REST sets them. Built by the yoga server's `context`
// (src/http/graphql-server.ts), the direct path (src/http/graphql-direct.ts) and the mutations
// under an Idempotency-Key (src/http/graphql-idempotent.ts). `ServerContext` is what each request
// hands yoga from fastify.
import type { FastifyReply, FastifyRequest } from "fastify";
import { createRequestContext, type AppServices, type RequestContext } from "../context/request.js";
import { rateLimitHeaders } from "../auth/rate-limit.js";

export type ServerContext = {
  req: FastifyRequest;
  reply: FastifyReply;
  /** the request context the direct path built already (yoga then uses it rather than build one) */
  prebuilt?: RequestContext;
};

/** A /graphql request's context: REST's, and its RateLimit-* headers on the answer as REST's are. */
export async function graphqlContext(
  app: AppServices,
  headers: Parameters<typeof createRequestContext>[1],
  method: string,
  reply: FastifyReply | undefined,
): Promise<RequestContext> {
  const ctx = await createRequestContext(app, headers, { method });
  const setHeaders = (info: NonNullable<RequestContext["rateLimit"]>) => void reply?.headers(rateLimitHeaders(info));
  if (ctx.rateLimit) setHeaders(ctx.rateLimit);
  return { ...ctx, onRateLimit: setHeaders };
}
