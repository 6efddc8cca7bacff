// Request ids, one access-log line per request, HTTP metrics and GET /metrics (contract section 9).
import { randomUUID, timingSafeEqual } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Counter, Histogram } from "prom-client";
import type { Logger } from "pino";
import type { Metrics } from "../lib/metrics.js";

/** An incoming X-Request-Id is kept when it is 1–128 safe characters; otherwise a new one is made. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && SAFE_REQUEST_ID.test(v) ? v : randomUUID();
}

const digest = (s: string) => sha256(s, "buffer");

/** Routes are the app's own (unmatched requests count as one), so this bounds nothing in practice. */
const MAX_ROUTE_CHILDREN = 1_000;

/** What is recorded of an answered request: the metrics and, at info, one access-log line. */
export interface AnsweredRequest {
  reqId: string;
  method: string;
  /** the route's pattern (`/api/v1/stream/:discussionId`), or "unmatched" */
  route: string;
  /** the URL with its query string (only the path is logged) */
  url: string;
  status: number;
  seconds: number;
}

export type RequestRecorder = (r: AnsweredRequest) => void;

/**
 * Records answered requests: http_requests_total and http_request_duration_seconds, and the access
 * log. Shared by fastify's onResponse hook and the routes served before fastify (src/http/raw-routes.ts).
 * The metric children of a route and method are kept (prom-client hashes the label object on every
 * call otherwise); the access log's fields are only gathered when its level is on.
 */
export function createRequestRecorder(log: FastifyBaseLogger, metrics: Metrics): RequestRecorder {
  const levelCheck = (log as Partial<Logger>).isLevelEnabled;
  const accessLog = typeof levelCheck === "function" ? levelCheck.call(log, "info") : true;
  const children = new Map<string, { count: Map<number, Counter.Internal>; duration: Histogram.Internal<"route" | "method"> }>();
  const childrenOf = (route: string, method: string) => {
    const key = `${method} ${route}`;
    let c = children.get(key);
    if (!c) {
      if (children.size >= MAX_ROUTE_CHILDREN) children.clear();
      children.set(key, (c = { count: new Map(), duration: metrics.httpDuration.labels({ route, method }) }));
    }
    return c;
  };
  return ({ reqId, method, route, url, status, seconds }) => {
    const c = childrenOf(route, method);
    let count = c.count.get(status);
    if (!count) c.count.set(status, (count = metrics.httpRequests.labels({ route, method, status: String(status) })));
    count.inc();
    c.duration.observe(seconds);
    if (accessLog) {
      // on the app's logger: the request's own (a child bound to reqId) is only made when needed
      log.info({ reqId, method, route, path: url.split("?")[0], status, ms: Math.round(seconds * 1000) }, "request");
    }
  };
}

export function mountObservability(
  fastify: FastifyInstance,
  opts: { record: RequestRecorder; metrics: Metrics; metricsToken?: string | undefined },
): void {
  const { metrics, record } = opts;
  // callback hooks: an async hook costs every request a promise
  fastify.addHook("onRequest", (req, reply, done) => {
    reply.header("X-Request-Id", req.id);
    done();
  });
  fastify.addHook("onResponse", (req, reply, done) => {
    record({
      reqId: req.id,
      method: req.method,
      route: req.routeOptions.url ?? "unmatched",
      url: req.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
  fastify.get("/metrics", async (req, reply) => {
    if (opts.metricsToken) {
      const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
      // constant time: compare digests of equal length
      if (!m?.[1] || !timingSafeEqual(digest(m[1]), digest(opts.metricsToken))) {
        return reply.status(401).header("WWW-Authenticate", "Bearer").send({ code: "unauthenticated" });
      }
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
