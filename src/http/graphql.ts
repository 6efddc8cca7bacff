// graphql-yoga serving the Pothos schema at /graphql, with the same request context as REST.
import { createYoga, type YogaServerInstance } from "graphql-yoga";
import { useGraphQLSSE } from "@graphql-yoga/plugin-graphql-sse";
import { useSubscribeErrorsWithData } from "./graphql-sse-errors.js";
import type { GraphQLSchema } from "graphql";
import type { FastifyReply, FastifyRequest } from "fastify";
import { createRequestContext, type AppServices, type RequestContext } from "../context/request.js";
import { AppError } from "../lib/errors.js";
import { knownFailure } from "./problem.js";

type ServerContext = { req: FastifyRequest; reply: FastifyReply };

export function createGraphQLServer(app: AppServices, schema: GraphQLSchema): YogaServerInstance<ServerContext, RequestContext> {
  return createYoga<ServerContext, RequestContext>({
    schema,
    graphqlEndpoint: "/graphql",
    logging: false,
    landingPage: false,
    // subscriptions: graphql-sse distinct connections at /graphql (built in), single connection at /graphql/stream
    plugins: [useSubscribeErrorsWithData(), useGraphQLSSE({ endpoint: "/graphql/stream" })],
    maskedErrors: {
      maskError: (error, message) => {
        const original = (error as { originalError?: unknown }).originalError;
        if (error instanceof AppError || original instanceof AppError) return error as Error;
        const known = knownFailure(original);
        if (known) return known;
        if ((error as { extensions?: { code?: string } }).extensions?.code === undefined && !original) return error as Error;
        app.log.error({ err: original ?? error }, "graphql resolver error");
        return new AppError(500, "internal_error", message);
      },
    },
    context: async (initial) => {
      // REST routes run through this server's envelope with the context they already built
      if ("principal" in initial) return initial as unknown as RequestContext;
      const { request } = initial;
      try {
        return { ...(await createRequestContext(app, request.headers)) };
      } catch (err) {
        const known = knownFailure(err);
        if (known) {
          throw new AppError(known.status, known.code, known.detail, {
            extra: { http: { status: known.status, headers: known.headers } },
          });
        }
        throw err;
      }
    },
  });
}
