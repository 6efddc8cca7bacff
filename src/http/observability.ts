// Request ids, one access-log line per request, HTTP metrics and GET /metrics (contract section 9).
import { randomUUID, timingSafeEqual } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import type { FastifyInstance } from "fastify";
import type { Metrics } from "../lib/metrics.js";

/** An incoming X-Request-Id is kept when it is 1–128 safe characters; otherwise a new one is made. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && SAFE_REQUEST_ID.test(v) ? v : randomUUID();
}

const digest = (s: string) => sha256(s, "buffer");

export function mountObservability(fastify: FastifyInstance, opts: { metrics: Metrics; metricsToken?: string | undefined }): void {
  const { metrics } = opts;
  fastify.addHook("onRequest", async (req, reply) => {
    reply.header("X-Request-Id", req.id);
  });
  fastify.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "unmatched";
    const seconds = reply.elapsedTime / 1000;
    metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ route, method: req.method }, seconds);
    req.log.info(
      { reqId: req.id, method: req.method, route, path: req.url.split("?")[0], status: reply.statusCode, ms: Math.round(seconds * 1000) },
      "request",
    );
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
