// The direct path of /graphql: a backend's plain POST (JSON, no Origin) served without the fetch-API
// request and response around yoga's pipeline. A valid one-root-field query runs compiled
// (src/http/compiled-operations.ts) and its data is written directly; anything else enters yoga's
// operation pipeline (src/http/graphql/server.ts). The compiled operations by query text are this
// path's own, one cache per app (bounded).
import { processRegularResult } from "graphql-yoga";
import { getVariableValues, type DocumentNode, type ExecutionResult } from "graphql";
import type { FastifyReply, FastifyRequest } from "fastify";
import { compileValidated, type CompiledOperation, type OperationCounter } from "../compiled-operations.js";
import type { AppServices, RequestContext } from "../../context/request.js";
import { parseWithinLimits } from "./limits.js";
import { graphqlContext } from "./context.js";
import { operationFacts } from "./operation-facts.js";
import { routeReads } from "../../context/read-routing.js";
import type { GraphQLServer } from "./server.js";

/** The Accept values the direct path answers (anything else goes through yoga's negotiation). */
const DIRECT_MEDIA_TYPES: Record<string, string> = {
  "": "application/json",
  "*/*": "application/json",
  "application/json": "application/json",
  "application/graphql-response+json": "application/graphql-response+json",
};
const PARAM_KEYS = new Set(["query", "variables", "operationName"]);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** At most this many query texts are kept compiled (the cache starts again when full). */
const MAX_COMPILED_OPERATIONS = 1_000;

/**
 * Parsed and validated by the envelope (the document limits, every validation rule, production's
 * no-introspection), then compiled: only a query with one root field, so nothing the execution
 * hooks would add applies to it (the root-field rate limit counts fields beyond the first).
 */
function compileOperation(yoga: GraphQLServer, query: string, operationName: string | undefined): CompiledOperation | null {
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
 *
 * `countOperation` is the app's graphql_operations_total counter (the yoga server's).
 */
export function createDirectGraphQL(yoga: GraphQLServer, app: AppServices, countOperation: OperationCounter) {
  /** By operation name and query text; null = not one the compiled path runs (yoga's pipeline does). */
  const compiledOperations = new Map<string, CompiledOperation | null>();
  const compiledOperation = (query: string, operationName: string | undefined): CompiledOperation | null => {
    const key = `${operationName ?? ""}\u0000${query}`;
    const hit = compiledOperations.get(key);
    if (hit !== undefined) return hit;
    const entry = compileOperation(yoga, query, operationName);
    if (compiledOperations.size >= MAX_COMPILED_OPERATIONS) compiledOperations.clear();
    compiledOperations.set(key, entry);
    return entry;
  };
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
    const throughYoga = async (prebuilt?: RequestContext, contextFailure?: unknown) => {
      // yoga's own operation pipeline, with the server context yoga would pass: the request context
      // is built by the same `context` function, when yoga would build it (after validation), unless
      // it was built here already (or refused: yoga answers that refusal)
      const result = await yoga.getResultForParams(
        // what is read of the request here: its method (yoga's parse hook) and headers (our context)
        { params: params as { query: string }, request: { method: "POST", headers: req.headers } as unknown as Request },
        prebuilt ? { req, reply, prebuilt } : contextFailure !== undefined ? { req, reply, contextFailure } : { req, reply },
      );
      const done = result as ExecutionResult;
      if (!done.errors && !done.extensions && !(Symbol.asyncIterator in done)) return write(done, JSON.stringify);
      const response = processRegularResult(done, yoga.fetchAPI, mediaType);
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status).send(Buffer.from(await response.arrayBuffer()));
    };

    const op = compiledOperation(params.query, (params.operationName as string | null | undefined) ?? undefined);
    const varDefs = op?.operation?.variableDefinitions;
    if (!op || (varDefs?.length && getVariableValues(op.schema, varDefs, variables).errors)) {
      await throughYoga();
      return "direct";
    }
    let ctx: RequestContext;
    try {
      ctx = await graphqlContext(app, req.headers, "POST", reply, req.ip);
    } catch (err) {
      // a bad key or a refused request: yoga's answer for it (nothing has run, nothing is counted again)
      await throughYoga(undefined, err);
      return "direct";
    }
    if (!ctx.principal) {
      await throughYoga(ctx);
      return "direct";
    }
    routeReads(ctx, op.reads);
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
