// Builds the HTTP app: /graphql, /api/v1 (REST over the same schema), the stream, health checks.
// Returns { start, stop } so tests and main.ts run it the same way.
import type { AddressInfo } from "node:net";
import type { Config } from "./config.js";
import { createRuntime, type Runtime } from "./services.js";
import type { Clock } from "./lib/clock.js";
import type { Logger } from "pino";
import { createFastify } from "./http/fastify.js";
import { schema } from "./schema/index.js";
import { createGraphQLServer } from "./graphql/yoga.js";
import { mountRoutes } from "./rest/router.js";
import { restRoutes } from "./rest/routes/index.js";
import { mountHealth } from "./http/health.js";

export interface App {
  runtime: Runtime;
  /** base URL once started, e.g. http://127.0.0.1:3000 */
  url: string;
  start(): Promise<string>;
  stop(): Promise<void>;
}

export async function buildApp(config: Config, opts: { clock?: Clock; log?: Logger; migrate?: boolean } = {}): Promise<App> {
  const runtime = await createRuntime(config, opts);
  const { services } = runtime;
  const fastify = createFastify({ log: services.log, bodyLimit: config.BODY_LIMIT_BYTES });

  const yoga = createGraphQLServer(services, schema);
  fastify.route({
    url: "/graphql",
    method: ["GET", "POST", "OPTIONS"],
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
  mountRoutes(fastify, services, schema, restRoutes);
  mountHealth(fastify, runtime);

  const app: App = {
    runtime,
    url: "",
    async start() {
      await fastify.listen({ port: config.PORT, host: config.HOST });
      const addr = fastify.server.address() as AddressInfo;
      const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
      app.url = `http://${host}:${addr.port}`;
      return app.url;
    },
    async stop() {
      await fastify.close();
      await runtime.close();
    },
  };
  return app;
}
