// When there is no federation to serve (contract section 28): a site whose federation.enabled is
// false has no inbox — a POST to it answers 404 before its activity is read, its signature checked or
// its key fetched — and while no site federates neither has the shared inbox; and an instance in
// production without PUBLIC_URL serves no federation route and announces nothing, as its ids would
// have to come from somewhere else than PUBLIC_URL.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, getAp, startFederatingServer } from "./support/federating-server.js";
import { createTestTenant } from "./support/fixtures.js";
import { isolatedDatabase } from "./support/database.js";
import { startServer, type TestServer } from "./support/server.js";

const AS = "https://www.w3.org/ns/activitystreams";
let peer: FediPeer;

beforeAll(async () => {
  peer = await startFediPeer({ names: ["alice"] });
});
afterAll(() => peer?.close());

const like = (object: string) => ({
  "@context": AS,
  id: `${peer.url}/users/alice/likes/${Date.now()}-${Math.random()}`,
  type: "Like",
  actor: peer.actorUri("alice").href,
  object,
});

/** What the instance cached of the peer (its actor, its key): nothing, if no key was fetched. */
const cachedOfPeer = async (s: TestServer) =>
  (
    await s.app.runtime.services.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM federation_kv WHERE strpos(key, $1) > 0`, [
      peer.url,
    ])
  )[0]!.n;

describe("federation off", () => {
  let server: Awaited<ReturnType<typeof startFederatingServer>>;
  beforeAll(async () => {
    server = await startFederatingServer();
  });
  afterAll(() => server?.stop());

  it("the shared inbox answers 404 while no site federates, signed or not", async () => {
    const inbox = new URL(`${server.publicUrl}/ap/inbox`);
    expect((await fetch(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body: "{}" })).status).toBe(404);
    expect((await peer.signedPost("alice", inbox, like(`${server.publicUrl}/x`))).status).toBe(404);
    expect(await cachedOfPeer(server)).toBe(0);
  });

  it("a site that does not federate has no inbox: 404 before the activity is read or any key fetched", async () => {
    const t = await createTestTenant(server);
    const inbox = new URL(`${server.publicUrl}/ap/actors/${t.tenantId}/inbox`);
    // not even a body that is not JSON, or a POST without a signature, gets further than that
    for (const body of ["not json", "{}"]) {
      const res = await fetch(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
      expect(res.status).toBe(404);
      expect((await res.json()).code).toBe("not_found");
    }
    const fetchedBefore = peer.fetched.length;
    expect((await peer.signedPost("alice", inbox, like(`${server.publicUrl}/x`))).status).toBe(404);
    // nor does a POST to any other of its paths, signed or not
    for (const path of ["", "/outbox", "/followers"]) {
      const res = await fetch(`${server.publicUrl}/ap/actors/${t.tenantId}${path}`, {
        method: "POST",
        headers: { "content-type": "application/activity+json" },
        body: "{}",
      });
      expect([path, res.status]).toEqual([path, 404]);
      const signed = await peer.signedPost("alice", new URL(`${server.publicUrl}/ap/actors/${t.tenantId}${path}`), like("x"));
      expect([path, signed.status]).toEqual([path, 404]);
    }
    expect(await cachedOfPeer(server)).toBe(0);
    // the peer's actor (where its key is) was never fetched
    expect(peer.fetched.slice(fetchedBefore)).toEqual([]);
    // nor is anything of it read: its actor, collections and Articles answer 404 in any representation
    // (a problem document), and a site that does not exist the same
    for (const id of [t.tenantId, "no_such_site"]) {
      for (const path of ["", "/outbox", "/followers", "/outbox?cursor=0", "/articles/x"]) {
        for (const accept of ["application/activity+json", "text/html", "*/*", null]) {
          const res = await fetch(`${server.publicUrl}/ap/actors/${id}${path}`, { headers: accept ? { accept } : {} });
          expect([id, path, accept, res.status, res.headers.get("content-type")?.split(";")[0]]).toEqual([
            id,
            path,
            accept,
            404,
            "application/problem+json",
          ]);
        }
      }
    }

    // turned on, the same signed POST is heard (its key fetched); turned off again, 404 once more
    const on = await federatingTenant(server, "off_on");
    const onInbox = new URL(`${on.actor}/inbox`);
    expect((await peer.signedPost("alice", onInbox, like(`${server.publicUrl}/x`))).status).toBe(202);
    expect(await cachedOfPeer(server)).toBeGreaterThan(0);
    const followers = `${on.actor}/followers`;
    const asJson = { headers: { accept: "application/activity+json" } };
    expect((await fetch(followers, asJson)).status).toBe(200);
    await on.api.patch("/api/v1/settings", { federation: { enabled: false } });
    await vi.waitFor(async () => {
      const res = await fetch(onInbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body: "{}" });
      expect(res.status).toBe(404);
    });
    // its followers' count is no longer told either
    expect((await fetch(followers, asJson)).status).toBe(404);
  });
});

describe("production without PUBLIC_URL", () => {
  let server: TestServer;
  let own: Awaited<ReturnType<typeof isolatedDatabase>>;
  beforeAll(async () => {
    own = await isolatedDatabase("fedi_prod");
    server = await startServer({ ...own.env, NODE_ENV: "production", RUN_WEBHOOK_WORKER: "1" });
  });
  afterAll(async () => {
    await server?.stop();
    await own?.drop();
  });

  it("serves no federation route and announces nothing, whatever the request's Host", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "prod_site" } })).status).toBe(200);
    const host = new URL(server.url).host;
    for (const path of [
      `/.well-known/webfinger?resource=acct:prod_site@${host}`,
      "/.well-known/nodeinfo",
      "/nodeinfo/2.1",
      `/ap/actors/${t.tenantId}`,
      `/ap/actors/${t.tenantId}/outbox`,
      `/ap/actors/${t.tenantId}/followers`,
      `/ap/actors/${t.tenantId}/articles/prod-post`,
      `/ap/actors/${t.tenantId}/notes/any`,
    ]) {
      const res = await getAp(`${server.url}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
    const forged = await fetch(`${server.url}/ap/actors/${t.tenantId}`, {
      headers: { accept: "application/activity+json", host: "evil.example" },
    });
    expect(forged.status).toBe(404);
    const fetchedBefore = peer.fetched.length;
    for (const inbox of [`${server.url}/ap/actors/${t.tenantId}/inbox`, `${server.url}/ap/inbox`]) {
      expect((await peer.signedPost("alice", new URL(inbox), like(`${server.url}/x`))).status).toBe(404);
      expect((await fetch(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body: "{}" })).status).toBe(
        404,
      );
    }
    expect(peer.fetched.slice(fetchedBefore)).toEqual([]);

    // nor is anything announced when asked: 409 federation_unavailable, a problem document
    const announce = await t.api.post("/api/v1/federation/announce", {});
    expect(announce.status).toBe(409);
    expect(announce.body).toMatchObject({ status: 409, code: "federation_unavailable" });
    expect(announce.headers.get("content-type")).toMatch(/application\/problem\+json/);

    // a new discussion with its page is not announced: its job, if one is queued, ends without an activity
    expect((await t.api.put("/api/v1/discussions/prod-post", { title: "A post", url: "https://prod.example/post" })).status).toBeLessThan(
      300,
    );
    const federate = await t.api.post("/api/v1/discussions/prod-post/federate", {});
    expect([federate.status, federate.body.code]).toEqual([409, "federation_unavailable"]);
    const sql = server.app.runtime.services.sql;
    await vi.waitFor(
      async () => {
        const [pending] = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND kind::text LIKE 'activitypub%' AND status = 'pending'`,
          [t.tenantId],
        );
        expect(pending!.n).toBe(0);
      },
      { timeout: 15_000, interval: 100 },
    );
    const [sent] = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`,
      [t.tenantId],
    );
    expect(sent!.n).toBe(0);
  });
});
