// Delivery and limits: webhook delivery's tunables, stream replay, rate limits, streams (the console's
// Delivery & limits view).
import { z } from "zod";
import { group, setting } from "./define.js";

const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const DeliverySchema = group(
  { name: "DeliverySettings", title: "Webhook delivery" },
  {
    maxAttempts: setting(int(1, 20), {
      default: 3,
      label: "Attempts per event",
      help: "How many times an event is tried at an endpoint before it is given up (1–20).",
    }),
    backoffBaseMs: setting(int(1, 3_600_000), {
      default: 1000,
      label: "First retry after (seconds)",
      help: "The wait before the second attempt; each later wait doubles, with some jitter.",
      unit: "ms",
    }),
    attemptTimeoutMs: setting(int(100, 60_000), {
      default: 10_000,
      label: "Attempt timeout (seconds)",
      help: "How long one attempt waits for the endpoint's answer (0.1–60).",
      unit: "ms",
    }),
    breakerThreshold: setting(int(1, 1000), {
      default: 10,
      label: "Failures before pausing",
      help: "Failed attempts in a row that pause an endpoint's deliveries for a while.",
    }),
    breakerCooldownMs: setting(int(1, 86_400_000), {
      default: 60_000,
      label: "Pause (seconds)",
      help: "How long a paused endpoint waits before one trial attempt.",
      unit: "ms",
    }),
    disableThreshold: setting(int(1, 100_000), {
      default: 50,
      label: "Failures before disabling",
      help: "Failed attempts in a row after which an endpoint is disabled until you enable it.",
    }),
  },
);

export type DeliveryTunables = z.infer<typeof DeliverySchema>;

/** The delivery tunables' names: the one list every GraphQL type of them is built from. */
export const DELIVERY_TUNABLES = Object.keys(DeliverySchema.shape) as (keyof DeliveryTunables)[];

export const deliverySettings = {
  delivery: DeliverySchema,
  replay: group(
    { name: "ReplaySettings", title: "Stream replay" },
    {
      maxEvents: setting(int(0, 100_000), {
        default: 1000,
        label: "Events kept for replay (per discussion)",
        help: "A reconnecting stream catches up on at most this many events (0: none).",
      }),
      maxAgeSeconds: setting(int(0, 2_592_000), {
        default: 86_400,
        label: "Replay window (seconds)",
        help: "Events older than this are not replayed to a reconnecting stream.",
      }),
    },
  ),
  rateLimits: group(
    { name: "RateLimitSettings", title: "Rate limits" },
    {
      requestsPerMinute: setting(int(1, 1_000_000), {
        default: 6000,
        label: "Requests per minute, per API key",
        help: "Past it, requests get 429 with Retry-After.",
      }),
      streamConnections: setting(int(1, 1_000_000), {
        default: 10_000,
        label: "Open streams (whole tenant)",
        help: "Streams open at once across every instance; past it, new ones get 429.",
      }),
      /** per publishable key: every browser of the tenant's pages shares it */
      publishableKeyRequestsPerMinute: setting(int(1, 10_000_000), {
        default: 60_000,
        label: "Requests per minute, per publishable key",
        help: "Shared by every browser on your pages.",
      }),
      /** per reader (identity assertion `sub`) behind a publishable key */
      readerRequestsPerMinute: setting(int(1, 1_000_000), {
        default: 300,
        label: "Requests per minute, per reader",
        help: "For each signed-in reader behind a publishable key.",
      }),
    },
  ),
  stream: group(
    { name: "StreamSettings", title: "Streams" },
    {
      maxConnectionSeconds: setting(int(1, 86_400), {
        default: 1800,
        label: "Longest stream (seconds)",
        help: "A stream is closed after this long; clients reconnect and resume where they were.",
      }),
      heartbeatSeconds: setting(int(1, 3_600), {
        default: 15,
        label: "Heartbeat (seconds)",
        help: "How often an idle stream sends a keep-alive, so proxies keep it open.",
      }),
    },
  ),
};
