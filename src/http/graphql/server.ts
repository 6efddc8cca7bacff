// graphql-yoga serving the Pothos schema at /graphql, and its plugins, with the same request context
// as REST (src/http/graphql/context.ts). The envelope carries every protection once: document
// limits (limits.ts) and validation rules — which REST's fixed documents also pass, once
// each (src/http/rest/execute.ts) — per-root-field rate limiting, production defaults (no
// introspection or suggestions, no GraphiQL), and request errors with specific codes (never
// internal_error). A backend's plain POST is served around it by src/http/graphql/direct.ts.
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { useGraphQLSSE } from "@graphql-yoga/plugin-graphql-sse";
import { blockFieldSuggestionsPlugin } from "@escape.tech/graphql-armor-block-field-suggestions";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST, GraphQLError, NoSchemaIntrospectionCustomRule, type DocumentNode, type GraphQLSchema } from "graphql";
import type { OperationCounter } from "../compiled-operations.js";
import { useSubscribeErrorsWithData } from "./sse-errors.js";
import type { AppServices, RequestContext } from "../../context/request.js";
import { AppError } from "../../lib/errors.js";
import { knownFailure } from "../problem.js";
import { useGraphQLLimits } from "./limits.js";
import { maskGraphQLError, useRequestErrorCodes } from "./errors.js";
import { graphqlContext, type ServerContext } from "./context.js";
import { createOperationFactsCache, type OperationFactsOf } from "./operation-facts.js";
import { createReadsCache } from "../database-routes.js";
import type { WriteMarks } from "../consistency.js";
import { routeReads } from "../../context/read-routing.js";
import { BROWSER_EXPOSED_HEADERS, BROWSER_REQUEST_HEADERS, type CorsPolicy } from "../cors.js";

export type GraphQLServer = YogaServerInstance<ServerContext, RequestContext>;

/**
 * A request without credentials whose every root field was refused for that reason is refused as a
 * whole: HTTP 401, as REST answers (and as a bad key already is, before execution). Partial
 * answers, and refusals of an authenticated caller (403, 404), keep GraphQL's 200.
 */
function useUnauthenticatedStatus(): Plugin<RequestContext> {
  return {
    onExecute({ args }) {
      if (args.contextValue.principal) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result || !result.errors?.length) return;
          const data = result.data as Record<string, unknown> | null | undefined;
          if (data && Object.values(data).some((v) => v !== null)) return;
          const all401 = result.errors.every((e) => {
            const original = e.originalError;
            return original instanceof AppError && original.status === 401;
          });
          if (all401) setResult({ ...result, extensions: { ...result.extensions, http: { status: 401 } } });
        },
      };
    },
  };
}

/** Each root field beyond the first (counted when the context was made) costs one more unit. */
function useRootFieldRateLimit(facts: OperationFactsOf): Plugin<RequestContext> {
  return {
    // synchronous unless there is something to count: an async hook costs every execution a promise
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      if (!ctx.principal) return;
      const principal = ctx.principal;
      const extra = facts(args.document, args.operationName).rootFields - 1;
      if (extra <= 0) return;
      return (async () => {
        try {
          const tenant = ctx.cache.tenant ? await ctx.cache.tenant : undefined;
          ctx.rateLimit = await ctx.app.rateLimiter.consume(principal, tenant?.settings, extra);
          ctx.onRateLimit?.(ctx.rateLimit);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          setResultAndStopExecution({ errors: [withHttp(err)] });
        }
      })();
    },
  };
}

const withHttp = (err: AppError) =>
  new AppError(err.status, err.code, err.detail, { extra: { http: { status: err.status, headers: err.headers } }, headers: err.headers });

const operationName = (facts: OperationFactsOf, document: DocumentNode, name: string | null | undefined): string =>
  name ?? facts(document, name).name ?? "anonymous";

function useOperationMetrics(facts: OperationFactsOf, count: OperationCounter): Plugin {
  return {
    onExecute({ args }) {
      const name = operationName(facts, args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          count(name, "errors" in result && result.errors?.length ? "error" : "ok");
        },
      };
    },
  };
}

/**
 * A query's reads on a replica where the table says so (src/http/database-routes.ts,
 * src/context/read-routing.ts); a mutation's request marked as a write, whose answer gets the
 * consistency token (src/http/consistency.ts).
 */
