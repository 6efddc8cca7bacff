// Webmention verifications run in a pool of their own (WEBMENTION_CONCURRENCY), not in the webhook
// deliveries' worker: with 150 webmentions of one site pending against sources that hold every request
// (loopback servers of this test, each of its own port, so its own slot key), the site's webhook
// delivery still arrives while every source request is still held, and the sources never see more
// requests at once than the pool's size. The worker takes jobs of the whole database: the file has a
// database of its own.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";

const POOL = 6;
const TARGET = "https://blog.example/posts/pool";

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
let receiver: Receiver;
const sources: Server[] = [];
/** source requests being held, and how many at most at once */
const held = new Set<ServerResponse>();
let seen = 0;
let mostAtOnce = 0;
/** source requests that ended before the test released them (the fetch gave up) */
let endedEarly = 0;
let releasing = false;

beforeAll(async () => {
  own = await isolatedDatabase("webmention_pool");
  server = await startWebhookServer({
    ...own.env,
    WEBMENTION_CONCURRENCY: String(POOL),
    WEBMENTION_REQUESTS_PER_ADDRESS: "1000",
    WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN: "1000",
  });
  receiver = await startReceiver();
  const hold = (_req: IncomingMessage, res: ServerResponse) => {
    seen++;
    held.add(res);
    mostAtOnce = Math.max(mostAtOnce, held.size);
    res.on("close", () => {
      if (held.delete(res) && !releasing) endedEarly++;
    });
  };
  for (let i = 0; i < 4; i++) {
    const s = createServer(hold);
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    sources.push(s);
  }
}, 120_000);

afterAll(async () => {
  releasing = true;
  for (const res of held) res.destroy();
  await server?.stop();
  for (const s of sources) s.closeAllConnections();
  await Promise.all(sources.map((s) => new Promise((r) => s.close(r))));
  await receiver?.close();
  await own?.drop();
});

const send = (form: Record<string, string>) =>
  fetch(`${server.url}/webmention`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  }).then((r) => r.status);

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the webmentions' own pool", () => {
  it("delivers a site's webhook while 150 of its webmentions wait on sources that hold every request", async () => {
    const t = await createTestTenant(server);
    const settings = await t.api.patch("/api/v1/settings", {
      federation: { enabled: true, handle: `wm_pool_${Date.now().toString(36)}`, remoteModeration: "post" },
      // the longest attempt: a verification gives up only after WEBMENTION_FETCH_TIMEOUT_MS (5 s)
      delivery: { maxAttempts: 1, attemptTimeoutMs: 60_000 },
    });
    expect(settings.status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/pool", { title: "A post", url: TARGET })).status).toBeLessThan(300);
    await createVerifiedEndpoint(t, receiver);

    const origins = sources.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    for (let i = 0; i < 150; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) =>
        send({ source: `${origins[(i + j) % origins.length]}/p${i + j}`, target: TARGET }),
      );
      expect(await Promise.all(batch)).toEqual(Array(10).fill(202));
    }
    // the verifications have started and are held
    await until(() => held.size >= Math.ceil(POOL / 2), "the sources to hold the verifications");

    expect((await t.api.post("/api/v1/discussions/pool/lock")).status).toBe(200);
    await receiver.waitFor((reqs) => reqs.some((r) => r.event === "discussion_locked"), 20_000);
    // it arrived while every verification was still waiting on its source: none answered, none gave up
    expect(endedEarly).toBe(0);
    expect(held.size).toBe(seen);
    const rows = await server.app.runtime.services.prisma.webmention.findMany({ where: { tenantId: t.tenantId } });
    expect(rows).toHaveLength(150);
    expect(rows.filter((r) => r.status !== "pending" || r.error !== null)).toEqual([]);
    // and the pool is bounded: never more source requests at once than WEBMENTION_CONCURRENCY
    expect(mostAtOnce).toBeLessThanOrEqual(POOL);
  });
});
