// What every execution path of a request keeps true, named once. A request is executed one of six
// ways, each doing part of the request pipeline itself for speed; this table says, for each thing
// every answer must get right, where each path does it and with which shared step. The shared steps
// are named as the functions themselves (a rename or a removal breaks the build here), the places
// as paths (npm run references:check). test/request-invariants.test.ts runs every row through every
// path over HTTP: a row added here fails there until each path keeps it, or says why not.
//
// To add a concern: a row here (its `paths` must name all six), then its probe in
// test/request-invariants.test.ts. A path that does not keep it today is an `exception` (with the
// reason): its probe is then expected to fail, so the exception cannot outlive its fix.
import { createRequestContext, db, store } from "../context/request.js";
import { rateLimitHeaders } from "../auth/rate-limit.js";
import { requestIdOf, createRequestRecorder, mountObservability } from "./observability.js";
import { internalError, knownFailure, problemBody, sendProblem, writeProblem } from "./problem.js";
import { beginIdempotent, finishIdempotent, idempotencyKeyOf, sendStoredAnswer } from "./idempotency.js";
import { maskGraphQLError, useRequestErrorCodes } from "./graphql/errors.js";
import { createOperationCounter } from "./compiled-operations.js";
import { announceRateLimit } from "./request-context.js";
import { graphqlContext } from "./graphql/context.js";
import { createGraphQLServer } from "./graphql/server.js";
import { createDirectGraphQL } from "./graphql/direct.js";
import { createIdempotentGraphQL } from "./graphql/idempotent.js";
import { createOperationRunner } from "./rest/execute.js";
import { mountRoutes } from "./rest/router.js";
import { mountConsistency } from "./consistency.js";
import { routeReads } from "../context/read-routing.js";
import { mountPlainRoute, plainContext, refusalOf } from "./plain-route.js";

/** The ways a request is executed, and what selects each. */
export const EXECUTION_PATHS = {
  yoga: "src/http/graphql/server.ts: /graphql through yoga's whole pipeline (a request with an Origin, GET, batches, subscriptions, other media types)",
  direct: "src/http/graphql/direct.ts: a backend's plain POST /graphql (JSON, no Origin); a one-root-field query of a caller runs compiled",
  idempotent: "src/http/graphql/idempotent.ts: a /graphql mutation carrying Idempotency-Key (from a backend or a browser)",
  rest: "src/http/rest/router.ts: the /api/v1 routes, each a compiled GraphQL document (src/http/rest/execute.ts)",
  sse: "src/modules/streams/sse-route.ts: GET /api/v1/stream/:discussionId, answered before fastify (src/http/raw-routes.ts)",
  plain:
    "src/http/plain-route.ts: a feature's fastify route outside the REST table (http-routes.ts: feeds, import and export, pages, forms)",
} as const;

export type ExecutionPath = keyof typeof EXECUTION_PATHS;

/** A shared step a path calls: the function itself (named here, never called). */
type Step = (...args: never[]) => unknown;

/** How one path keeps one invariant. */
export type Keeping =
  /** where the path does it, and the shared steps it calls for it */
  | { kept: string; by: readonly Step[] }
  /** the path does not keep it today: why (its probe is expected to fail) */
  | { exception: string; by?: readonly Step[] }
  /** the invariant has nothing to hold on this path: why */
  | { notApplicable: string };

export interface Invariant {
  /** what must hold for every answer of every path */
  holds: string;
  paths: Record<ExecutionPath, Keeping>;
}

/** The answers of /graphql refuse as GraphQL errors; REST and the stream as problem documents. */
const GRAPHQL_ERRORS = "errors[].extensions.code (AppError's extensions)";

