// The gauges /metrics reads on scrape, over the app's services: open streams, the outbound queue,
// webhook breaker states, the read replicas, database connections. Registered once by the
// composition root (src/runtime.ts).
import type { AppServices } from "./services.js";

/** Gauges read on scrape: open streams, the webhook queue, breaker states, database connections. */
export function registerGauges(s: AppServices): void {
  s.metrics.gauge("streams_open", "Open SSE streams and GraphQL subscriptions on this instance", [], (set) =>
    set({}, s.streams.stats().sessions),
  );
  s.metrics.gauge("webhook_queue_depth", "Pending webhook deliveries", [], async (set) => {
    const [r] = await s.prisma.$queryRaw<{ n: bigint; oldest: Date | null }[]>`
      SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'`;
    set({}, Number(r?.n ?? 0));
    oldestAge = r?.oldest ? (s.clock.now().getTime() - r.oldest.getTime()) / 1000 : 0;
  });
  let oldestAge = 0;
  s.metrics.gauge("webhook_oldest_job_age_seconds", "Age of the oldest pending webhook delivery", [], (set) => set({}, oldestAge));
  s.metrics.gauge("webhook_endpoints", "Webhook endpoints by breaker state", ["state"], async (set) => {
    const rows = await s.prisma.$queryRaw<{ state: string; n: bigint }[]>`
      SELECT state::text AS state, count(*) AS n FROM webhook_endpoints GROUP BY state`;
    for (const st of ["active", "circuit_open", "disabled"]) set({ state: st }, Number(rows.find((r) => r.state === st)?.n ?? 0));
  });
  // the read replicas (docs/scaling.md "Read replicas"): which serve, and their replay lag at the last check
  s.metrics.gauge("db_replica_serving", "1 when the read replica serves reads, 0 when it is lagging or down", ["replica"], (set) => {
    for (const r of s.db.replicas.status()) set({ replica: r.name }, r.state === "serving" ? 1 : 0);
  });
  s.metrics.gauge(
    "db_replica_state",
    "The read replica's state at the last check: 1 for the state it is in",
    ["replica", "state"],
    (set) => {
      for (const r of s.db.replicas.status())
        for (const st of ["serving", "lagging", "down"]) set({ replica: r.name, state: st }, r.state === st ? 1 : 0);
    },
  );
  s.metrics.gauge(
    "db_replica_lag_seconds",
    "The read replica's replay lag at the last check (absent while it does not answer)",
    ["replica"],
    (set) => {
      for (const r of s.db.replicas.status()) if (r.lagMs !== null) set({ replica: r.name }, r.lagMs / 1000);
    },
  );
  s.metrics.gauge("db_pool_connections", "Database pool connections by state", ["state"], (set) => {
    const p = s.db.poolStats();
    if (!p) return;
    set({ state: "total" }, p.total);
    set({ state: "idle" }, p.idle);
    set({ state: "waiting" }, p.waiting);
  });
}
