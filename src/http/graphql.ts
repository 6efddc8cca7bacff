// graphql-yoga serving the Pothos schema at /graphql, with the same request context as REST. The
// envelope carries every protection once: document limits (graphql-limits.ts) and validation rules
// — which REST's fixed documents also pass, once each (src/http/rest/execute.ts) — per-root-field
// rate limiting, production defaults (no introspection or suggestions, no GraphiQL), and request
// errors with specific codes (never internal_error).
import { createYoga, processRegularResult, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { useGraphQLSSE } from "@graphql-yoga/plugin-graphql-sse";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { blockFieldSuggestionsPlugin } from "@escape.tech/graphql-armor-block-field-suggestions";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { compileValidated, operationCounter, type CompiledOperation } from "./compiled-operations.js";
import {
  GraphQLError,
  Kind,
  getVariableValues,
  NoSchemaIntrospectionCustomRule,
  getOperationAST,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { FastifyReply, FastifyRequest } from "fastify";
import { useSubscribeErrorsWithData } from "./graphql-sse-errors.js";
import { createRequestContext, type AppServices, type RequestContext } from "../context/request.js";
import { rateLimitHeaders } from "../auth/rate-limit.js";
import { AppError } from "../lib/errors.js";
import { knownFailure } from "./problem.js";
import { parseWithinLimits, useGraphQLLimits } from "./graphql-limits.js";
import { maskGraphQLError, useRequestErrorCodes } from "./graphql-errors.js";
import { BROWSER_EXPOSED_HEADERS, BROWSER_REQUEST_HEADERS, type CorsPolicy } from "./cors.js";

type ServerContext = {
  req: FastifyRequest;
  reply: FastifyReply;
  /** the request context the direct path built already (yoga then uses it rather than build one) */
  prebuilt?: RequestContext;
};

/** Root fields of the operation, aliases and fragments included: each is one unit of the rate limit. */
function rootFields(set: SelectionSetNode, fragments: Map<string, SelectionSetNode>, seen = new Set<string>()): number {
  let n = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) n += sel.name.value.startsWith("__") ? 0 : 1;
    else if (sel.kind === Kind.INLINE_FRAGMENT) n += rootFields(sel.selectionSet, fragments, seen);
    else if (!seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      const f = fragments.get(sel.name.value);
      if (f) n += rootFields(f, fragments, seen);
    }
  }
  return n;
}

interface OperationFacts {
  /** the operation's name, or null when it has none (or the document does not determine one) */
  name: string | null;
  subscription: boolean;
  /** root fields, aliases and fragments included (0 when no operation is determined) */
  rootFields: number;
}

/** What the plugins ask of an operation, once per parsed document (documents come from yoga's parser cache). */
const factsOf = new WeakMap<DocumentNode, Map<string | null, OperationFacts>>();

function operationFacts(document: DocumentNode, operationName: string | null | undefined): OperationFacts {
  let byName = factsOf.get(document);
  if (!byName) factsOf.set(document, (byName = new Map()));
  const key = operationName ?? null;
  let facts = byName.get(key);
  if (!facts) {
    const op = getOperationAST(document, key ?? undefined);
    const fragments = new Map<string, SelectionSetNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
    facts = {
      name: op?.name?.value ?? null,
      subscription: op?.operation === "subscription",
      rootFields: op ? rootFields(op.selectionSet, fragments) : 0,
    };
    byName.set(key, facts);
  }
  return facts;
}

