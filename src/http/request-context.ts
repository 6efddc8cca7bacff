// The one step that tells a caller its rate-limit budget on the HTTP paths with a fastify reply (REST
// and every /graphql path): the RateLimit-* headers of the unit the request context spent
// (src/context/request.ts), set on the answer, and again whenever the request spends more (a
// GraphQL operation's further root fields). Synchronous, called right after the context is made,
// so it costs no await.
import { rateLimitHeaders, type RateLimitInfo } from "../auth/rate-limit.js";
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
  // A bound function, not an arrow made here: an arrow on the context kept the reply (and with it the
  // whole request and response) alive through V8's young-generation collections until a full one, so
  // each GraphQL request's HTTP objects were promoted to the old generation, 2–3 KB a request
  // (test/young-garbage.test.ts; bench/notes.md, 2026-11-29 third session).
  if (moreUnits) ctx.onRateLimit = announceAgain.bind(reply);
  return ctx;
}

function announceAgain(this: HeaderSink, info: RateLimitInfo): void {
  this.headers(rateLimitHeaders(info));
}
