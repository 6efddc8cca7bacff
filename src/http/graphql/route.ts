// /graphql and /graphql/stream: which path serves a request. A browser opening /graphql gets
// GraphiQL (where it is on); a mutation under an Idempotency-Key is claimed first and its answer
// kept (idempotent.ts); a backend's plain POST runs compiled (direct.ts); anything else goes through
// yoga's whole pipeline (server.ts), its answer written in one piece or, for a stream, piped.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { GraphQLSchema } from "graphql";
import type { Config } from "../../config.js";
import type { AppServices } from "../../context/request.js";
import type { OperationCounter } from "../compiled-operations.js";
import type { CorsPolicy } from "../cors.js";
import type { WriteMarks } from "../consistency.js";
import { createGraphQLServer, type GraphQLServer } from "./server.js";
import { createDirectGraphQL } from "./direct.js";
import { createIdempotentGraphQL } from "./idempotent.js";
import { mountGraphiql } from "./graphiql.js";

/** Mounts the /graphql routes; answers the yoga server, which REST runs its documents through too. */
export function mountGraphQL(
  fastify: FastifyInstance,
  services: AppServices,
  config: Config,
  schema: GraphQLSchema,
  cors: CorsPolicy,
  countOperation: OperationCounter,
  marks: WriteMarks,
): GraphQLServer {
  const yoga = createGraphQLServer(services, schema, cors, countOperation, marks);
  const direct = createDirectGraphQL(yoga, services, countOperation);
  const idempotent = createIdempotentGraphQL(yoga, services, cors);
  const graphiql = mountGraphiql(fastify, config);
  const graphqlHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    // a browser opening /graphql: GraphiQL, where it is on
    if (graphiql && req.method === "GET" && req.url.split("?")[0] === "/graphql" && (req.headers.accept ?? "").includes("text/html")) {
      return graphiql(reply);
    }
    // a mutation with an Idempotency-Key: claimed first, its answer kept (src/http/graphql/idempotent.ts)
    const served = (req.headers["idempotency-key"] !== undefined && (await idempotent(req, reply))) || (await direct(req, reply));
    services.metrics.graphqlRequests.inc({ path: served || "yoga" });
    if (served) return reply;
    const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
    response.headers.forEach((value, key) => void reply.header(key, value));
    reply.status(response.status);
    const type = response.headers.get("content-type") ?? "";
    if (response.body && (type.startsWith("text/event-stream") || type.startsWith("multipart/"))) {
      reply.send(response.body); // a stream (subscriptions, graphql-sse): piped as it comes
    } else {
      // a whole answer: one write with Content-Length, not a chunked pipe (about a fifth of the CPU)
      reply.send(Buffer.from(await response.arrayBuffer()));
    }
    return reply;
  };
  fastify.route({ url: "/graphql", method: ["GET", "POST", "OPTIONS"], handler: graphqlHandler });
  // graphql-sse single-connection mode (PUT reserves a stream, GET opens it, POST/DELETE operations)
  fastify.route({ url: "/graphql/stream", method: ["GET", "POST", "PUT", "DELETE", "OPTIONS"], handler: graphqlHandler });
  return yoga;
}
