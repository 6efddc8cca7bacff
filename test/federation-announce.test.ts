// POST /api/v1/federation/announce (contract section 28): every discussion with a url not yet
// announced is announced to the followers in the background (202 and a job; GET
// /api/v1/federation/announce/{id} answers its state and counts), each once, as the Fedify peer of
// test/support/fedi-peer.ts, following the site, receives them.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { startFederatingServer } from "./support/federating-server.js";
import { createTestTenant, keyWith } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { startServer } from "./support/server.js";

let server: Awaited<ReturnType<typeof startFederatingServer>>;
let peer: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T) => vi.waitFor(fn, { timeout: 30_000, interval: 100 });

beforeAll(async () => {
  [server, peer] = await Promise.all([startFederatingServer(), startFediPeer({ names: ["alice"] })]);
});
afterAll(async () => {
  await peer?.close();
  await server?.stop();
});

const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);

describe("announcing every discussion", () => {
  it("announces those with a url not yet announced, once each, in the background, and counts them", async () => {
    const t = await createTestTenant(server);
    const actor = `${server.publicUrl}/ap/actors/${t.tenantId}`;
    // pages made before the site federated are not announced on their own
    for (const id of ["a1", "a2", "a3"]) {
      expect(
        (await t.api.put(`/api/v1/discussions/${id}`, { title: `Post ${id}`, url: `https://blog.example/${id}` })).status,
      ).toBeLessThan(300);
    }
    expect((await t.api.put("/api/v1/discussions/draft", { title: "No page" })).status).toBeLessThan(300);

    // off: 409 federation_disabled, a problem document
    const off = await t.api.post("/api/v1/federation/announce", {});
    expect(off.status).toBe(409);
    expect(off.body).toMatchObject({ status: 409, code: "federation_disabled" });

    expect(
      (await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "announcer", remoteModeration: "post" } })).status,
    ).toBe(200);
    await peer.follow("alice", new URL(actor));
    await waitFor(() => expect(peer.received.some((r) => r.type === "Accept" && r.json.actor === actor)).toBe(true));
    // one announced already, one at a time
    expect((await t.api.post("/api/v1/discussions/a1/federate", {})).status).toBe(202);

    // only manage_settings
    const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    expect((await moderator.post("/api/v1/federation/announce", {})).status).toBe(403);

    const started = await t.api.post("/api/v1/federation/announce", {});
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ id: expect.any(String), state: "running", alreadyAnnounced: 1, failure: null, finishedAt: null });
    let job: any;
    await waitFor(async () => {
      const got = await t.api.get(`/api/v1/federation/announce/${started.body.id}`);
      expect(got.status).toBe(200);
      job = got.body;
      expect(job.state).toBe("succeeded");
    });
    expect(job).toMatchObject({ id: started.body.id, announced: 2, alreadyAnnounced: 1, failure: null, finishedAt: expect.any(String) });

    // the peer receives each Article's Create once: the two the job announced and the one before
    const article = (id: string) => `${actor}/articles/${id}`;
    const creates = () =>
      peer.received
        .filter((r) => r.type === "Create" && (r.json.object as { type?: string } | undefined)?.type === "Article")
        .map((r) => (r.json.object as { id: string }).id);
    await waitFor(() => expect([...new Set(creates())].sort()).toEqual(["a1", "a2", "a3"].map(article)));
    // every job of the site's done (nothing more on its way), then each came once
    await waitFor(async () => {
      const [pending] = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending'`,
        [t.tenantId],
      );
      expect(pending!.n).toBe(0);
    });
    expect(creates().sort()).toEqual(["a1", "a2", "a3"].map(article));

    // asked again: nothing left to announce
    const again = await t.api.post("/api/v1/federation/announce", {});
    expect(again.status).toBe(202);
    expect(again.body.id).not.toBe(started.body.id);
    await waitFor(async () =>
      expect((await t.api.get(`/api/v1/federation/announce/${again.body.id}`)).body).toMatchObject({
        state: "succeeded",
        announced: 0,
        alreadyAnnounced: 3,
      }),
    );

    // another site's job, or an id that is none, is not found
    const other = await createTestTenant(server);
    for (const id of [started.body.id, "not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
      const res = await other.api.get(`/api/v1/federation/announce/${id}`);
      expect([id, res.status, res.body.code]).toEqual([id, 404, "not_found"]);
    }
  });
});

describe("one announcement at a time", () => {
  it("answers the pending job to whoever asks while it waits, however many ask at once", async () => {
    // no worker takes it here: it stays pending
    const own = await isolatedDatabase("fedi_announce");
    const quiet = await startServer({ ...own.env, RUN_WEBHOOK_WORKER: "0" });
    try {
      const t = await createTestTenant(quiet);
      expect((await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "waiting" } })).status).toBe(200);
      const asked = await Promise.all([1, 2, 3].map(() => t.api.post("/api/v1/federation/announce", {})));
      expect(asked.map((r) => r.status)).toEqual([202, 202, 202]);
      expect(new Set(asked.map((r) => r.body.id)).size).toBe(1);
      const got = await t.api.get(`/api/v1/federation/announce/${asked[0]!.body.id}`);
      expect(got.body).toMatchObject({ state: "running", announced: 0, alreadyAnnounced: 0, finishedAt: null });
      const [jobs] = await quiet.app.runtime.services.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_announce'`,
        [t.tenantId],
      );
      expect(jobs!.n).toBe(1);
    } finally {
      await quiet.stop();
      await own.drop();
    }
  });
});
