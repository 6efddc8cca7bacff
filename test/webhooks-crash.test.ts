// At-least-once across a crash: a worker in a child process is killed with SIGKILL while its
// deliveries are in flight; another worker takes the jobs over once the leases expire. Every event
// arrives, with the same idempotency key and a new delivery id.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { eventually, startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, startWebhookServer } from "./support/receiver-app.js";
import { isolatedDatabase } from "./support/database.js";

// The whole test runs ~73 years ahead (server and child alike), so the workers of other test
// files, on the real clock, never find these jobs due and cannot take them from the child.
const OFFSET_MS = Date.parse("2099-06-01T00:00:00.000Z") - Date.now();
const clock = { now: () => new Date(Date.now() + OFFSET_MS) };
const LEASE_MS = 2_000;

let server: TestServer;
let t: TestTenant;
let databaseUrl: string;
let receiver: Receiver;
let child: ChildProcess | undefined;

function startChildWorker(): Promise<{ proc: ChildProcess; workerId: string }> {
  const script = fileURLToPath(new URL("./support/receiver-crash-worker.ts", import.meta.url));
  const proc = spawn(process.execPath, ["--import", "tsx", script], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
      ALLOW_HTTP_WEBHOOKS: "1",
      LOG_LEVEL: "silent",
      REDIS_URL: "",
      CLOCK_OFFSET_MS: String(OFFSET_MS),
      WORKER_LEASE_MS: String(LEASE_MS),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /ready (\S+)/.exec(out);
      if (m) resolve({ proc, workerId: m[1]! });
    });
    proc.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    proc.once("exit", (code) => reject(new Error(`child worker exited (${code}): ${err}`)));
    setTimeout(() => reject(new Error(`child worker not ready: ${err}`)), 20_000).unref();
  });
}

let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
beforeAll(async () => {
  isolated = await isolatedDatabase("crash");
  databaseUrl = isolated.url;
  server = await startWebhookServer({ RUN_WEBHOOK_WORKER: "0", DATABASE_URL: databaseUrl }, { clock });
  t = await createTestTenant(server);
  const first = new Set<string>();
  receiver = await startReceiver((req) => {
    if (req.event === "verification") return { status: 200, body: { challenge: req.json.challenge } };
    const key = req.headers["x-service-idempotency-key"] as string;
    if (first.has(key)) return { status: 200 };
    first.add(key);
    return { hang: true }; // the first attempt of every event never gets an answer
  });
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await server?.stop();
  await receiver?.close();
  await isolated?.drop();
});

describe("worker crash", () => {
  it("kill -9 mid-delivery loses nothing: the lease expires and another worker delivers again", async () => {
    const ep = await createVerifiedEndpoint(t, receiver);
    const started = await startChildWorker();
    child = started.proc;
    const n = 4;
    const ids = await makeEvents(server, t, "crash-1", n);
    await receiver.waitFor(() => receiver.deliveries().length === n, 10_000);
    const prisma = server.app.runtime.services.prisma;
    const held = await prisma.webhookDelivery.findMany({ where: { endpointId: ep.webhookId } });
    expect(held.map((j) => [j.status, j.lockedBy])).toEqual(ids.map(() => ["pending", started.workerId]));

    const exited = new Promise((ok) => child!.once("exit", ok));
    child.kill("SIGKILL");
    await exited;
    child = undefined;

    server.app.runtime.services.webhooks.worker.start();
    await eventually(async () => {
      const done = await prisma.webhookDelivery.count({ where: { endpointId: ep.webhookId, status: "succeeded" } });
      return done === n;
    }, 15_000);

    const byKey = new Map<string, typeof receiver.requests>();
    for (const d of receiver.deliveries()) {
      const key = d.headers["x-service-idempotency-key"] as string;
      byKey.set(key, [...(byKey.get(key) ?? []), d]);
    }
    expect([...byKey.keys()].sort()).toEqual(ids.map((id) => `discussion_${ids.indexOf(id) % 2 ? "unlocked" : "locked"}:${id}`).sort());
    for (const [key, [crashed, retried, ...rest]] of byKey) {
      expect(rest, key).toEqual([]);
      expect(retried, key).toBeDefined();
      expect(retried!.raw).toBe(crashed!.raw);
      expect(retried!.headers["x-service-delivery-id"]).not.toBe(crashed!.headers["x-service-delivery-id"]);
      // the new worker waited for the dead one's lease instead of sending alongside it
      expect(retried!.at - crashed!.at, key).toBeGreaterThanOrEqual(LEASE_MS - 500);
    }
    const log = await prisma.webhookAttempt.findMany({ where: { endpointId: ep.webhookId } });
    expect(log.map((a) => [a.attempt, a.statusCode])).toEqual(ids.map(() => [1, 200])); // the killed attempt left no outcome
  });
});
