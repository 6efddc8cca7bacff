// Mounts REST routes. Each route is data: an HTTP method and path, the GraphQL operation it runs,
// how path/query/body become variables, and which part of the result is the response.
import { sha256 } from "../../lib/sha256.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createRequestContext, type AppServices } from "../../context/request.js";
import { AppError, errors } from "../../lib/errors.js";
import { rateLimitHeaders } from "../../auth/rate-limit.js";
import { isAdmin } from "../../auth/principal.js";
import { runOperation, toAppError, type Yoga } from "./execute.js";
import { internalError, sendProblem } from "../problem.js";
import type { Query } from "./params.js";
import type { JsonSchema, ResponseShapes } from "./openapi.js";

export interface RestInput {
  params: Record<string, string>;
  query: Query;
  body: unknown;
}

export interface Route<TData, TVars> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** below /api/v1, fastify syntax: /discussions/:id */
  path: string;
  document: TypedDocumentNode<TData, TVars>;
  variables: (input: RestInput) => TVars;
  /**
   * variables that come from the path or query string: their errors are 400 invalid_parameter.
   * Path-bound ones first, then the query's (the OpenAPI document reads the query's from here).
   */
  paramVars?: string[];
  /** body fields that become variables of their own name (when the body is not the `input` variable) */
  body?: string[];
  /** for the OpenAPI document: the answer's schema when `respond` reshapes the result (default: the root field) */
  response?: (s: ResponseShapes) => JsonSchema;
  /** the response body; `undefined` answers 204 */
  respond: (data: TData) => unknown;
  status?: number | ((data: TData) => number);
  /** /api/v1/admin/* routes: the admin console's JWT only */
  adminOnly?: boolean;
  /** cacheable answers: ETag, Cache-Control: public, max-age, and 304 for a matching If-None-Match */
  cache?: { maxAgeSeconds: number };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of routes of different shapes
export type AnyRoute = Route<any, any>;

export const route = <TData, TVars>(r: Route<TData, TVars>): Route<TData, TVars> => r;

/**
 * The JSON body as an object, or 422 when it is something else. Absent body = {}. With `allowed`,
 * members not named there are refused (422 "is not a known field"): unknown body fields are never
 * silently ignored (contract section 7). Bodies that become a GraphQL input object are checked
 * against that input type instead (./coerce.ts), with the same message.
 */
export function bodyObject(body: unknown, allowed?: readonly string[]): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    throw errors.validation([{ path: "body", message: "must be a JSON object" }]);
  }
  const b = body as Record<string, unknown>;
  if (allowed) {
    const unknown = Object.keys(b).filter((k) => !allowed.includes(k));
    if (unknown.length) throw errors.validation(unknown.map((path) => ({ path, message: "is not a known field" })));
  }
  return b;
}

export function mountRoutes(fastify: FastifyInstance, app: AppServices, yoga: Yoga, routes: AnyRoute[]) {
  for (const r of routes) {
    const paramVars = new Set(r.paramVars ?? []);
    fastify.route({
      method: r.method,
      url: `/api/v1${r.path}`,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        try {
          const ctx = await createRequestContext(app, req.headers, { method: req.method });
          if (ctx.rateLimit) reply.headers(rateLimitHeaders(ctx.rateLimit));
          if (r.adminOnly && !isAdmin(ctx.principal)) {
            throw errors.unauthenticated("This route takes the admin console's JWT (Authorization: Bearer).");
          }
          const variables = r.variables({
            params: req.params as Record<string, string>,
            query: req.query as Query,
            body: req.body,
          });
          const result = await runOperation({ yoga, document: r.document, variables, context: ctx, paramVars });
          if (result.errors.length) {
            const appErr = toAppError(result.errors, paramVars);
            if (appErr) return sendProblem(reply, appErr);
            req.log.error(
              { errors: result.errors.map((e) => ({ message: e.message, stack: e.originalError?.stack })) },
              "operation failed",
            );
            return sendProblem(reply, internalError());
          }
          const data = result.data as Parameters<typeof r.respond>[0];
          const payload = r.respond(data);
          const status = typeof r.status === "function" ? r.status(data) : (r.status ?? 200);
          if (payload === undefined) return reply.status(204).send();
          if (r.cache) return sendCacheable(req, reply, payload, r.cache.maxAgeSeconds);
          return reply.status(status).send(payload);
        } catch (err) {
          if (err instanceof AppError) return sendProblem(reply, err);
          throw err;
        }
      },
    });
  }
}

/** A strong ETag of the JSON answer; a matching If-None-Match gets 304 with no body. */
function sendCacheable(req: FastifyRequest, reply: FastifyReply, payload: unknown, maxAgeSeconds: number) {
  const body = JSON.stringify(payload);
  const etag = `"${sha256(body, "base64url").slice(0, 32)}"`;
  // the answer depends on the caller's tenant (its key) and, for CORS, on the origin
  reply.headers({ ETag: etag, "Cache-Control": `public, max-age=${maxAgeSeconds}`, Vary: "Origin, X-API-Key" });
  const match = req.headers["if-none-match"];
  const tags = (Array.isArray(match) ? match.join(",") : (match ?? "")).split(",").map((t) => t.trim().replace(/^W\//, ""));
  if (tags.includes(etag) || tags.includes("*")) return reply.status(304).send();
  return reply.status(200).type("application/json; charset=utf-8").send(body);
}
