// Builds the HTTP app: /graphql, /api/v1 (REST over the same schema), the stream, health checks.
// Returns { start, stop } so tests and main.ts run it the same way.
import type { AddressInfo } from "node:net";
import type { Config } from "./config.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.js";
import { createFastify } from "./http/fastify.js";
import { trustedProxies } from "./http/client-address.js";
import { RawRoutes } from "./http/raw-routes.js";
import { schema } from "./modules/schema.js";
import { mountGraphQL } from "./http/graphql/route.js";
import { mountCompression } from "./http/compression.js";
import { createOperationCounter } from "./http/compiled-operations.js";
import { mountRoutes } from "./http/rest/router.js";
import { openApiDocument } from "./modules/openapi-document.js";
import { mountOpenApi } from "./http/openapi-route.js";
import { SERVICE_VERSION } from "./lib/version.js";
import { restRoutes } from "./modules/route-table.js";
import { mountHealth } from "./http/health.js";
import { mountIndex } from "./http/index-route.js";
import { createCorsPolicy, mountRestCors } from "./http/cors.js";
import { createWriteMarks, mountConsistency } from "./http/consistency.js";
import { createRequestRecorder, mountObservability } from "./http/observability.js";
import type { StreamHub } from "./stream-engine/hub.js";
import { mountStreamRoute } from "./modules/streams/sse-route.js";
import { mountConsoleAuth } from "./modules/console/engine/http-routes.js";
import { mountConsole } from "./http/console-static.js";
import { mountEmbed } from "./http/embed-static.js";
import { mountEmbedDemo } from "./modules/embed-demo/http-routes.js";
import { mountUnsubscribe } from "./modules/email/http-routes.js";
import { mountSignIn } from "./modules/sign-in/http-routes.js";
import { mountOidcSignIn } from "./modules/sign-in/oidc-routes.js";
import { mountPasskeys } from "./modules/sign-in/passkey-routes.js";
import { mountAlertLinks } from "./modules/alerts/http-routes.js";
import { mountWebmention } from "./modules/webmention/http-routes.js";
import { emailMode } from "./modules/email/transport.js";
import type { EmailWorker } from "./modules/email/engine/worker.js";
import type { WebhookWorker } from "./outbound/worker.js";
import { mountPortabilityRoutes } from "./modules/portability/http-routes.js";
import { mountFeedRoutes } from "./modules/feeds/http-routes.js";
import { mountIndexableRoutes } from "./modules/indexable/http-routes.js";
import { createWorkers } from "./workers.js";
import type { BlueskyPoller } from "./modules/bluesky/engine/poller.js";
import type { AutoCloseJob } from "./modules/discussions/engine/auto-close.js";
import { mountFederation } from "./modules/federation/http-routes.js";

export interface App {
  runtime: Runtime;
  /** base URL once started, e.g. http://127.0.0.1:3000 */
  url: string;
  /** the instance's SSE streams and GraphQL subscriptions (src/stream-engine/hub.ts) */
  streams: StreamHub;
  /** composes and sends reply emails (src/modules/email/engine/worker.ts); started with the server unless RUN_EMAIL_WORKER=0 (src/workers.ts) */
  email: EmailWorker;
  /** locks discussions past their tenant's autoLockAfterDays (src/modules/discussions/engine/auto-close.ts); started unless AUTO_CLOSE_INTERVAL_MS=0 */
  autoClose: AutoCloseJob;
  /** tells discussions' followers of new comments (the outbound queue's follow pool, src/modules/following/engine/fanout.ts); started unless RUN_FOLLOW_WORKER=0 */
  follow: WebhookWorker;
  /** reads linked Bluesky posts' replies and posts autoPost's discussions (src/modules/bluesky/engine/poller.ts); started unless BLUESKY_POLL_INTERVAL_MS=0 */
  bluesky: BlueskyPoller;
  start(): Promise<string>;
  stop(): Promise<void>;
}

/** The app's options are its runtime's (src/runtime.ts), but for the data folder's lock: a server's. */
export type AppOptions = Omit<RuntimeOptions, "lockRole">;

export async function buildApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const runtime = await createRuntime(config, opts);
  const { services } = runtime;
  // routes served before fastify's pipeline (the SSE stream: src/http/raw-routes.ts)
  const raw = new RawRoutes();
  // the client's address, the same for fastify's routes and the raw ones (TRUST_PROXY)
  const proxies = trustedProxies(config.TRUST_PROXY);
  const fastify = createFastify({
    log: services.log,
    raw,
    proxies,
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  });
  // before any route: each route gets the compression hook (src/http/compression.ts)
  await mountCompression(fastify);

  const cors = createCorsPolicy(services.origins);
  // this app's graphql_operations_total by name: yoga, the direct path and REST count with it
  const countOperation = createOperationCounter(services.metrics);
  // /graphql: which path serves each request (src/http/graphql/route.ts)
  // read-your-writes: the consistency token on every write's answer (src/http/consistency.ts)
  const writeMarks = createWriteMarks();
  mountConsistency(fastify, services, writeMarks);
  const yoga = mountGraphQL(fastify, services, config, schema, cors, countOperation, writeMarks);
  const record = createRequestRecorder(fastify.log, services.metrics);
  mountObservability(fastify, { record, metrics: services.metrics, metricsToken: config.METRICS_TOKEN });
  mountRestCors(fastify, cors);
  mountRoutes(fastify, services, yoga, restRoutes, countOperation);
  // the OpenAPI document, generated once (src/modules/openapi-document.ts)
  mountOpenApi(fastify, config, openApiDocument(SERVICE_VERSION));
  // --- streams
  const { streams } = services;
  mountStreamRoute(raw, { app: services, hub: streams, cors, record, addressOf: proxies.addressOf });
  mountPortabilityRoutes(fastify, services);
  mountFeedRoutes(fastify, services);
  mountIndexableRoutes(fastify, services);
  mountConsoleAuth(fastify, services);
  await mountConsole(fastify);
  mountEmbed(fastify);
  mountEmbedDemo(fastify, services);
  mountUnsubscribe(fastify, services);
  mountSignIn(fastify, services);
  mountOidcSignIn(fastify, services);
  mountPasskeys(fastify, services);
  mountAlertLinks(fastify, services);
  mountFederation(fastify, runtime.federation);
  mountWebmention(fastify, services);
  mountHealth(fastify, { db: services.db, redis: runtime.redis, email: emailMode(config) });
  mountIndex(fastify, config);
  const workers = createWorkers(runtime);

  const app: App = {
    runtime,
    streams,
    email: workers.email,
    autoClose: workers.autoClose,
    follow: workers.follow,
    bluesky: workers.bluesky,
    url: "",
    async start() {
      await fastify.listen({ port: config.PORT, host: config.HOST });
      const addr = fastify.server.address() as AddressInfo;
      const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
      app.url = `http://${host}:${addr.port}`;
      workers.start(app.url);
      return app.url;
    },
    async stop() {
      await streams.shutdown(); // every stream gets connection-timeout before the server closes
      await workers.stop();
      await fastify.close();
      await runtime.close();
    },
  };
  return app;
}