const isSubscription = (document: DocumentNode, operationName: string | null | undefined): boolean =>
  operationFacts(document, operationName).subscription;

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
function useRootFieldRateLimit(): Plugin<RequestContext> {
  return {
    // synchronous unless there is something to count: an async hook costs every execution a promise
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      if (!ctx.principal) return;
      const principal = ctx.principal;
      const extra = operationFacts(args.document, args.operationName).rootFields - 1;
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

const operationName = (document: DocumentNode, name: string | null | undefined): string =>
  name ?? operationFacts(document, name).name ?? "anonymous";

function useOperationMetrics(metrics: AppServices["metrics"]): Plugin {
  const count = operationCounter(metrics);
  return {
    onExecute({ args }) {
      const name = operationName(args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          count(name, "errors" in result && result.errors?.length ? "error" : "ok");
        },
      };
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

export function createGraphQLServer(
  app: AppServices,
  schema: GraphQLSchema,
  cors: CorsPolicy,
): YogaServerInstance<ServerContext, RequestContext> {
  const production = app.config.NODE_ENV === "production";
  const introspection = !production || app.config.GRAPHQL_INTROSPECTION;
  const plugins: Plugin[] = [
    useGraphQLLimits(),
    useValidationCodes(),
    useRequestErrorCodes(),
    useOperationMetrics(app.metrics),
    useRootFieldRateLimit() as Plugin,
    useUnauthenticatedStatus() as Plugin,
    useSubscribeErrorsWithData(),
    useGraphQLSSE({ endpoint: "/graphql/stream" }),
    // Queries and mutations run as compiled JavaScript (graphql-jit), compiled once per document:
    // the generic executor's per-field work was most of a REST read's CPU. Subscriptions keep the
    // reference executor.
    useGraphQlJit({}, { enableIf: (args) => !isSubscription(args.document, args.operationName) }) as Plugin,
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
    graphiql: app.config.GRAPHIQL,
    // GraphiQL's scripts and styles inlined from @graphql-yoga/render-graphiql: nothing from a CDN
    renderGraphiQL,
    // only the allowed origins, never with credentials (src/http/cors.ts)
    cors: (request) => {
      const origin = request.headers.get("origin");
      return cors.allows(origin)
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
    // request errors get specific codes, anything unexpected is internal_error (./graphql-errors.ts)
    maskedErrors: { maskError: maskGraphQLError(app.log) },
    context: async (initial) => {
      if (initial.prebuilt) return initial.prebuilt;
      const { request, reply } = initial;
      try {
        return await graphqlContext(app, request.headers, request.method, reply);
      } catch (err) {
        const known = knownFailure(err);
        if (known) throw withHttp(known);
        throw err;
      }
    },
  });
}

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

/** The Accept values the direct path answers (anything else goes through yoga's negotiation). */
const DIRECT_MEDIA_TYPES: Record<string, string> = {
  "": "application/json",
  "*/*": "application/json",
  "application/json": "application/json",
  "application/graphql-response+json": "application/graphql-response+json",
};
const PARAM_KEYS = new Set(["query", "variables", "operationName"]);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** By operation name and query text; null = not one the compiled path runs (yoga's pipeline does). */
const compiledOperations = new Map<string, CompiledOperation | null>();
const MAX_COMPILED_OPERATIONS = 1_000;

function compiledOperation(
  yoga: YogaServerInstance<ServerContext, RequestContext>,
  query: string,
  operationName: string | undefined,
): CompiledOperation | null {
  const key = `${operationName ?? ""}\u0000${query}`;
  const hit = compiledOperations.get(key);
  if (hit !== undefined) return hit;
  const entry = compileOperation(yoga, query, operationName);
  if (compiledOperations.size >= MAX_COMPILED_OPERATIONS) compiledOperations.clear();
  compiledOperations.set(key, entry);
  return entry;
}

/**
 * Parsed and validated by the envelope (the document limits, every validation rule, production's
 * no-introspection), then compiled: only a query with one root field, so nothing the execution
 * hooks would add applies to it (the root-field rate limit counts fields beyond the first).
 */
function compileOperation(
  yoga: YogaServerInstance<ServerContext, RequestContext>,
  query: string,
  operationName: string | undefined,
): CompiledOperation | null {
  // parsed here, not by the envelope: a document that fails is yoga's to answer (and to cache)
  let document: DocumentNode;
  try {
    document = parseWithinLimits(query);
  } catch {
    return null;
  }
  const op = compileValidated(yoga, document, operationName);
  if (!("query" in op) || op.operation?.operation !== "query") return null;
  return operationFacts(document, operationName).rootFields === 1 ? op : null;
}

/**
 * The common `/graphql` request of a backend — POST, a JSON body with `query`, `variables` and
 * `operationName`, no Origin, Accept JSON — without the fetch-API request and response around
 * yoga's pipeline (about a quarter of such a request's CPU). Anything else (browsers and CORS,
 * batches, GET, subscriptions, other media types) answers `false`: yoga serves it whole.
 *
 * A valid query with one root field and valid variables, from a caller with credentials, runs as
 * a compiled query (compiled once per query text) and its data is written directly: the envelope's
 * execution hooks have nothing to add to such an answer. Everything else, and any answer with
 * errors, goes through yoga's own operation pipeline (`getResultForParams`: parameter checks,
 * parse and validation caches, every plugin, error masking) and result processor
 * (`processRegularResult`). A query answered with errors is run again there with the context
 * already built (it reads only, and its rate-limit unit is not counted twice), so error answers
 * are exactly yoga's. Answers which path served (graphql_requests_total), or false for yoga's.
 */
export function createDirectGraphQL(yoga: YogaServerInstance<ServerContext, RequestContext>, app: AppServices) {
  const countOperation = operationCounter(app.metrics);
  return async (req: FastifyRequest, reply: FastifyReply): Promise<"compiled" | "direct" | false> => {
    if (req.method !== "POST" || req.headers.origin !== undefined || req.url !== "/graphql") return false;
    if (!(req.headers["content-type"] ?? "").startsWith("application/json")) return false;
    const mediaType = DIRECT_MEDIA_TYPES[(req.headers.accept ?? "").replace(/\s|;charset=utf-8$/gi, "").toLowerCase()];
    const params = req.body;
    if (!mediaType || !isPlainObject(params) || typeof params.query !== "string") return false;
    for (const key of Object.keys(params)) if (!PARAM_KEYS.has(key)) return false;
    if (params.variables != null && !isPlainObject(params.variables)) return false;
    if (params.operationName != null && typeof params.operationName !== "string") return false;
    // a subscription is an event stream: yoga's (a word check is enough to leave it to yoga)
    if (params.query.includes("subscription")) return false;
    const variables = (params.variables ?? {}) as Record<string, unknown>;

    const write = (result: ExecutionResult, stringify: (r: ExecutionResult) => string) => {
      // data alone: what processRegularResult answers for it (200, the media type, the result as
      // JSON), without building a fetch-API Response
      reply.status(200).header("content-type", `${mediaType}; charset=utf-8`);
      reply.send(stringify(result));
    };
    const throughYoga = async (prebuilt?: RequestContext) => {
      // yoga's own operation pipeline, with the server context yoga would pass: the request context
      // is built by the same `context` function, when yoga would build it (after validation)
      const result = await yoga.getResultForParams(
        // what is read of the request here: its method (yoga's parse hook) and headers (our context)
        { params: params as { query: string }, request: { method: "POST", headers: req.headers } as unknown as Request },
        prebuilt ? { req, reply, prebuilt } : { req, reply },
      );
      const done = result as ExecutionResult;
      if (!done.errors && !done.extensions && !(Symbol.asyncIterator in done)) return write(done, JSON.stringify);
      const response = processRegularResult(done, yoga.fetchAPI, mediaType);
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status).send(Buffer.from(await response.arrayBuffer()));
    };

    const op = compiledOperation(yoga, params.query, (params.operationName as string | null | undefined) ?? undefined);
    const varDefs = op?.operation?.variableDefinitions;
    if (!op || (varDefs?.length && getVariableValues(op.schema, varDefs, variables).errors)) {
      await throughYoga();
      return "direct";
    }
    let ctx: RequestContext;
    try {
      ctx = await graphqlContext(app, req.headers, "POST", reply);
    } catch {
      // a bad key or a refused request: yoga's answer for it (nothing has run)
      await throughYoga();
      return "direct";
    }
    if (!ctx.principal) {
      await throughYoga(ctx);
      return "direct";
    }
    const result = (await op.query.query(undefined, ctx, variables)) as ExecutionResult;
    if (result.errors?.length) {
      await throughYoga(ctx);
      return "direct";
    }
    countOperation(op.name, "ok");
    write(result, JSON.stringify);
    return "compiled";
  };
}
