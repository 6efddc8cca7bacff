// The fediverse's inbox refuses what it must never store (contract section 24): an unsigned
// activity, a forged one (signed by another actor's key, or its body changed after signing), one
// from a blocked domain, one past its domain's rate, a body too large or nested too deep; and it
// accepts the JSON Mastodon actually sends (its Create(Note) with the ostatus/toot context, mention
// h-card and replies collection; its Like; its Delete with a Tombstone; its Follow and Undo), each
// signed as Mastodon signs (draft-cavage, rsa-sha256, with a Digest) by a real peer's key.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";

let server: TestServer & { publicUrl: string };
let peer: FediPeer;
let localhostPeer: FediPeer;
let busyPeer: FediPeer;
let floodedPeer: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);
const AS = "https://www.w3.org/ns/activitystreams";

beforeAll(async () => {
  // started together: each peer's keys are made while the others' are
  [server, peer, localhostPeer, busyPeer, floodedPeer] = await Promise.all([
    startFederatingServer({ inboxPerDomainPerMinute: 40, inboxForgedPerAddressPerMinute: 30 }),
    startFediPeer({ names: ["alice", "bob"] }),
    startFediPeer({ names: ["mallory"], host: "localhost" }),
    startFediPeer({ names: ["carol"], host: "127.0.0.2" }),
    startFediPeer({ names: ["dave", "erin"], host: "127.0.0.3" }),
  ]);
});

afterAll(async () => {
  await peer?.close();
  await localhostPeer?.close();
  await busyPeer?.close();
  await floodedPeer?.close();
  await server?.stop();
});

async function site(handle: string, extra: Record<string, unknown> = {}) {
  const t = await federatingTenant(server, handle);
  if (Object.keys(extra).length) expect((await t.api.patch("/api/v1/settings", { federation: extra })).status).toBe(200);
  await t.api.put(`/api/v1/discussions/post`, { title: "A post", url: `https://${handle}.example/post` });
  return { ...t, inbox: new URL(`${t.actor}/inbox`), article: `${t.actor}/articles/post` };
}

/** An unsigned POST from the local address `from`: its status. */
async function postUnsigned(from: string, inbox: URL, json: unknown): Promise<number> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(inbox, { method: "POST", localAddress: from, headers: { "content-type": "application/activity+json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify(json));
  });
}

const commentsOf = (tenantId: string) =>
  sql<{ body: string; author_id: string }>(`SELECT body, author_id FROM comments WHERE tenant_id = $1`, [tenantId]);

