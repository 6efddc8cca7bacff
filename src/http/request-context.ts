// The one step that tells a caller its rate-limit budget on the HTTP paths with a fastify reply (REST
// and every /graphql path): the RateLimit-* headers of the unit the request context spent
// (src/context/request.ts), set on the answer, and again whenever the request spends more (a
// GraphQL operation's further root fields). Synchronous, called right after the context is made,
// so it costs no await.
import { rateLimitHeaders } from "../auth/rate-limit.js";
import type { RequestContext } from "../context/request.js";

/** Where the headers go: a fastify reply. */
export interface HeaderSink {
  headers(values: Record<string, string>): unknown;
}

/**
 * Sets the context's RateLimit-* headers on `reply`; with `moreUnits`, also whenever the request
 * spends more units later (`ctx.onRateLimit`). Returns the context.
 */
export function announceRateLimit(ctx: RequestContext, reply: HeaderSink | undefined, moreUnits: boolean): RequestContext {
  if (!reply) return ctx;
  if (ctx.rateLimit) reply.headers(rateLimitHeaders(ctx.rateLimit));
  if (moreUnits) ctx.onRateLimit = (info) => void reply.headers(rateLimitHeaders(info));
  return ctx;
}
