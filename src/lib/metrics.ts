// The service's Prometheus metrics (prom-client), one registry per app: built by the composition
// root and handed to what records into it. GET /metrics serves `registry.metrics()`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<"route" | "method" | "status">;
  httpDuration: Histogram<"route" | "method">;
  graphqlOperations: Counter<"operation" | "outcome">;
  /** /graphql requests by the way they were served: `compiled` or `direct` (a backend's plain POST), `idempotent` (a mutation under Idempotency-Key) or `yoga` */
  graphqlRequests: Counter<"path">;
  eventsAppended: Counter;
  /** events the search projector passed (src/modules/comments/engine/search-projector.ts) */
  searchProjected: Counter;
  /** from an event's time to the search projector's applying it */
  searchProjectionLag: Histogram;
  eventsPublished: Counter<"outcome">;
  fanoutLag: Histogram;
  fanout: Histogram;
  webhookDeliveries: Counter<"outcome">;
  webhookLatency: Histogram;
  /** moderation hook checks by outcome: approve, hold, reject, timeout, error, breaker_open */
  moderationHookCalls: Counter<"outcome">;
  moderationHookDuration: Histogram;
  rateLimitRefusals: Counter;
  /** consumes sent to the rate limiter's store (a batch and its lease is one) */
  rateLimitStoreCalls: Counter;
  retentionDeleted: Counter<"what">;
  /** requests of the read routes by where their reads went: `replica`, or `primary` and why (docs/scaling.md "Read replicas") */
  databaseReads: Counter<"target" | "reason">;
  /** statements a replica failed (`unreachable`) or refused (`refused`) that ran again on the primary */
  replicaFallbacks: Counter<"replica" | "reason">;
  /** gauges read on scrape: open streams, queue depth and oldest job age, breaker states, pool use */
  gauge(
    name: string,
    help: string,
    labelNames: string[],
    collect: (set: (labels: Record<string, string>, value: number) => void) => Promise<void> | void,
  ): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    registry,
    httpRequests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests by route, method and status",
      labelNames: ["route", "method", "status"],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency",
      labelNames: ["route", "method"],
      buckets: seconds,
      registers: [registry],
    }),
    graphqlOperations: new Counter({
      name: "graphql_operations_total",
      help: "GraphQL operations by name and outcome",
      labelNames: ["operation", "outcome"],
      registers: [registry],
    }),
    graphqlRequests: new Counter({
      name: "graphql_requests_total",
      help: "/graphql requests by path: compiled (a backend's query run compiled), direct (its other plain POSTs), idempotent (mutations under Idempotency-Key) or yoga (everything else)",
      labelNames: ["path"],
      registers: [registry],
    }),
    eventsAppended: new Counter({ name: "events_appended_total", help: "Events written to the log", registers: [registry] }),
    searchProjected: new Counter({
      name: "search_projection_events_total",
      help: "Events of the log the search projector passed (their comments' documents made again)",
      registers: [registry],
    }),
    searchProjectionLag: new Histogram({
      name: "search_projection_lag_seconds",
      help: "From an event's time (its write's, by the writer's clock) to the search projector's applying it: how long a comment waits to be found by its words",
      buckets: seconds,
      registers: [registry],
    }),
    eventsPublished: new Counter({
      name: "events_published_total",
      help: "Events published to the bus, by outcome",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    fanoutLag: new Histogram({
      name: "fanout_lag_seconds",
      help: "From an event's commit to its arrival on this instance's bus",
      buckets: seconds,
      registers: [registry],
    }),
    fanout: new Histogram({
      name: "stream_fanout_seconds",
      help: "The time one event took to be written to every stream of its discussion on this instance (its event loop does nothing else meanwhile)",
      buckets: [0.0005, 0.001, ...seconds],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: "webhook_deliveries_total",
      help: "Webhook delivery attempts by outcome",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    webhookLatency: new Histogram({
      name: "webhook_delivery_duration_seconds",
      help: "Webhook attempt latency",
      buckets: seconds,
      registers: [registry],
    }),
    moderationHookCalls: new Counter({
      name: "moderation_hook_calls_total",
      help: "Moderation hook checks by outcome: the hook's decision, or timeout, error, breaker_open (the fallback applied)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    moderationHookDuration: new Histogram({
      name: "moderation_hook_duration_seconds",
      help: "Moderation hook request latency (calls made, whatever their outcome)",
      buckets: seconds,
      registers: [registry],
    }),
    rateLimitRefusals: new Counter({
      name: "rate_limit_refusals_total",
      help: "Requests refused with 429 by the rate limiter",
      registers: [registry],
    }),
    rateLimitStoreCalls: new Counter({
      name: "rate_limit_store_calls_total",
      help: "Consumes sent to the rate limiter's store (Redis); requests served from a lease make none",
      registers: [registry],
    }),
    retentionDeleted: new Counter({
      name: "retention_deleted_total",
      help: "Rows deleted by the retention job",
      labelNames: ["what"],
      registers: [registry],
    }),
    databaseReads: new Counter({
      name: "db_read_routes_total",
      help: "Requests of the read routes by where their reads went: replica, or primary with the reason (no_replica, consistency, sticky, route)",
      labelNames: ["target", "reason"],
      registers: [registry],
    }),
    replicaFallbacks: new Counter({
      name: "db_replica_fallbacks_total",
      help: "Statements a read replica failed (unreachable) or refused (refused) that ran again on the primary",
      labelNames: ["replica", "reason"],
      registers: [registry],
    }),
    gauge(name, help, labelNames, collect) {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          this.reset();
          await collect((labels, value) => this.set(labels, value));
        },
      });
    },
  };
}