export const REQUEST_INVARIANTS = {
  "request-id": {
    holds:
      "Every answer carries X-Request-Id: the caller's when it is 1–128 safe characters, else a new UUID; problem documents and the access log carry the same id.",
    paths: {
      yoga: {
        kept: "fastify's genReqId (src/http/fastify.ts) and the onRequest hook of mountObservability",
        by: [requestIdOf, mountObservability],
      },
      direct: { kept: "the same fastify hooks (the /graphql route)", by: [requestIdOf, mountObservability] },
      idempotent: {
        kept: "the same fastify hooks; a replayed answer keeps only its content type and location (KEPT_HEADERS)",
        by: [requestIdOf, mountObservability],
      },
      rest: { kept: "the same fastify hooks; problemBody writes it as requestId", by: [requestIdOf, mountObservability, problemBody] },
      sse: {
        kept: "serve() in src/modules/streams/sse-route.ts: the id on every head, the stream's and a refusal's",
        by: [requestIdOf, writeProblem],
      },
      plain: { kept: "the same fastify hooks; problemBody writes it as requestId", by: [requestIdOf, mountObservability, problemBody] },
    },
  },
  authentication: {
    holds:
      "No credentials or an unknown key → 401 unauthenticated, whatever else the request holds: REST and the stream as a problem document, /graphql as a GraphQL error at HTTP 401.",
    paths: {
      yoga: {
        kept: "the context function of createGraphQLServer (a bad key) and useUnauthenticatedStatus (no key)",
        by: [createRequestContext, createGraphQLServer],
      },
      direct: {
        kept: "an answer with errors, or the context's refusal (ServerContext.contextFailure), goes through yoga's pipeline",
        by: [createDirectGraphQL, graphqlContext],
      },
      idempotent: {
        kept: "the context before the key: its refusal is answered by yoga's pipeline (contextFailure); no credentials → the direct path or yoga",
        by: [createIdempotentGraphQL, graphqlContext],
      },
      rest: { kept: "mountRoutes: the context, then sendProblem", by: [createRequestContext, sendProblem] },
      sse: {
        kept: "openStream: the context, then streamCaller (src/modules/streams/engine/access.ts); writeProblem",
        by: [createRequestContext, writeProblem],
      },
      plain: {
        kept: "mountPlainRoute: a caller's route makes the context (plainContext), requirePrincipal, then sendProblem",
        by: [plainContext, createRequestContext, sendProblem],
      },
    },
  },
  tenant: {
    holds:
      "A caller reaches only its own tenant's data: another tenant's id is not found (404 not_found), never 403, and nothing of it changes.",
    paths: {
      yoga: { kept: "resolvers read through the request's tenant store (src/db/tenant-store.ts)", by: [db, store] },
      direct: { kept: "the same resolvers, compiled", by: [db, store] },
      idempotent: { kept: "the same resolvers under yoga's pipeline", by: [db, store] },
      rest: { kept: "the same resolvers, compiled (src/http/rest/execute.ts)", by: [db, store] },
      sse: {
        kept: "the stream is the caller's tenant's (streamCaller); the hub reads that tenant's discussion (src/stream-engine/channel.ts)",
        by: [createRequestContext],
      },
      plain: { kept: "the handlers read through the request's tenant store; an engine's through contextForTenant", by: [db, store] },
    },
  },
  capability: {
    holds: "A key without the capability an operation needs → missing_capability naming `required` (REST 403; /graphql a field error).",
    paths: {
      yoga: { kept: "authScopes on fields (src/graphql/builder.ts unauthorizedError)", by: [createGraphQLServer] },
      direct: { kept: "the same field scopes; a refused field's answer goes through yoga's pipeline", by: [createDirectGraphQL] },
      idempotent: { kept: "the same field scopes under yoga's pipeline", by: [createIdempotentGraphQL] },
      rest: {
        kept: "the same field scopes (REST runs GraphQL documents); adminOnly routes in mountRoutes",
        by: [createOperationRunner, mountRoutes],
      },
      sse: {
        notApplicable:
          "a stream needs no capability (any key, a publishable one or a ticket); moderate_content only widens what a backend's stream shows (src/modules/streams/engine/access.ts)",
      },
      plain: { kept: "mountPlainRoute's caller rule ({ capability }) in plainContext", by: [plainContext, mountPlainRoute] },
    },
  },
  "rate-limit-units": {
    holds:
      "A caller's request spends units of its per-minute budget, once: one per request, one per root field of a GraphQL operation; past the budget → 429 rate_limited with Retry-After and RateLimit-*, counted once in rate_limit_refusals_total.",
    paths: {
      yoga: {
        kept: "createRequestContext spends one; useRootFieldRateLimit the further root fields",
        by: [createRequestContext, createGraphQLServer],
      },
      direct: {
        kept: "compiled: one root field, one unit; otherwise yoga's pipeline with the context already counted, or its refusal (contextFailure), never counted again",
        by: [graphqlContext, createDirectGraphQL],
      },
      idempotent: {
        kept: "graphqlContext, then yoga's pipeline with that context (useRootFieldRateLimit) or its refusal (contextFailure)",
        by: [graphqlContext, createIdempotentGraphQL],
      },
      rest: { kept: "createRequestContext in mountRoutes (a REST document has one root field)", by: [createRequestContext] },
      sse: {
        kept: "createRequestContext in openStream (a key's stream; a ticket's was counted when it was minted)",
        by: [createRequestContext],
      },
      plain: { kept: "createRequestContext in plainContext: one unit per request of a caller", by: [plainContext, createRequestContext] },
    },
  },
  "rate-limit-headers": {
    holds: "An answer to a counted request says the budget left: RateLimit-Limit, -Remaining and -Reset.",
    paths: {
      yoga: {
        kept: "graphqlContext announces them, again after more root fields (onRateLimit)",
        by: [announceRateLimit, rateLimitHeaders],
      },
      direct: { kept: "graphqlContext", by: [announceRateLimit, rateLimitHeaders] },
      idempotent: { kept: "graphqlContext; a replay carries the replaying request's", by: [announceRateLimit, rateLimitHeaders] },
      rest: { kept: "mountRoutes, after the context", by: [announceRateLimit, rateLimitHeaders] },
      sse: { kept: "serve(): the head of a counted stream, as the 429 does", by: [rateLimitHeaders] },
      plain: { kept: "plainContext, after the context", by: [plainContext, announceRateLimit, rateLimitHeaders] },
    },
  },
  idempotency: {
    holds:
      "A write under Idempotency-Key runs once: a repeat answers the kept answer with Idempotent-Replayed: true; the key with another request → 422 idempotency_key_reused.",
    paths: {
      yoga: {
        kept: "delegated: src/app.ts hands every /graphql mutation carrying the header to the idempotent path first",
        by: [createIdempotentGraphQL],
      },
      direct: { kept: "delegated, as for yoga", by: [createIdempotentGraphQL] },
      idempotent: {
        kept: "claim, run through yoga's pipeline, keep; sendStoredAnswer",
        by: [idempotencyKeyOf, beginIdempotent, finishIdempotent, sendStoredAnswer],
      },
      rest: {
        kept: "mountRoutes (REST writes; a one-statement write claims the key in its statement)",
        by: [idempotencyKeyOf, beginIdempotent, finishIdempotent, sendStoredAnswer],
      },
      sse: { notApplicable: "a GET: a read, safe to repeat (the header is ignored, as on every read)" },
      plain: {
        notApplicable:
          "no plain route honours Idempotency-Key: their writes are an import's upload (a job of its own, found by its id), forms and sign-ins",
      },
    },
  },
  errors: {
    holds: `A refusal or failure answers its stable code, never internal_error for the caller's mistake: REST and the stream as application/problem+json (type, title, status, code, detail, requestId); /graphql as ${GRAPHQL_ERRORS}.`,
    paths: {
      yoga: { kept: "maskGraphQLError, useRequestErrorCodes", by: [maskGraphQLError, useRequestErrorCodes] },
      direct: {
        kept: "an answer with errors is yoga's: run again through its pipeline (getResultForParams, processRegularResult)",
        by: [createDirectGraphQL, maskGraphQLError],
      },
      idempotent: {
        kept: "yoga's pipeline; the key's own refusals (400, 409, 422) as GraphQL errors",
        by: [createIdempotentGraphQL, maskGraphQLError],
      },
      rest: {
        kept: "toAppError (src/http/rest/execute.ts), problemBody, sendProblem; fastify's own errors in src/http/fastify.ts",
        by: [knownFailure, problemBody, sendProblem, internalError],
      },
      sse: {
        kept: "serve(): knownFailure, internalError, writeProblem (before the head; after it the stream only ends)",
        by: [knownFailure, internalError, writeProblem],
      },
      plain: {
        kept: "mountPlainRoute: refusalOf (knownFailure, internalError), sendProblem; a page route's `problem` answers a page",
        by: [refusalOf, knownFailure, internalError, sendProblem],
      },
    },
  },
  "access-record": {
    holds:
      'Each answered request adds one to http_requests_total{route,method,status} and http_request_duration_seconds, and writes one access-log line (msg "request") with its reqId, route and status.',
    paths: {
      yoga: { kept: "mountObservability's onResponse hook → the app's RequestRecorder", by: [mountObservability, createRequestRecorder] },
      direct: { kept: "the same hook", by: [mountObservability, createRequestRecorder] },
      idempotent: { kept: "the same hook", by: [mountObservability, createRequestRecorder] },
      rest: { kept: "the same hook (route = the route's pattern)", by: [mountObservability, createRequestRecorder] },
      sse: { kept: "serve(): the same RequestRecorder, when the stream opens or is refused", by: [createRequestRecorder] },
      plain: { kept: "the same hook (route = the route's pattern)", by: [mountObservability, createRequestRecorder] },
    },
  },
  "operation-count": {
    holds:
      "Each GraphQL operation run adds one to graphql_operations_total{operation,outcome}, once, whichever executor ran it (an answer run again counts once).",
    paths: {
      yoga: { kept: "useOperationMetrics (src/http/graphql/server.ts)", by: [createOperationCounter, createGraphQLServer] },
      direct: {
        kept: "compiled: counted after it succeeds; otherwise yoga's pipeline counts it",
        by: [createOperationCounter, createDirectGraphQL],
      },
      idempotent: { kept: "yoga's pipeline counts it", by: [createOperationCounter, createGraphQLServer] },
      rest: { kept: "createOperationRunner counts each run", by: [createOperationCounter, createOperationRunner] },
      sse: { notApplicable: "a stream runs no GraphQL operation (GraphQL subscriptions are yoga's)" },
      plain: { notApplicable: "a plain route runs no GraphQL operation" },
    },
  },
  "served-by": {
    holds:
      "Each /graphql request adds one to graphql_requests_total{path}: the path that served it (compiled, direct, idempotent or yoga).",
    paths: {
      yoga: { kept: "the /graphql handler in src/app.ts counts what each path answered", by: [createGraphQLServer] },
      direct: { kept: "the same handler (compiled or direct, as createDirectGraphQL answers)", by: [createDirectGraphQL] },
      idempotent: { kept: "the same handler (idempotent, as createIdempotentGraphQL answers)", by: [createIdempotentGraphQL] },
      rest: { notApplicable: "not /graphql: http_requests_total names each route" },
      sse: { notApplicable: "not /graphql: http_requests_total names the stream's route" },
      plain: { notApplicable: "not /graphql: http_requests_total names each route" },
    },
  },
  "read-your-writes": {
    holds:
      "A write's answer (a mutation; a POST, PUT, PATCH or DELETE below 400) carries X-Service-Consistency (without read replicas, the token of a position no replica reaches) and a read's does not; with replicas, a read's tenant reads go where src/http/database-routes.ts says, unless its token, a recent write of its caller or the replicas' health keep it on the primary.",
    paths: {
      yoga: {
        kept: "useReadRouting (src/http/graphql/server.ts) routes a query and marks a mutation's request; mountConsistency's onSend hook adds the token",
        by: [createGraphQLServer, routeReads, mountConsistency],
      },
      direct: {
        kept: "routeReads before a compiled query; a mutation runs in yoga's pipeline, which marks it",
        by: [createDirectGraphQL, routeReads, mountConsistency],
      },
      idempotent: {
        kept: "its mutation runs in yoga's pipeline, which marks it; the token is added to a replayed answer too",
        by: [createIdempotentGraphQL, mountConsistency],
      },
      rest: {
        kept: "createOperationRunner routes its operation's reads; the onSend hook adds the token to a write method's answer",
        by: [createOperationRunner, routeReads, mountConsistency],
      },
      sse: {
        notApplicable: "a stream writes nothing; its replay reads a replica only when it has every event (src/events/replica-replay.ts)",
      },
      plain: {
        kept: "mountConsistency's onSend hook adds the token to a write method's answer, as for every fastify route; routeReads for a route's `reads`",
        by: [mountConsistency, routeReads],
      },
    },
  },
} as const satisfies Record<string, Invariant>;

export type InvariantId = keyof typeof REQUEST_INVARIANTS;
