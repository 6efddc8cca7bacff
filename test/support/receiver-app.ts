// Webhook test helpers: a server with webhook tunables (short handshake timeout, fast polling),
// verified endpoints, keys with chosen capabilities, and events from discussion lock/unlock.
import type { AppOptions } from "../../src/app.js";
import type { WebhookOptions } from "../../src/outbound/webhook-runtime.js";
import { startServer, type TestServer } from "./server.js";
import type { TestTenant } from "./fixtures.js";
import { eventually, type Receiver } from "./receiver.js";

export const WEBHOOK_TEST_OPTIONS: Partial<WebhookOptions> = {
  // short enough for the test of a receiver that never answers, long enough for a receiver on a loaded
  // machine (the background handshake of a new endpoint timed out at 1 s once, its endpoint never verified)
  handshakeTimeoutMs: 3_000,
  worker: { pollIntervalMs: 20, stopGraceMs: 0 },
};

/** startServer with the webhook test tunables; the worker runs unless env says RUN_WEBHOOK_WORKER=0. */
export async function startWebhookServer(
  env: Record<string, string> = {},
  opts: Pick<AppOptions, "clock" | "webhooks"> = {},
): Promise<TestServer> {
  const webhooks = { ...WEBHOOK_TEST_OPTIONS, ...opts.webhooks, worker: { ...WEBHOOK_TEST_OPTIONS.worker, ...opts.webhooks?.worker } };
  return startServer({ RUN_WEBHOOK_WORKER: "1", ...env }, { ...opts, webhooks });
}

/** Creates an endpoint for `receiver` and waits for the background handshake to verify it. */
export async function createVerifiedEndpoint(
  t: TestTenant,
  receiver: Receiver,
  body: Record<string, unknown> = {},
): Promise<{ webhookId: string; secret: string; kid: string; body: any }> {
  const res = await t.api.post("/api/v1/webhooks", { url: receiver.url, events: ["*"], ...body });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${JSON.stringify(res.body)}`);
  const id = res.body.webhookId as string;
  await eventually(async () => (await t.api.get(`/api/v1/webhooks/${id}`)).body.verified === true, 15_000);
  return { webhookId: id, secret: res.body.secret, kid: res.body.kid, body: res.body };
}

/** Appends `n` events (discussion_locked / discussion_unlocked alternately) and returns their ids in order. */
export async function makeEvents(server: TestServer, t: TestTenant, discussionId: string, n: number): Promise<string[]> {
  await t.api.put(`/api/v1/discussions/${discussionId}`, {});
  const prisma = server.app.runtime.services.prisma;
  const before = await prisma.event.count({ where: { tenantId: t.tenantId, discussionId } });
  for (let i = 0; i < n; i++) {
    const current = await t.api.get(`/api/v1/discussions/${discussionId}`);
    const action = current.body.state === "locked" ? "unlock" : "lock";
    const r = await t.api.post(`/api/v1/discussions/${discussionId}/${action}`);
    if (r.status !== 200) throw new Error(`${action}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const events = await prisma.event.findMany({ where: { tenantId: t.tenantId, discussionId }, orderBy: { seq: "asc" }, skip: before });
  return events.map((e) => e.id);
}
