// The fediverse under a PUBLIC_URL with a path (docs/fediverse.md "Turning it on"): the service behind
// a proxy that serves it under /comments/ and forwards without the prefix (and the host's
// /.well-known/ as it is). Every id is under the prefix — WebFinger's link, the actor and its inbox,
// shared inbox, outbox, followers and key, NodeInfo's link, an Article — and the peer (Fedify, shaped
// like Mastodon) follows the site through the proxy: the signed Follow to the prefixed inbox verifies,
// is stored and answered with Accept.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, freePort, getAp, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";

const PREFIX = "/comments";
let server: TestServer & { publicUrl: string };
let proxy: Server;
/** the proxy's origin: the public host */
let publicOrigin: string;
let peer: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);

/** A reverse proxy as an operator would set one: /comments/* to the service without the prefix, /.well-known/* as it is. */
function startProxy(port: number, target: () => URL): Promise<Server> {
  const s = createServer((req, res) => {
    const path = req.url ?? "/";
    const forwarded = path.startsWith(`${PREFIX}/`) ? path.slice(PREFIX.length) : path.startsWith("/.well-known/") ? path : null;
    if (forwarded === null) return void res.writeHead(404).end();
    const upstream = request(
      new URL(forwarded, target()),
      { method: req.method, headers: { ...req.headers, host: `127.0.0.1:${port}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => s.listen(port, "127.0.0.1", () => resolve(s)));
}

beforeAll(async () => {
  const port = await freePort();
  publicOrigin = `http://127.0.0.1:${port}`;
  server = await startFederatingServer({ env: { PUBLIC_URL: `${publicOrigin}${PREFIX}/` } });
  proxy = await startProxy(port, () => new URL(server.url));
  expect((proxy.address() as AddressInfo).port).toBe(port);
  peer = await startFediPeer();
});

afterAll(async () => {
  await peer?.close();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await server?.stop();
});

describe("PUBLIC_URL under a path", () => {
  it("builds every id under the prefix, and a peer follows through the proxy", async () => {
    const t = await federatingTenant(server, "prefixed");
    const actor = `${publicOrigin}${PREFIX}/ap/actors/${t.tenantId}`;
    const host = new URL(publicOrigin).host;

    // WebFinger at the host's root, its link under the prefix
    const jrd = await getAp(
      `${publicOrigin}/.well-known/webfinger?resource=${encodeURIComponent(`acct:prefixed@${host}`)}`,
      "application/jrd+json",
    );
    expect(jrd.status).toBe(200);
    expect(jrd.json.links).toContainEqual(expect.objectContaining({ rel: "self", type: "application/activity+json", href: actor }));

    const a = await getAp(actor);
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({
      id: actor,
      inbox: `${actor}/inbox`,
      outbox: `${actor}/outbox`,
      followers: `${actor}/followers`,
      endpoints: { sharedInbox: `${publicOrigin}${PREFIX}/ap/inbox` },
      publicKey: { id: `${actor}#main-key`, owner: actor },
    });
    // not at the host's root (the proxy sends nothing there)
    expect((await getAp(`${publicOrigin}/ap/actors/${t.tenantId}`)).status).toBe(404);

    const links = await getAp(`${publicOrigin}/.well-known/nodeinfo`, "application/json");
    expect(links.json.links[0].href).toBe(`${publicOrigin}${PREFIX}/nodeinfo/2.1`);
    expect((await getAp(links.json.links[0].href, "application/json")).json.protocols).toEqual(["activitypub"]);

    // an Article's id, as federate answers it and as it is served
    await t.api.put(`/api/v1/discussions/post`, { title: "A post", url: "https://prefixed.example/post" });
    const federated = await t.api.post(`/api/v1/discussions/post/federate`);
    expect(federated.body.articleId).toBe(`${actor}/articles/post`);
    expect((await getAp(federated.body.articleId)).json.id).toBe(`${actor}/articles/post`);

    // the peer finds the actor through the proxy and follows: its Follow, signed over the prefixed
    // inbox's path, verifies; the Accept reaches it
    const follow = await peer.follow("alice", new URL(actor));
    await waitFor(async () =>
      expect(await sql(`SELECT actor_id, inbox FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([
        { actor_id: peer.actorUri("alice").href, inbox: `${peer.url}/inbox` },
      ]),
    );
    await waitFor(() => {
      const accept = peer.received.find((r) => r.type === "Accept" && JSON.stringify(r.json).includes(follow.id!.href));
      expect(accept?.json.actor).toBe(actor);
    });
  });
});
