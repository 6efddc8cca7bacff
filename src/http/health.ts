// GET /healthz: the process is up. GET /readyz: database and Redis reachable (200) or not (503); on a
// Redis Cluster, Redis is reachable when every master serving slots answers. `details.email` says
// whether email goes out (smtp) or is off (no SMTP_URL); `details.replicas` each read replica's state
// (serving, lagging, down) and replay lag at its last check (src/db/replicas/replica-set.ts): a
// replica is not a dependency of readiness (without one, reads go to the primary).
import type { FastifyInstance } from "fastify";
import type { Database } from "../db/client.js";
import { pingAll, type RedisClient } from "../lib/redis-connection.js";

const withTimeout = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error("timeout")), ms).unref())]);

export function mountHealth(fastify: FastifyInstance, deps: { db: Database; redis: RedisClient | undefined; email: "smtp" | "off" }) {
  fastify.get("/healthz", async (_req, reply) => reply.send({ status: "ok" }));
  fastify.get("/readyz", async (_req, reply) => {
    const checks: Record<string, "ok" | "down"> = {};
    try {
      await withTimeout(deps.db.ping(), 2000);
      checks.database = "ok";
    } catch {
      checks.database = "down";
    }
    if (deps.redis) {
      try {
        await withTimeout(pingAll(deps.redis), 2000);
        checks.redis = "ok";
      } catch {
        checks.redis = "down";
      }
    }
    const ok = Object.values(checks).every((v) => v === "ok");
    // email is not a dependency of readiness: off only means no email goes out
    const replicas = deps.db.replicas.status();
    return reply.status(ok ? 200 : 503).send({
      status: ok ? "ok" : "unavailable",
      checks,
      details: { email: deps.email, ...(replicas.length ? { replicas } : {}) },
    });
  });
}
