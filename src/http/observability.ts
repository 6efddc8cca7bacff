// Request ids, one access-log line per request, HTTP metrics and GET /metrics (contract section 9).
import { randomUUID, timingSafeEqual } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import type { FastifyInstance } from "fastify";
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

export function mountObservability(fastify: FastifyInstance, opts: { metrics: Metrics; metricsToken?: string | undefined }): void {
  const { metrics } = opts;
  // Callback hooks (an async hook costs every request a promise), and the metric children of a
  // route and method kept (prom-client hashes the label object on every call otherwise).
  fastify.addHook("onRequest", (req, reply, done) => {
    reply.header("X-Request-Id", req.id);
    done();
  });
  // the access log's fields are only gathered when its level is on
  const log = fastify.log;
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
  fastify.addHook("onResponse", (req, reply, done) => {
    const route = req.routeOptions.url ?? "unmatched";
    const seconds = reply.elapsedTime / 1000;
    const c = childrenOf(route, req.method);
    const status = reply.statusCode;
    let count = c.count.get(status);
    if (!count) c.count.set(status, (count = metrics.httpRequests.labels({ route, method: req.method, status: String(status) })));
    count.inc();
    c.duration.observe(seconds);
    if (accessLog) {
      // on the app's logger: the request's own (a child bound to reqId) is only made when needed
      log.info(
        { reqId: req.id, method: req.method, route, path: req.url.split("?")[0], status, ms: Math.round(seconds * 1000) },
        "request",
      );
    }
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