describe("refusals", () => {
  it("refuses an unsigned activity (401) and stores nothing", async () => {
    const t = await site("unsigned_site");
    const follow = { "@context": AS, id: `${peer.url}/f/1`, type: "Follow", actor: peer.actorUri("alice").href, object: t.actor };
    const res = await fetch(t.inbox, {
      method: "POST",
      headers: { "content-type": "application/activity+json" },
      body: JSON.stringify(follow),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("signature_invalid");
    expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([]);
  });

  it("refuses an activity signed by another actor's key, or changed after signing (401), and stores nothing", async () => {
    const t = await site("forged_site");
    const note = (id: string, who: string) => ({
      "@context": AS,
      id: `${peer.url}/users/${who}/statuses/${id}/activity`,
      type: "Create",
      actor: peer.actorUri(who).href,
      object: {
        id: `${peer.url}/users/${who}/statuses/${id}`,
        type: "Note",
        attributedTo: peer.actorUri(who).href,
        inReplyTo: t.article,
        content: "<p>forged</p>",
        to: [`${AS}#Public`],
      },
    });
    // bob's activity, signed with alice's key
    const forged = await peer.signedPost("alice", t.inbox, note("1", "bob"));
    expect(forged.status).toBe(401);
    // alice's own activity, its body changed after she signed it (the Digest no longer matches)
    const tampered = await peer.signedPost("alice", t.inbox, note("2", "alice"), { tamper: (b) => b.replace("forged", "changed") });
    expect(tampered.status).toBe(401);
    // the same, untouched, is taken: the refusals above were about the signature alone
    expect((await peer.signedPost("alice", t.inbox, note("3", "alice"))).status).toBe(202);
    await waitFor(async () =>
      expect(await commentsOf(t.tenantId)).toEqual([{ body: "forged", author_id: `ap:${peer.actorUri("alice").href}` }]),
    );
  });

  it("refuses a blocked domain's activities (403) and stores nothing", async () => {
    const t = await site("blocking_site", { blockedDomains: ["localhost"] });
    const res = await localhostPeer.signedPost("mallory", t.inbox, {
      "@context": AS,
      id: `${localhostPeer.url}/follows/1`,
      type: "Follow",
      actor: localhostPeer.actorUri("mallory").href,
      object: t.actor,
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe("domain_blocked");
    await expect(localhostPeer.reply("mallory", new URL(t.actor), new URL(t.article), "<p>spam</p>")).rejects.toThrow();
    expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([]);
    expect(await commentsOf(t.tenantId)).toEqual([]);
  });

  it("bounds every inbound body: too large is 413, nested too deep or not JSON is 400", async () => {
    const t = await site("bounded_site");
    const big = await peer.signedPost("alice", t.inbox, {
      "@context": AS,
      type: "Create",
      actor: peer.actorUri("alice").href,
      pad: "x".repeat(300_000),
    });
    expect(big.status).toBe(413);
    let deep: unknown = "end";
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await peer.signedPost("alice", t.inbox, {
      "@context": AS,
      type: "Create",
      actor: peer.actorUri("alice").href,
      object: deep,
    });
    expect(nested.status).toBe(400);
    const notJson = await fetch(t.inbox, {
      method: "POST",
      headers: { "content-type": "application/activity+json", signature: 'keyId="x"' },
      body: "{nope",
    });
    expect(notJson.status).toBe(400);
  });

  it("limits each remote domain's activities per minute (429)", async () => {
    const t = await site("limited_site");
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) {
      const like = {
        "@context": AS,
        id: `${busyPeer.url}/likes/rate-${i}`,
        type: "Like",
        actor: busyPeer.actorUri("carol").href,
        object: t.article,
      };
      statuses.push((await busyPeer.signedPost("carol", t.inbox, like)).status);
    }
    // the budget (40 a minute here) is spent, then refused; another domain is not affected
    expect(statuses.slice(0, 40).every((s) => s === 202)).toBe(true);
    expect(statuses.slice(40)).toEqual([429, 429, 429, 429, 429]);
    const other = { "@context": AS, id: `${peer.url}/likes/other`, type: "Like", actor: peer.actorUri("alice").href, object: t.article };
    expect((await peer.signedPost("alice", t.inbox, other)).status).toBe(202);
  });

  it("counts only verified activities in a domain's rate: forged ones spend their sender's address's stricter budget", async () => {
    const t = await site("flooded_site");
    const dave = floodedPeer.actorUri("dave").href;
    const like = (id: string, actor = dave) => ({
      "@context": AS,
      id: `${floodedPeer.url}/likes/${id}`,
      type: "Like",
      actor,
      object: t.article,
    });
    // a forger elsewhere (another client address) sends activities in the domain's name: dave's changed
    // after signing, dave's signed by erin's key, and unsigned (with the domain's 40 genuine ones below,
    // more than 40 in the minute: counted in one budget, the genuine ones would run out early)
    const tamper = (b: string) => b.replace('"type":"Like"', '"type": "Like"');
    const forged: number[] = [];
    for (let i = 0; i < 10; i++) {
      forged.push((await floodedPeer.signedPost("dave", t.inbox, like(`t${i}`), { from: "127.0.0.9", tamper })).status);
      forged.push((await floodedPeer.signedPost("erin", t.inbox, like(`e${i}`), { from: "127.0.0.9" })).status);
      if (i < 9) {
        const res = await postUnsigned("127.0.0.9", t.inbox, like(`u${i}`));
        forged.push(res);
      }
    }
    expect(forged).toEqual(Array(29).fill(401));
    // its 30th spends the forger's address's own, stricter budget (30 here): from then on it is refused before
    // anything is verified, even what it signs well
    const past = await floodedPeer.signedPost("dave", t.inbox, like("t-last"), { from: "127.0.0.9", tamper });
    expect(past.status).toBe(401);
    const refused = await floodedPeer.signedPost("dave", t.inbox, like("g-last"), { from: "127.0.0.9" });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    // the domain's own server (this address) still has its whole budget: 40 taken, the 41st refused
    const genuine: number[] = [];
    for (let i = 0; i < 41; i++) genuine.push((await floodedPeer.signedPost("dave", t.inbox, like(`g${i}`))).status);
    expect(genuine.slice(0, 40)).toEqual(Array(40).fill(202));
    expect(genuine[40]).toBe(429);
  });
});

describe("the JSON Mastodon sends", () => {
  it("takes Mastodon's Create(Note), Like, Delete(Tombstone), Follow and Undo(Follow)", async () => {
    const t = await site("mastodon_site");
    const alice = peer.actorUri("alice").href;
    const status = `${peer.url}/users/alice/statuses/109876543210`;
    // the shape of Mastodon's ActivityPub::ActivitySerializer / NoteSerializer output
    const create = {
      "@context": [
        AS,
        {
          ostatus: "http://ostatus.org#",
          atomUri: "ostatus:atomUri",
          inReplyToAtomUri: "ostatus:inReplyToAtomUri",
          conversation: "ostatus:conversation",
          sensitive: "as:sensitive",
          toot: "http://joinmastodon.org/ns#",
          votersCount: "toot:votersCount",
        },
      ],
      id: `${status}/activity`,
      type: "Create",
      actor: alice,
      published: "2026-11-26T07:00:00Z",
      to: [`${AS}#Public`],
      cc: [`${alice}/followers`, t.actor],
      object: {
        id: status,
        type: "Note",
        summary: null,
        inReplyTo: t.article,
        published: "2026-11-26T07:00:00Z",
        url: `${peer.url}/@alice/109876543210`,
        attributedTo: alice,
        to: [`${AS}#Public`],
        cc: [`${alice}/followers`, t.actor],
        sensitive: false,
        atomUri: status,
        inReplyToAtomUri: t.article,
        conversation: "tag:peer.example,2026-11-26:objectId=1:objectType=Conversation",
        content: `<p><span class="h-card" translate="no"><a href="${t.actor}" class="u-url mention">@<span>mastodon_site</span></a></span> Nice write-up, thanks!</p>`,
        contentMap: { en: "<p>Nice write-up, thanks!</p>" },
        attachment: [],
        tag: [{ type: "Mention", href: t.actor, name: "@mastodon_site@example" }],
        replies: {
          id: `${status}/replies`,
          type: "Collection",
          first: {
            type: "CollectionPage",
            next: `${status}/replies?only_other_accounts=true&page=true`,
            partOf: `${status}/replies`,
            items: [],
          },
        },
      },
    };
    expect((await peer.signedPost("alice", t.inbox, create)).status).toBe(202);
    const commentId = await waitFor(async () => {
      const [c] = await sql<{ id: string; body: string }>(`SELECT id, body FROM comments WHERE tenant_id = $1`, [t.tenantId]);
      expect(c?.body).toBe("@mastodon_site Nice write-up, thanks!");
      return c!.id;
    });

    const like = { "@context": AS, id: `${alice}#likes/42`, type: "Like", actor: alice, object: status };
    expect((await peer.signedPost("alice", t.inbox, like)).status).toBe(202);
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${commentId}`)).body.reactions.like).toBe(1));

    const follow = {
      "@context": AS,
      id: `${peer.url}/0b8c2b8e-5e1a-4c9d-9c57-1a2b3c4d5e6f`,
      type: "Follow",
      actor: alice,
      object: t.actor,
    };
    expect((await peer.signedPost("alice", t.inbox, follow)).status).toBe(202);
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(1));
    const undo = { "@context": AS, id: `${alice}#follows/7/undo`, type: "Undo", actor: alice, object: follow };
    expect((await peer.signedPost("alice", t.inbox, undo)).status).toBe(202);
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([]));

    const del = {
      "@context": [AS, { ostatus: "http://ostatus.org#", atomUri: "ostatus:atomUri" }],
      id: `${status}#delete`,
      type: "Delete",
      actor: alice,
      to: [`${AS}#Public`],
      object: { id: status, type: "Tombstone", atomUri: status },
    };
    expect((await peer.signedPost("alice", t.inbox, del)).status).toBe(202);
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${commentId}`)).body.status).toBe("deleted"));
  });
});
