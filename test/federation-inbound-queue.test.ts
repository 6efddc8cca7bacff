// Inbound activities are queued (contract section 28; docs/fediverse.md "Inbound activities"): the
// inbox verifies the signature, stores the activity in the durable queue and answers 202; the worker
// applies it. A burst of 500 signed activities is answered 202 each and every one becomes its
// comment; an activity replayed (the same id, to the same inbox) is stored and applied once; one to
// the shared inbox is stored for the site it concerns (none: not stored); an
// activity answered 202 by an instance that then stops before any worker ran is applied by the next
// instance of the deployment (its database and PUBLIC_URL).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, inboundApplied, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";

type FederatingServer = Awaited<ReturnType<typeof startFederatingServer>>;
let server: FederatingServer;
let peer: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 200 });
const AS = "https://www.w3.org/ns/activitystreams";
const BURST = 500;

beforeAll(async () => {
  server = await startFederatingServer();
  peer = await startFediPeer({ names: ["alice"] });
});

afterAll(async () => {
  await peer?.close();
  await server?.stop();
});

const sqlOf = (s: TestServer) => s.app.runtime.services.sql;

async function site(s: TestServer, handle: string) {
  const t = await federatingTenant(s, handle);
  await t.api.put(`/api/v1/discussions/post`, { title: "A post", url: `https://${handle}.example/post` });
  return { ...t, inbox: new URL(`${t.actor}/inbox`), article: `${t.actor}/articles/post` };
}

const createNote = (t: { actor: string; article: string }, id: string, text: string) => {
  const alice = peer.actorUri("alice").href;
  const status = `${peer.url}/users/alice/statuses/${id}`;
  return {
    "@context": AS,
    id: `${status}/activity`,
    type: "Create",
    actor: alice,
    to: [`${AS}#Public`],
    cc: [t.actor],
    object: { id: status, type: "Note", inReplyTo: t.article, attributedTo: alice, to: [`${AS}#Public`], content: `<p>${text}</p>` },
  };
};

const count = async (s: TestServer, text: string, values: unknown[]) =>
  (await sqlOf(s).query<{ n: number }>(`SELECT count(*)::int AS n FROM (${text}) q`, values))[0]!.n;

describe("the inbox's queue", () => {
  it(`answers a burst of ${BURST} signed activities 202 each, and applies every one`, async () => {
    const t = await site(server, "burst_site");
    // the actor's key is fetched once, before the burst
    expect((await peer.signedPost("alice", t.inbox, createNote(t, "warm", "warm"))).status).toBe(202);
    // signed first, so that the answers' times are the server's (the client signs nothing meanwhile)
    const requests = await Promise.all(
      Array.from({ length: BURST }, (_, i) => peer.signed("alice", t.inbox, createNote(t, `burst-${i}`, `burst ${i}`))),
    );
    const took: number[] = [];
    const answers = await Promise.all(
      requests.map(async ({ headers, body }) => {
        const t0 = performance.now();
        const res = await fetch(t.inbox, { method: "POST", headers, body });
        await res.arrayBuffer();
        took.push(performance.now() - t0);
        return res.status;
      }),
    );
    expect(answers.filter((s) => s === 202)).toHaveLength(BURST);
    took.sort((a, b) => a - b);
    console.log(
      `inbox burst of ${BURST}: p50 ${took[Math.floor(BURST * 0.5)]!.toFixed(0)} ms, p99 ${took[Math.floor(BURST * 0.99)]!.toFixed(0)} ms`,
    );
    await inboundApplied(server, 180_000);
    expect(await count(server, `SELECT 1 FROM comments WHERE tenant_id = $1 AND body LIKE 'burst %'`, [t.tenantId])).toBe(BURST);
    expect(
      await count(
        server,
        `SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_inbound' AND status = 'succeeded'`,
        [t.tenantId],
      ),
    ).toBe(BURST + 1);
  }, 240_000);

  it("stores and applies a replayed activity once", async () => {
    const t = await site(server, "replay_site");
    const create = createNote(t, "replayed", "said once");
    const answers = await Promise.all(Array.from({ length: 5 }, () => peer.signedPost("alice", t.inbox, create)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    await inboundApplied(server);
    expect((await peer.signedPost("alice", t.inbox, create)).status).toBe(202);
    await inboundApplied(server);
    expect(await count(server, `SELECT 1 FROM comments WHERE tenant_id = $1`, [t.tenantId])).toBe(1);
    expect(
      await count(server, `SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_inbound'`, [t.tenantId]),
    ).toBe(1);
  });

  it("stores what comes to the shared inbox for the site it concerns: one whose actor or remote object it names, or one its actor follows", async () => {
    const t = await site(server, "shared_site");
    const shared = new URL(`${server.publicUrl}/ap/inbox`);
    const alice = peer.actorUri("alice").href;
    const jobsOf = () =>
      sqlOf(server).query<{ type: string }>(
        `SELECT message->'activity'->>'type' AS type FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_inbound' ORDER BY created_at`,
        [t.tenantId],
      );
    const like = (n: number, object: string) => ({ "@context": AS, id: `${alice}#likes/${n}`, type: "Like", actor: alice, object });
    // naming nothing of the site, from an actor that follows none: not stored
    expect((await peer.signedPost("alice", shared, like(1, "https://elsewhere.example/notes/1"))).status).toBe(202);
    // its remote Note
    const note = await peer.reply("alice", new URL(t.actor), new URL(t.article), "<p>held here</p>");
    await inboundApplied(server);
    expect((await peer.signedPost("alice", shared, like(2, note.id!.href))).status).toBe(202);
    // once alice follows the site, anything she sends there concerns it
    await peer.follow("alice", new URL(t.actor));
    await inboundApplied(server);
    expect((await peer.signedPost("alice", shared, like(3, "https://elsewhere.example/notes/3"))).status).toBe(202);
    expect((await jobsOf()).map((j) => j.type)).toEqual(["Create", "Like", "Follow", "Like"]);
  });

  it("loses nothing answered 202 by an instance that stops before applying it", async () => {
    // an instance without a worker: it answers, stores, and stops
    const first = await startFederatingServer({ env: { RUN_WEBHOOK_WORKER: "0" } });
    let next: FederatingServer | undefined;
    try {
      const t = await site(first, "survivor_site");
      expect((await peer.signedPost("alice", t.inbox, createNote(t, "survivor", "still here"))).status).toBe(202);
      expect(await count(first, `SELECT 1 FROM comments WHERE tenant_id = $1`, [t.tenantId])).toBe(0);
      await first.app.stop();
      // the deployment again: the same database and PUBLIC_URL, a worker running
      next = await startFederatingServer({ database: first.database, publicUrl: first.publicUrl });
      await waitFor(async () =>
        expect(await sqlOf(next!).query(`SELECT body FROM comments WHERE tenant_id = $1`, [t.tenantId])).toEqual([{ body: "still here" }]),
      );
    } finally {
      await next?.app.stop();
      if (!next) await first.app.stop().catch(() => undefined);
      await first.drop();
    }
  });
});
