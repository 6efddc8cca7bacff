// Exactly once across instances (contract section 28), against a real fediverse server (the Fedify
// peer of test/support/fedi-peer.ts, Mastodon-shaped): three instances of one deployment (one
// database, one PUBLIC_URL, each running its worker) and two followers on the peer, who share its
// inbox. A discussion with a url, announced, and comments written through all three instances reach
// the peer once each: one POST an activity, to the shared inbox (once per server, not once per
// follower), each activity id once.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { client } from "./support/client.js";
import { createTestTenant } from "./support/fixtures.js";
import { freePort } from "./support/federating-server.js";
import { isolatedDatabase } from "./support/database.js";
import { startServer, type TestServer } from "./support/server.js";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";

const COMMENTS = 12;

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const servers: TestServer[] = [];
let peer: FediPeer;
const sql = <R>(text: string, values: unknown[] = []) => servers[0]!.app.runtime.services.sql.query<R>(text, values);

beforeAll(async () => {
  own = await isolatedDatabase("fedi3");
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const started = startFediPeer({ names: ["alice", "bob"] });
  for (let i = 0; i < 3; i++) {
    servers.push(
      await startServer(
        { ...own.env, PORT: i === 0 ? String(port) : "0", PUBLIC_URL: publicUrl, RUN_WEBHOOK_WORKER: "1" },
        { federation: { pollMs: 100 }, webhooks: { worker: { pollIntervalMs: 50, stopGraceMs: 0 } } },
      ),
    );
  }
  peer = await started;
}, 90_000);

afterAll(async () => {
  for (const s of servers) await s.stop();
  await peer?.close();
  await own?.drop();
});

it(
  "delivers each activity once to a server whose two followers share its inbox, whichever instance wrote it",
  { timeout: 120_000 },
  async () => {
    const t = await createTestTenant(servers[0]!);
    expect((await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "trio" } })).status).toBe(200);
    const actor = new URL(`${servers[0]!.app.runtime.federation.origin()!.href.replace(/\/$/, "")}/ap/actors/${t.tenantId}`);
    for (const who of ["alice", "bob"]) await peer.follow(who, actor);
    await vi.waitFor(
      async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(2),
      {
        timeout: 20_000,
        interval: 100,
      },
    );
    // both follow through the peer's shared inbox
    expect(
      (await sql<{ inbox: string }>(`SELECT DISTINCT inbox FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).map(
        (r) => r.inbox,
      ),
    ).toEqual([`${peer.url}/inbox`]);
    const knocksBefore = peer.knocks.length;

    // the discussion made through the second instance, its comments through all three
    const api = (i: number) => client(servers[i]!.url, { key: t.apiKey });
    expect((await api(1).put("/api/v1/discussions/trio", { title: "Trio", url: "https://trio.example/post" })).status).toBe(201);
    await Promise.all(
      Array.from({ length: COMMENTS }, async (_, n) => {
        const r = client(servers[n % 3]!.url, { key: t.apiKey, identity: await t.identity(`r${n}`) });
        const p = await r.post(
          "/api/v1/discussions/trio/comments",
          { body: `Comment ${n}` },
          { headers: { "Idempotency-Key": randomUUID() } },
        );
        expect(p.status, JSON.stringify(p.body)).toBe(201);
      }),
    );

    // every job of the tenant done, none attempted twice
    await vi.waitFor(
      async () =>
        expect(
          await sql(
            `SELECT kind::text, status::text, attempts FROM webhook_deliveries
            WHERE tenant_id = $1 AND kind IN ('activitypub', 'activitypub_fanout') AND (status <> 'succeeded' OR attempts <> 1)`,
            [t.tenantId],
          ),
        ).toEqual([]),
      { timeout: 60_000, interval: 200 },
    );
    await vi.waitFor(() => expect(peer.received.filter((r) => r.type === "Create")).toHaveLength(1 + COMMENTS), {
      timeout: 30_000,
      interval: 100,
    });
    // what the site sends its followers (the Accepts of their follows go to each one's own inbox)
    const knocks = peer.knocks.slice(knocksBefore).filter((k) => (JSON.parse(k.body) as { type: string }).type === "Create");
    expect(new Set(knocks.map((k) => k.path))).toEqual(new Set(["/inbox"]));
    const ids = knocks.map((k) => (JSON.parse(k.body) as { id: string }).id);
    expect(ids).toHaveLength(1 + COMMENTS);
    expect(new Set(ids).size).toBe(ids.length);
    const objects = peer.received.filter((r) => r.type === "Create").map((r) => (r.json.object as { type: string }).type);
    expect(objects.filter((o) => o === "Article")).toHaveLength(1);
    expect(objects.filter((o) => o === "Note")).toHaveLength(COMMENTS);
  },
);
