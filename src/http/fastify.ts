// The HTTP framework set-up: JSON parsing with the body limit, and every framework error as a
// problem document (malformed JSON 400, too large 413, wrong content type 415, unknown route 404).
import { createServer } from "node:http";
import Fastify, { LogController, type FastifyError, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { AppError, errors } from "../lib/errors.js";
import { internalError, knownFailure, sendProblem } from "./problem.js";
import { requestIdOf } from "./observability.js";
import { lazyRequestLogger } from "./request-logger.js";
import type { RawRoutes } from "./raw-routes.js";
import type { TrustedProxies } from "./client-address.js";

export interface HttpLimits {
  bodyLimit: number;
  /** the whole request must arrive within this (a client dripping its body is cut) */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export function createFastify(
  opts: { log: Logger; raw?: RawRoutes; proxies?: Pick<TrustedProxies, "fastifyOption"> } & HttpLimits,
): FastifyInstance {
  const raw = opts.raw;
  const app = Fastify({
    // Node's own server with its timeouts, checked every second (Node's default check runs every 30 s,
    // so a slow client would keep its socket up to 30 s past its deadline). Responses are not limited:
    // streams stay open for as long as they need.
    serverFactory: (handler) =>
      createServer(
        {
          requestTimeout: opts.requestTimeoutMs,
          headersTimeout: Math.min(opts.requestTimeoutMs, 15_000),
          keepAliveTimeout: opts.keepAliveTimeoutMs,
          connectionsCheckingInterval: Math.min(1_000, opts.requestTimeoutMs),
        },
        // a route served before fastify takes its requests first (src/http/raw-routes.ts)
        raw ? (req, res) => void (raw.handle(req, res) || handler(req, res)) : handler,
      ),
    loggerInstance: opts.log,
    bodyLimit: opts.bodyLimit,
    // Ids reach 128 chars (discussion ids); longer ones get the domain's 400/404 problem, not the router's 414.
    routerOptions: { maxParamLength: 1024 },
    // Router errors (undecodable URL, a parameter past that length) as problem documents too.
    frameworkErrors: (_err, _req, reply) => {
      sendProblem(reply, errors.invalidParameter([{ path: "url", message: "a path parameter is too long or not valid URL encoding" }]));
    },
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    // X-Request-Id: the caller's when it is safe, else a new one (observability.ts logs and echoes it)
    requestIdHeader: false,
    genReqId: (req) => requestIdOf(req.headers["x-request-id"]),
    // request.ip and request.protocol: X-Forwarded-For and -Proto only from TRUST_PROXY's peers (src/http/client-address.ts)
    trustProxy: opts.proxies?.fastifyOption ?? false,
    return503OnClosing: true,
    forceCloseConnections: true,
  }) as unknown as FastifyInstance;

  app.removeAllContentTypeParsers();
  // fastify tests the regex against the whole header, parameters included (`; charset=utf-8`)
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: "string" }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(errors.malformedJson(), undefined);
    }
  });

  app.setNotFoundHandler((req, reply) => {
    sendProblem(reply, errors.notFound(`Route ${req.method} ${req.url.split("?")[0]}`));
  });

  app.setErrorHandler((err: FastifyError | AppError, req, reply) => {
    if (err instanceof AppError) return sendProblem(reply, err);
    const known = knownFailure(err);
    if (known) return sendProblem(reply, known);
    switch (err.code) {
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return sendProblem(reply, errors.payloadTooLarge(opts.bodyLimit));
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
        return sendProblem(reply, errors.unsupportedMediaType());
      case "FST_ERR_CTP_EMPTY_JSON_BODY":
      case "FST_ERR_CTP_INVALID_JSON_BODY":
        return sendProblem(reply, errors.malformedJson());
    }
    if (err.statusCode === 413) return sendProblem(reply, errors.payloadTooLarge(opts.bodyLimit));
    if (err.statusCode === 415) return sendProblem(reply, errors.unsupportedMediaType());
    if (err.statusCode === 400) return sendProblem(reply, new AppError(400, "bad_request", err.message));
    req.log.error({ err }, "unhandled error");
    return sendProblem(reply, internalError());
  });
  return app;
}
