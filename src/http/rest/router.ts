// Mounts REST routes. Each route is data: an HTTP method and path, the GraphQL operation it runs,
// how path/query/body become variables, and which part of the result is the response.
import { sha256 } from "../../lib/sha256.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createRequestContext, type AppServices, type RequestContext } from "../../context/request.js";
import { AppError, errors } from "../../lib/errors.js";
import { announceRateLimit } from "../request-context.js";
import { isAdmin } from "../../auth/principal.js";
import { createOperationRunner, toAppError, type RunOperation, type Yoga } from "./execute.js";
import type { OperationCounter } from "../compiled-operations.js";
import { internalError, problemBody, PROBLEM_TYPE, sendProblem } from "../problem.js";
import {
  answerClaim,
  beginIdempotent,
  finishIdempotent,
  idempotencyKeyOf,
  replayedFromRecords,
  sendStoredAnswer,
  type Begun,
} from "../idempotency.js";
import type { IdempotencyScope, StoredAnswer } from "../../idempotency/records.js";
import type { Query } from "./params.js";
import type { JsonSchema, ResponseShapes } from "./json-schema.js";
import { notModified } from "../etag.js";

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
   * Path-bound ones first, then the query's, each named as its query parameter: they are the only
   * query parameters the route accepts (`queryParamsOf`; the OpenAPI document reads them too).
   */
  paramVars?: string[];
  /** body fields that become variables of their own name (when the body is not the `input` variable) */
  body?: string[];
  /** for the OpenAPI document: the answer's schema when `respond` reshapes the result (default: the root field) */
  response?: (s: ResponseShapes) => JsonSchema;
  /** the response body; `undefined` answers 204 */
  respond: (data: TData) => unknown;
  status?: number | ((data: TData) => number);
  /**
   * The reader's identity assertion (X-Service-Identity) this route takes: `required` for reader
   * actions, `optional` where it changes the answer (an author's own pending comment, a ticket that
   * also carries the reader's notifications). For the OpenAPI document; the rules enforce it.
   */
  identity?: "required" | "optional";
  /** the route takes X-Service-Reader-Ip / X-Service-Reader-Agent (Akismet's check of a new comment). For the OpenAPI document. */
  readerClient?: boolean;
  /** /api/v1/admin/* routes: the admin console's JWT only */
  adminOnly?: boolean;
  /**
   * cacheable answers: ETag, Cache-Control: public, max-age, and 304 for a matching If-None-Match;
   * max-age may depend on the query (counts with presence live shorter)
   */
  cache?: { maxAgeSeconds: number | ((query: Query) => number) };
  /**
   * Its only write is one statement (src/events/statement.ts): under an Idempotency-Key that
   * statement claims the key as it records its result, one round trip for all three.
   */
  claimInWrite?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of routes of different shapes
export type AnyRoute = Route<any, any>;

const JSON_TYPE = "application/json; charset=utf-8";

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

/**
 * The query parameters a route accepts: its paramVars after the path-bound ones (one per path
 * parameter). Any other is refused (`unknownQueryParams`), as an unknown body field is.
 */
export function queryParamsOf(r: AnyRoute): string[] {
  const pathParams = r.path.match(/:\w+/g)?.length ?? 0;
  return (r.paramVars ?? []).slice(pathParams);
}

/**
 * 400 invalid_parameter naming each query parameter the route does not take: a misspelt filter
 * (`/comments/search?query=x` for `q`) is never silently dropped to answer everything.
 */
export function unknownQueryParams(query: Query, accepted: ReadonlySet<string>): void {
  const unknown = Object.keys(query).filter((k) => !accepted.has(k));
  if (unknown.length) throw errors.invalidParameter(unknown.map((path) => ({ path, message: "is not a known parameter" })));
}