function useReadRouting(marks: WriteMarks): Plugin<RequestContext> {
  const readsOf = createReadsCache();
  return {
    onExecute({ args }) {
      const reads = readsOf(args.document, args.operationName);
      if (reads === "replica") return void routeReads(args.contextValue, reads);
      if (getOperationAST(args.document, args.operationName)?.operation !== "mutation") return;
      // a mutation after a query of the same request (a batch) reads the primary
      delete args.contextValue.readsFrom;
      const raw = (args.contextValue as Partial<ServerContext>).req?.raw;
      if (raw) marks.mark(raw);
    },
  };
}

/**
 * Results are written with the native `JSON.stringify`, not graphql-jit's compiled stringifier
 * (which the jit plugin hangs on each result and yoga would prefer): for a comment page it was
 * about three times slower. The direct path's compiled queries answer the same way.
 */
function useNativeStringify(): Plugin {
  const drop = ({ result }: { result: unknown }) => {
    if (result && typeof result === "object" && "stringify" in result) delete (result as { stringify?: unknown }).stringify;
  };
  return { onExecute: () => ({ onExecuteDone: drop }) };
}

/** Document validation errors (unknown fields, introspection in production…) get our code too. */
function useValidationCodes(): Plugin {
  return {
    onValidate:
      () =>
      ({ valid, result, setResult }) => {
        if (valid) return;
        setResult(
          result.map((e) =>
            e instanceof AppError
              ? e
              : new GraphQLError(e.message, {
                  nodes: e.nodes,
                  extensions: { ...e.extensions, code: "invalid_query", http: { status: 400, spec: true } },
                }),
          ),
        );
      },
  };
}

/**
 * The yoga server of one app. `countOperation` is the app's graphql_operations_total counter,
 * shared with the direct path and REST; the facts of each parsed document are kept here, per server.
 * `marks` are the app's requests that ran a mutation (src/http/consistency.ts).
 */
export function createGraphQLServer(
  app: AppServices,
  schema: GraphQLSchema,
  cors: CorsPolicy,
  countOperation: OperationCounter,
  marks: WriteMarks,
): GraphQLServer {
  const facts = createOperationFactsCache();
  const production = app.config.NODE_ENV === "production";
  const introspection = !production || app.config.GRAPHQL_INTROSPECTION;
  const plugins: Plugin[] = [
    useGraphQLLimits(),
    useValidationCodes(),
    useRequestErrorCodes(),
    useOperationMetrics(facts, countOperation),
    useRootFieldRateLimit(facts) as Plugin,
    useReadRouting(marks) as Plugin,
    useUnauthenticatedStatus() as Plugin,
    useSubscribeErrorsWithData(),
    useGraphQLSSE({ endpoint: "/graphql/stream" }),
    // Queries and mutations run as compiled JavaScript (graphql-jit), compiled once per document:
    // the generic executor's per-field work was most of a REST read's CPU. Subscriptions keep the
    // reference executor.
    useGraphQlJit({}, { enableIf: (args) => !facts(args.document, args.operationName).subscription }) as Plugin,
    useNativeStringify(),
  ];
  if (!introspection) {
    plugins.push(
      { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) },
      blockFieldSuggestionsPlugin() as Plugin,
    );
  }
  return createYoga<ServerContext, RequestContext>({
    schema,
    graphqlEndpoint: "/graphql",
    logging: false,
    landingPage: false,
    // GraphiQL is served by src/http/graphql/graphiql.ts: yoga's plugin would add an onRequest hook to every request
    graphiql: false,
    // only the allowed origins, never with credentials (src/http/cors.ts)
    cors: (request) => {
      const origin = request.headers.get("origin");
      const answered = request.method === "OPTIONS" ? cors.preflight(origin) : cors.allows(origin);
      return answered && origin
        ? {
            origin,
            credentials: false,
            methods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
            allowedHeaders: BROWSER_REQUEST_HEADERS,
            exposedHeaders: BROWSER_EXPOSED_HEADERS,
            maxAge: 600,
          }
        : false;
    },
    plugins,
    // request errors get specific codes, anything unexpected is internal_error (./errors.ts)
    maskedErrors: { maskError: maskGraphQLError(app.log) },
    context: async (initial) => {
      if (initial.prebuilt) return initial.prebuilt;
      const { request, reply } = initial;
      try {
        if (initial.contextFailure !== undefined) throw initial.contextFailure;
        return await graphqlContext(app, request.headers, request.method, reply, initial.req?.ip);
      } catch (err) {
        const known = knownFailure(err);
        if (known) throw withHttp(known);
        throw err;
      }
    },
  });
}
