// The same delivery path on the embedded database (PGlite, DATABASE_URL unset): job creation in the
// event's transaction, the SKIP LOCKED claim, batched outcomes and the breaker's row-locked update.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, WEBHOOK_TEST_OPTIONS } from "./support/receiver-app.js";
import { verifyWebhook } from "../src/index.js";
import { pgliteDataDir } from "./support/pglite-template.js";

let dataDir: string | undefined;
let server: TestServer;
let t: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  dataDir = await pgliteDataDir("eng-webhooks-");
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ALLOW_HTTP_WEBHOOKS: "1", LOG_LEVEL: "silent" });
  const app = await buildApp(config, { webhooks: WEBHOOK_TEST_OPTIONS });
  const url = await app.start();
  server = { url, app, stop: () => app.stop() };
  t = await createTestTenant(server);
  receiver = await startReceiver((req, n) =>
    req.event === "verification" ? { status: 200, body: { challenge: req.json.challenge } } : { status: n === 1 ? 503 : 200 },
  );
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("webhooks on the embedded database", () => {
  it("delivers signed events, retrying a failure", async () => {
    expect(server.app.runtime.services.db.kind).toBe("embedded");
    const ep = await createVerifiedEndpoint(t, receiver, { delivery: { backoffBaseMs: 10 } });
    const ids = await makeEvents(server, t, "embedded-1", 3);
    await receiver.waitFor(() => receiver.deliveries().length === 4);
    const ok = receiver.deliveries().slice(1);
    expect(new Set(ok.map((d) => d.json.id))).toEqual(new Set(ids));
    for (const d of ok) expect(verifyWebhook(d.headers, d.raw, [{ kid: ep.kid, secret: ep.secret }]).ok).toBe(true);
    const log = (await t.api.get(`/api/v1/webhooks/${ep.webhookId}/deliveries`)).body.items;
    expect(log.map((a: any) => a.statusCode).sort()).toEqual([200, 200, 200, 503]);
    const row = await server.app.runtime.services.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.webhookId } });
    expect(row).toMatchObject({ state: "active", consecutiveFailures: 0 });
  });
});