/** Mounts the route table; `countOperation` is the app's graphql_operations_total counter. */
export function mountRoutes(fastify: FastifyInstance, app: AppServices, yoga: Yoga, routes: AnyRoute[], countOperation: OperationCounter) {
  const run = createOperationRunner(yoga, countOperation);
  for (const r of routes) {
    const paramVars = new Set(r.paramVars ?? []);
    const queryParams = new Set(queryParamsOf(r));
    fastify.route({
      method: r.method,
      url: `/api/v1${r.path}`,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        let ctx: RequestContext | undefined;
        let scope: IdempotencyScope | undefined;
        try {
          ctx = announceRateLimit(await createRequestContext(app, req.headers, { method: req.method, ip: req.ip }), reply, false);
          if (r.adminOnly && !isAdmin(ctx.principal)) {
            throw errors.unauthenticated("This route takes the admin console's JWT (Authorization: Bearer).");
          }
          // read once the caller is known: a request without credentials is told 401, not about its key
          const key = r.method !== "GET" && ctx.principal ? idempotencyKeyOf(req.headers) : null;
          if (key) {
            const begun = await beginIdempotent(
              ctx,
              key,
              { method: req.method, url: req.url, body: req.body },
              { claimInWrite: r.claimInWrite === true },
            );
            if (begun.kind === "answered") return sendStoredAnswer(reply, begun.answer, true);
            if (begun.kind === "refused") return sendProblem(reply, begun.error);
            ctx.idempotency = scope = begun.scope;
          }
          const answer = await answerOf(r, req, ctx, run, paramVars, queryParams);
          if (scope) {
            const s = scope;
            scope = undefined; // settled here, not again below
            if (s.superseded) return sendBegun(reply, answerClaim(s.superseded));
            await finishIdempotent(ctx, s, answer);
            return sendStoredAnswer(reply, answer, replayedFromRecords(s));
          }
          if (r.cache && answer.status === 200) {
            const { maxAgeSeconds } = r.cache;
            const maxAge = typeof maxAgeSeconds === "number" ? maxAgeSeconds : maxAgeSeconds(req.query as Query);
            return sendCacheable(req, reply, answer.body, maxAge);
          }
          return sendStoredAnswer(reply, answer, false);
        } catch (err) {
          if (ctx && scope?.superseded) return sendBegun(reply, answerClaim(scope.superseded));
          if (ctx && scope)
            await finishIdempotent(ctx, scope, { status: err instanceof AppError ? err.status : 500, headers: {}, body: "" });
          if (err instanceof AppError) return sendProblem(reply, err);
          throw err;
        }
      },
    });
  }
}

/** The answer of a key another request holds or answered (found when the write tried to claim it). */
function sendBegun(reply: FastifyReply, begun: Begun) {
  if (begun.kind === "answered") return sendStoredAnswer(reply, begun.answer, true);
  if (begun.kind === "refused") return sendProblem(reply, begun.error);
  throw new Error("a superseded key cannot run");
}

/** Runs the route's operation: the answer (a problem document for a refusal), not yet sent. */
async function answerOf(
  r: AnyRoute,
  req: FastifyRequest,
  ctx: RequestContext,
  run: RunOperation,
  paramVars: Set<string>,
  queryParams: ReadonlySet<string>,
): Promise<StoredAnswer> {
  unknownQueryParams(req.query as Query, queryParams);
  const variables = r.variables({
    params: req.params as Record<string, string>,
    query: req.query as Query,
    body: req.body,
  });
  const result = await run({ document: r.document, variables, context: ctx, paramVars });
  if (result.errors.length) {
    const appErr = toAppError(result.errors, paramVars);
    if (!appErr) {
      req.log.error({ errors: result.errors.map((e) => ({ message: e.message, stack: e.originalError?.stack })) }, "operation failed");
    }
    const err = appErr ?? internalError();
    return { status: err.status, headers: { "content-type": PROBLEM_TYPE, ...err.headers }, body: problemBody(err, req.id) };
  }
  const data = result.data as Parameters<typeof r.respond>[0];
  const payload = r.respond(data);
  if (payload === undefined) return { status: 204, headers: {}, body: "" };
  const status = typeof r.status === "function" ? r.status(data) : (r.status ?? 200);
  return { status, headers: { "content-type": JSON_TYPE }, body: JSON.stringify(payload) };
}

/** A strong ETag of the JSON answer; a matching If-None-Match (weakly: src/http/etag.ts) gets 304 with no body. */
function sendCacheable(req: FastifyRequest, reply: FastifyReply, body: string, maxAgeSeconds: number) {
  const etag = `"${sha256(body, "base64url").slice(0, 32)}"`;
  // the answer depends on the caller's tenant (its key) and, for CORS, on the origin
  reply.headers({ ETag: etag, "Cache-Control": `public, max-age=${maxAgeSeconds}`, Vary: "Origin, X-API-Key" });
  if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
  return reply.status(200).type("application/json; charset=utf-8").send(body);
}
