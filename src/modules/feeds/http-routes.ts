// The feeds (contract section 19), plain fastify routes because a feed reader authenticates in the
// URL: GET /api/v1/feeds/discussions/{id}.atom and GET /api/v1/feeds/recent.atom take `?key=pk_…`
// (a publishable key, and only here; a feed reader sends no Origin) or the usual X-API-Key header.
// Atom 1.0 (application/atom+xml), ETag and 304, Cache-Control: public, max-age=60.
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppServices } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { publicBase } from "../../http/public-base.js";
import { atomFeed } from "./feed.js";
import { notModified } from "../../http/etag.js";

type Query = Record<string, string | string[] | undefined>;

/**
 * The credentials of a feed request: `?key=` (publishable keys only) in place of the X-API-Key header.
 * Also the indexable thread's (src/modules/indexable/http-routes.ts): the same key rules.
 */
export function credentialsOf(req: FastifyRequest): FastifyRequest["headers"] {
  const key = (req.query as Query).key;
  if (key === undefined) return req.headers;
  if (typeof key !== "string" || !key.startsWith("pk_")) {
    throw errors.invalidParameter([{ path: "key", message: "must be a publishable key (pk_…); other keys go in X-API-Key" }]);
  }
  // the key in the URL stands for the header; nothing else of the request authenticates
  return { "x-api-key": key };
}

export function mountFeedRoutes(fastify: FastifyInstance, app: AppServices): void {
  const serve = (url: string, discussionOf: (req: FastifyRequest) => string | null) =>
    mountPlainRoute(fastify, app, {
      method: "GET",
      url,
      what: "feed",
      caller: "required",
      credentials: credentialsOf,
      reads: "GET /api/v1/feeds/*",
      handler: async (req, reply, ctx) => {
        const selfUrl = `${publicBase(app.config, req)}${req.url}`;
        const xml = await atomFeed(ctx, { discussionId: discussionOf(req), selfUrl });
        const etag = `"${createHash("sha256").update(xml).digest("base64url").slice(0, 27)}"`;
        reply.header("ETag", etag).header("Cache-Control", "public, max-age=60").header("Vary", "X-API-Key");
        if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
        return reply.type("application/atom+xml; charset=utf-8").send(xml);
      },
    });
  serve("/api/v1/feeds/recent.atom", () => null);
  serve("/api/v1/feeds/discussions/:file", (req) => {
    const file = (req.params as { file: string }).file;
    if (!file.endsWith(".atom")) throw errors.notFound("Feed");
    return file.slice(0, -".atom".length);
  });
}
