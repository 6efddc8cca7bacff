// /graphql mutations under an Idempotency-Key (contract section 11): a POST whose operation is a
// mutation and that carries the header is claimed before it runs (src/http/idempotency.ts), runs
// through yoga's whole pipeline with the claim in its context, and its answer is kept as it was
// written (status, media type, body). Queries, subscriptions and requests without the header are
// not this file's (the header is ignored on them: reads are safe to repeat).
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DocumentNode, OperationDefinitionNode } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import { AppError } from "../../lib/errors.js";
import type { AppServices, RequestContext } from "../../context/request.js";
import type { StoredAnswer } from "../../idempotency/records.js";
import type { CorsPolicy } from "../cors.js";
import { parseWithinLimits } from "./limits.js";
import { graphqlContext } from "./context.js";
import { beginIdempotent, finishIdempotent, idempotencyKeyOf, replayedFromRecords, sendStoredAnswer } from "../idempotency.js";

/** True when the body's operation (by operationName, or the only one) is a mutation. */
function isMutationRequest(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const { query, operationName } = body as { query?: unknown; operationName?: unknown };
  if (typeof query !== "string" || !query.includes("mutation")) return false;
  let doc: DocumentNode;
  try {
    doc = parseWithinLimits(query);
  } catch {
    return false; // yoga answers the syntax error or the refusal
  }
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === "OperationDefinition");
  const op = typeof operationName === "string" ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
  return op?.operation === "mutation";
}

/** A GraphQL answer's errors with no data written: a refusal, not kept. */
function answeredWithErrors(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { errors?: unknown[] };
    return Array.isArray(parsed.errors) && parsed.errors.length > 0;
  } catch {
    return true;
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- yoga's server context type does not matter here
type Yoga = YogaServerInstance<any, RequestContext>;

/**
 * Serves a /graphql mutation carrying Idempotency-Key: answers "idempotent" (graphql_requests_total's
 * path), or false when the request is not one or has no credentials (the direct path or yoga then
 * answers it). Credentials are judged before the key, as on REST: a refused caller gets yoga's
 * answer for the refusal, whatever the key.
 */
export function createIdempotentGraphQL(yoga: Yoga, app: AppServices, cors: CorsPolicy) {
  // an answer written here, not by yoga: the CORS headers yoga would have added
  const write = (req: FastifyRequest, reply: FastifyReply, answer: StoredAnswer, replayed: boolean) => {
    const corsHeaders = cors.headers(req.headers.origin);
    if (corsHeaders) reply.headers(corsHeaders);
    sendStoredAnswer(reply, answer, replayed);
  };
  const refusal = (err: AppError): StoredAnswer => ({
    status: err.status,
    headers: { ...err.headers, "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ errors: [err.toJSON()] }),
  });

  return async (req: FastifyRequest, reply: FastifyReply): Promise<"idempotent" | false> => {
    if (req.method !== "POST" || req.url.split("?")[0] !== "/graphql" || !isMutationRequest(req.body)) return false;
    let ctx: RequestContext;
    try {
      ctx = await graphqlContext(app, req.headers, "POST", reply, req.ip);
    } catch (err) {
      // refused (a bad key, over the budget, an origin not allowed): yoga's answer for that refusal,
      // without building the context again (which would count the request again)
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply, contextFailure: err });
      response.headers.forEach((value, name) => void reply.header(name, value));
      reply.status(response.status).send(Buffer.from(await response.arrayBuffer()));
      return "idempotent";
    }
    if (!ctx.principal) return false; // no credentials: the direct path or yoga refuses what needs them
    let key: string | null;
    try {
      key = idempotencyKeyOf(req.headers);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      write(req, reply, refusal(err), false);
      return "idempotent";
    }
    if (!key) return false;
    const begun = await beginIdempotent(ctx, key, { method: "POST", url: req.url, body: req.body });
    if (begun.kind === "answered") {
      write(req, reply, begun.answer, true);
      return "idempotent";
    }
    if (begun.kind === "refused") {
      write(req, reply, refusal(begun.error), false);
      return "idempotent";
    }
    const scope = begun.scope;
    let answer: StoredAnswer;
    try {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply, prebuilt: { ...ctx, idempotency: scope } });
      answer = {
        status: response.status,
        headers: { "content-type": response.headers.get("content-type") ?? "application/json; charset=utf-8" },
        body: Buffer.from(await response.arrayBuffer()).toString("utf8"),
      };
      response.headers.forEach((value, name) => void reply.header(name, value));
    } catch (err) {
      await finishIdempotent(ctx, scope, { status: 500, headers: {}, body: "" });
      throw err;
    }
    await finishIdempotent(ctx, scope, answer, answeredWithErrors(answer.body));
    sendStoredAnswer(reply, answer, replayedFromRecords(scope));
    return "idempotent";
  };
}
