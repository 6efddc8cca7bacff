// GET /embed/v1/discussions/{id}.html?key=pk_…[&sort=][&lang=][&cursor=][&parentId=] (contract section 23): a
// discussion's indexable thread for a host page to include (fragment.ts); GET
// /embed/v1/discussions.html?url=<page>&key=pk_…[…] the same for the discussion of a page (contract
// section 27: an empty thread for a page of the site's allowedOrigins that has none yet). A plain fastify route,
// as the feeds are: the publishable key comes in the URL, with the feeds' rules (their
// credentialsOf: a secret key there is 400; no key is 401, the key being what the element names).
// text/html; ETag (a hash of the bytes, so any visible change changes it) and 304;
// Cache-Control: public, max-age=60, stale-while-revalidate=300. The discussion's page, when it has
// one, is named the canonical address (Link header): the comments belong to it, not to this URL.
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppServices, RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { unknownQueryParams } from "../../http/rest/router.js";
import { publicBase } from "../../http/public-base.js";
import { credentialsOf } from "../feeds/http-routes.js";
import { renderFragment, type FragmentRequest } from "./fragment.js";
import { notModified } from "../../http/etag.js";

export const FRAGMENT_CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=300";
const PARAMETERS = new Set(["key", "sort", "lang", "cursor", "parentId"]);
const PAGE_PARAMETERS = new Set([...PARAMETERS, "url"]);
/** opened on its own (a crawler following rel="next"), the fragment runs nothing and loads nothing but images */
const FRAGMENT_CSP = "default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; sandbox";

type Query = Record<string, string | string[] | undefined>;

function one(query: Query, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (typeof v !== "string") throw errors.invalidParameter([{ path: name, message: "must be given once" }]);
  return v;
}

/** The URL's checks, made before the key is read: the file's name, the parameters, a key given. */
function checkUrl(req: FastifyRequest): { discussionId: string; query: Query; key: string } {
  const file = (req.params as { file: string }).file;
  if (!file.endsWith(".html")) throw errors.notFound("Thread");
  const query = req.query as Query;
  unknownQueryParams(query, PARAMETERS);
  const key = one(query, "key");
  if (key === null) throw errors.unauthenticated("Send the publishable key in the URL: ?key=pk_… (the element names it).");
  return { discussionId: file.slice(0, -".html".length), query, key };
}

/** The page's checks for the fragment by url, made before the key is read: the parameters, a key given. */
function checkPageUrl(req: FastifyRequest): { query: Query; key: string } {
  const query = req.query as Query;
  unknownQueryParams(query, PAGE_PARAMETERS);
  const key = one(query, "key");
  if (key === null) throw errors.unauthenticated("Send the publishable key in the URL: ?key=pk_… (the element names it).");
  return { query, key };
}

export function mountIndexableRoutes(fastify: FastifyInstance, app: AppServices): void {
  const answer = async (req: FastifyRequest, reply: FastifyReply, ctx: RequestContext, request: Omit<FragmentRequest, "apiBase">) => {
    const { html, pageUrl } = await renderFragment(ctx, { ...request, apiBase: publicBase(app.config, req) });
    const etag = `"${createHash("sha256").update(html).digest("base64url").slice(0, 27)}"`;
    reply
      .header("ETag", etag)
      .header("Cache-Control", FRAGMENT_CACHE_CONTROL)
      .header("Content-Security-Policy", FRAGMENT_CSP)
      .header("X-Content-Type-Options", "nosniff");
    if (pageUrl) reply.header("Link", `<${new URL(pageUrl).href}>; rel="canonical"`);
    if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
    return reply.type("text/html; charset=utf-8").send(html);
  };
  const asked = (query: Query) => ({
    sort: one(query, "sort"),
    lang: one(query, "lang"),
    cursor: one(query, "cursor"),
    parentId: one(query, "parentId"),
  });
  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/embed/v1/discussions/:file",
    what: "indexable thread",
    caller: "required",
    credentials: (req) => {
      checkUrl(req);
      return credentialsOf(req);
    },
    reads: "GET /embed/v1/discussions/:file",
    handler: async (req, reply, ctx) => {
      const { discussionId, query, key } = checkUrl(req);
      return answer(req, reply, ctx, { discussionId, ...asked(query), key });
    },
  });
  mountPlainRoute(fastify, app, {
    method: "GET",
    url: "/embed/v1/discussions.html",
    what: "indexable thread",
    caller: "required",
    credentials: (req) => {
      checkPageUrl(req);
      return credentialsOf(req);
    },
    reads: "GET /embed/v1/discussions.html",
    handler: async (req, reply, ctx) => {
      const { query, key } = checkPageUrl(req);
      return answer(req, reply, ctx, { discussionId: null, url: one(query, "url") ?? "", ...asked(query), key });
    },
  });
}
