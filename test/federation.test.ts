// The fediverse (contract section 24; docs/fediverse.md) against a real ActivityPub peer: a second
// server built on Fedify and shaped like Mastodon (test/support/fedi-peer.ts), on loopback, every
// flow over HTTP with signed deliveries both ways: discovery and the actor, Follow/Accept/Undo,
// Create(Article) to followers, replies coming in as comments (Create/Update/Delete Note, Like and
// Undo) with their events, local comments going out (Create/Update/Delete Note, the Mention of the
// remote author answered), Notes dereferenceable (HTML redirects to the permalink), and refusals.
import { createPublicKey } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Note } from "@fedify/vocab";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { AP_JSON, federatingTenant, getAp, startFederatingServer } from "./support/federating-server.js";
import { createTestTenant, keyWith } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";

let server: TestServer & { publicUrl: string };
let peer: FediPeer;
const host = () => new URL(server.publicUrl).host;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });

beforeAll(async () => {
  [server, peer] = await Promise.all([startFederatingServer(), startFediPeer()]);
});

afterAll(async () => {
  await peer?.close();
  await server?.stop();
});

const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);

async function discussionWithUrl(t: Awaited<ReturnType<typeof federatingTenant>>, id: string) {
  const res = await t.api.put(`/api/v1/discussions/${id}`, { title: `Post ${id}`, url: `https://blog.example/posts/${id}` });
  expect(res.status).toBeLessThan(300);
  return `${server.publicUrl}/ap/actors/${t.tenantId}/articles/${id}`;
}

describe("discovery and the actor", () => {
  it("serves WebFinger, NodeInfo and the Service actor only while federation is on", async () => {
    const t = await createTestTenant(server);
    const actorUrl = `${server.publicUrl}/ap/actors/${t.tenantId}`;
    const finger = `${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent(`acct:site_${t.tenantId.slice(-6).toLowerCase()}@${host()}`)}`;
    expect((await getAp(actorUrl)).status).toBe(404);
    expect((await getAp(finger, "application/jrd+json")).status).toBe(404);

    const handle = `site_${t.tenantId.slice(-6).toLowerCase()}`.replace(/[^a-z0-9_]/g, "_");
    const on = await t.api.patch("/api/v1/settings", { federation: { enabled: true, handle } });
    expect(on.status).toBe(200);

    const jrd = await getAp(
      `${server.publicUrl}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${handle}@${host()}`)}`,
      "application/jrd+json",
    );
    expect(jrd.status).toBe(200);
    expect(jrd.json.subject).toBe(`acct:${handle}@${host()}`);
    expect(jrd.json.links).toContainEqual(expect.objectContaining({ rel: "self", type: "application/activity+json", href: actorUrl }));

    for (const accept of [AP_JSON, 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"']) {
      const actor = await getAp(actorUrl, accept);
      expect(actor.status).toBe(200);
      expect(actor.json.type).toBe("Service");
      expect(actor.json.id).toBe(actorUrl);
      expect(actor.json.preferredUsername).toBe(handle);
      expect(actor.json.name).toBe((await sql<{ name: string }>(`SELECT name FROM tenants WHERE id = $1`, [t.tenantId]))[0]!.name);
      expect(actor.json.inbox).toBe(`${actorUrl}/inbox`);
      expect(actor.json.outbox).toBe(`${actorUrl}/outbox`);
      expect(actor.json.followers).toBe(`${actorUrl}/followers`);
      expect(actor.json.endpoints.sharedInbox).toBe(`${server.publicUrl}/ap/inbox`);
      expect(actor.json.publicKey.id).toBe(`${actorUrl}#main-key`);
      expect(actor.json.publicKey.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      // RSA of 2,048 bits with the exponent 65537, as Mastodon's (docs/fediverse.md: what a signature costs)
      expect(createPublicKey(actor.json.publicKey.publicKeyPem).asymmetricKeyDetails).toEqual({
        modulusLength: 2048,
        publicExponent: 65537n,
      });
      const methods = [actor.json.assertionMethod].flat();
      // the Ed25519 key as a Multikey (multibase z6Mk… is an Ed25519 public key)
      expect(methods.some((m: any) => m.type === "Multikey" && /^z6Mk/.test(m.publicKeyMultibase))).toBe(true);
    }

    // the private keys are stored sealed, as every secret
    const [keys] = await sql<{ rsa: string; ed: string }>(
      `SELECT rsa_private_enc AS rsa, ed_private_enc AS ed FROM federation_actors WHERE tenant_id = $1`,
      [t.tenantId],
    );
    expect(keys!.rsa).not.toMatch(/"d"|PRIVATE/);
    const box = server.app.runtime.services.secretBox;
    expect(JSON.parse(box.open(keys!.rsa)).kty).toBe("RSA");
    expect(JSON.parse(box.open(keys!.ed)).crv).toBe("Ed25519");

    const links = await getAp(`${server.publicUrl}/.well-known/nodeinfo`, "application/json");
    expect(links.status).toBe(200);
    const nodeinfo = await getAp(links.json.links[0].href, "application/json");
    expect(nodeinfo.json.software.name).toBe("engagement-service");
    expect(nodeinfo.json.protocols).toEqual(["activitypub"]);

    // turned off again: 404 everywhere
    await t.api.patch("/api/v1/settings", { federation: { enabled: false } });
    await waitFor(async () => expect((await getAp(actorUrl)).status).toBe(404));
  });
});

describe("following", () => {
  it("stores a Follow, answers it with a signed Accept, announces new discussions, and Undo removes the follower", async () => {
    const t = await federatingTenant(server, "follow_me");
    const follow = await peer.follow("alice", new URL(t.actor));
    await waitFor(async () =>
      expect(await sql(`SELECT actor_id FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([
        { actor_id: peer.actorUri("alice").href },
      ]),
    );
    // the Accept reached the peer's inbox, which verified our signature (Fedify refuses unsigned ones)
    await waitFor(() => {
      const accept = peer.received.find((r) => r.type === "Accept" && JSON.stringify(r.json).includes(follow.id!.href));
      expect(accept?.json.actor).toBe(t.actor);
    });
    const followers = await getAp(`${t.actor}/followers`);
    expect(followers.json.totalItems).toBe(1);

    const article = await discussionWithUrl(t, "announced");
    await waitFor(() => {
      const create = peer.received.find((r) => r.type === "Create" && (r.json.object as any)?.id === article);
      expect(create).toBeDefined();
      const object = create!.json.object as any;
      expect(object.type).toBe("Article");
      expect(object.name).toBe("Post announced");
      expect(object.url).toBe("https://blog.example/posts/announced");
      expect(object.attributedTo).toBe(t.actor);
      expect(object.replies).toBeDefined();
    });
    // the Article is dereferenceable; a browser is sent to the page
    expect((await getAp(article)).json.type).toBe("Article");
    const html = await getAp(article, "text/html");
    expect(html.status).toBe(302);
    expect(html.headers.get("location")).toBe("https://blog.example/posts/announced");

    await peer.undo("alice", new URL(t.actor), follow);
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([]));
  });

  it("POST /discussions/{id}/federate announces an existing discussion", async () => {
    // a discussion from before the site federated is not announced on its own
    const t0 = await createTestTenant(server);
    await t0.api.put(`/api/v1/discussions/older`, { title: "Post older", url: "https://blog.example/posts/older" });
    await t0.api.put(`/api/v1/discussions/no-url`, { title: "No page" });
    expect((await t0.api.post(`/api/v1/discussions/older/federate`)).body.code).toBe("federation_disabled");
    expect((await t0.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "older_posts" } })).status).toBe(200);
    const actor = `${server.publicUrl}/ap/actors/${t0.tenantId}`;
    await peer.follow("bob", new URL(actor));
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t0.tenantId])).toHaveLength(1));
    const article = `${actor}/articles/older`;
    await server.app.runtime.services.webhooks.worker.runOnce();
    expect(peer.received.filter((r) => r.type === "Create" && (r.json.object as any)?.id === article)).toHaveLength(0);

    const res = await t0.api.post(`/api/v1/discussions/older/federate`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ discussionId: "older", articleId: article, followers: 1 });
    await waitFor(() => expect(peer.received.filter((r) => r.type === "Create" && (r.json.object as any)?.id === article)).toHaveLength(1));
    // a discussion without a url cannot be an Article
    expect((await t0.api.post(`/api/v1/discussions/no-url/federate`)).body.code).toBe("discussion_without_url");
    expect((await t0.api.post(`/api/v1/discussions/missing/federate`)).status).toBe(404);
  });
});

describe("replies from the fediverse", () => {
  it("Create/Update/Delete(Note) and Like/Undo(Like) become the comment's changes, with their events", async () => {
    const t = await federatingTenant(server, "replies_in");
    const article = await discussionWithUrl(t, "talk");
    const note = await peer.reply(
      "bob",
      new URL(t.actor),
      new URL(article),
      '<p>Great post! <a href="https://elsewhere.example/x" rel="nofollow">see this</a><script>alert(1)</script></p><p onclick="x()">Second</p>',
    );
    const readerId = `ap:${peer.actorUri("bob").href}`;
    const comment = await waitFor(async () => {
      const list = await t.api.get(`/api/v1/discussions/talk/comments`);
      expect(list.body.items).toHaveLength(1);
      return list.body.items[0];
    });
    expect(comment.author).toMatchObject({ id: readerId, name: "Bob of the peer", avatarUrl: `${peer.url}/avatars/bob.png` });
    expect(comment.status).toBe("approved");
    expect(comment.body).toBe("Great post! [see this](<https://elsewhere.example/x>)\n\nSecond");
    expect(comment.bodyHtml).toContain('<a href="https://elsewhere.example/x"');
    expect(comment.bodyHtml).not.toMatch(/script|onclick/);
    const types = async () =>
      (
        await sql<{ type: string }>(`SELECT type FROM events WHERE tenant_id = $1 AND discussion_id = 'talk' ORDER BY seq`, [t.tenantId])
      ).map((e) => e.type);
    expect(await types()).toEqual(["comment_created"]);

    await peer.update("bob", new URL(t.actor), note, "<p>Edited on Mastodon</p>");
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${comment.id}`)).body.body).toBe("Edited on Mastodon"));

    const like = await peer.like("alice", new URL(t.actor), note.id!);
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${comment.id}`)).body.reactions.like).toBe(1));
    await peer.undo("alice", new URL(t.actor), like);
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${comment.id}`)).body.reactions.like ?? 0).toBe(0));

    await peer.remove("bob", new URL(t.actor), note);
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${comment.id}`)).body.status).toBe("deleted"));
    expect(await types()).toEqual(["comment_created", "comment_edited", "reaction_toggled", "reaction_toggled", "comment_deleted"]);
  });

  it("holds remote replies while remoteModeration is pre, and takes replies to a comment's Note", async () => {
    const t = await federatingTenant(server, "held_replies", "pre");
    const article = await discussionWithUrl(t, "held");
    const local = await (await t.reader("ann")).post(`/api/v1/discussions/held/comments`, { body: "First!" });
    expect(local.status).toBe(201);
    await peer.reply("alice", new URL(t.actor), new URL(article), "<p>top level</p>");
    await peer.reply("alice", new URL(t.actor), new URL(`${t.actor}/notes/${local.body.id}`), "<p>answering Ann</p>");
    const rows = await waitFor(async () => {
      const r = await sql<{ body: string; status: string; parent_id: string | null }>(
        // by body: the inbound queue applies the two activities side by side, in either order
        `SELECT body, status::text AS status, parent_id FROM comments WHERE tenant_id = $1 AND author_id LIKE 'ap:%' ORDER BY body DESC`,
        [t.tenantId],
      );
      expect(r).toHaveLength(2);
      return r;
    });
    expect(rows).toEqual([
      { body: "top level", status: "pending", parent_id: null },
      { body: "answering Ann", status: "pending", parent_id: local.body.id },
    ]);
  });
});

describe("our comments going out", () => {
  it("sends Create/Update/Delete(Note) to followers, mentions the remote author answered, and serves each Note", async () => {
    const t = await federatingTenant(server, "comments_out");
    await peer.follow("alice", new URL(t.actor));
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(1));
    const article = await discussionWithUrl(t, "outgoing");
    await waitFor(() => expect(peer.received.some((r) => r.type === "Create" && (r.json.object as any)?.id === article)).toBe(true));

    const ann = await t.reader("ann", { name: "Ann Local" });
    const mine = await ann.post(`/api/v1/discussions/outgoing/comments`, { body: "Hello *fediverse*" });
    const noteId = `${t.actor}/notes/${mine.body.id}`;
    const created = await waitFor(() => {
      const c = peer.received.find((r) => r.type === "Create" && (r.json.object as any)?.id === noteId);
      expect(c).toBeDefined();
      return c!.json.object as any;
    });
    expect(created.type).toBe("Note");
    expect(created.inReplyTo).toBe(article);
    expect(created.attributedTo).toBe(t.actor);
    expect(created.content).toContain("<strong>Ann Local</strong>");
    expect(created.content).toContain("<em>fediverse</em>");
    expect(created.url).toBe(`https://blog.example/posts/outgoing#comment-${mine.body.id}`);

    // the Note at its id; a browser is sent to the comment's permalink
    expect((await getAp(noteId)).json.id).toBe(noteId);
    const html = await getAp(noteId, "text/html");
    expect(html.status).toBe(302);
    expect(html.headers.get("location")).toBe(`https://blog.example/posts/outgoing#comment-${mine.body.id}`);

    await ann.patch(`/api/v1/comments/${mine.body.id}`, { body: "Hello again" });
    await waitFor(() => {
      const u = peer.received.find((r) => r.type === "Update" && (r.json.object as any)?.id === noteId);
      expect((u?.json.object as any)?.content).toContain("Hello again");
    });

    // a reply to bob's comment goes to bob too, mentioning him
    const bobNote = await peer.reply("bob", new URL(t.actor), new URL(article), "<p>I disagree</p>");
    const bobComment = await waitFor(async () => {
      const [r] = await sql<{ comment_id: string }>(`SELECT comment_id FROM federation_objects WHERE tenant_id = $1 AND object_id = $2`, [
        t.tenantId,
        bobNote.id!.href,
      ]);
      expect(r).toBeDefined();
      return r!.comment_id;
    });
    const answer = await ann.post(`/api/v1/discussions/outgoing/comments`, { body: "Why?", parentId: bobComment });
    const answerNote = await waitFor(() => {
      const c = peer.received.find((r) => r.type === "Create" && (r.json.object as any)?.id === `${t.actor}/notes/${answer.body.id}`);
      expect(c).toBeDefined();
      return c!.json.object as any;
    });
    expect(answerNote.inReplyTo).toBe(bobNote.id!.href);
    expect([answerNote.tag].flat()).toContainEqual(expect.objectContaining({ type: "Mention", href: peer.actorUri("bob").href }));
    expect([answerNote.cc].flat()).toContain(peer.actorUri("bob").href);

    await ann.del(`/api/v1/comments/${mine.body.id}`);
    await waitFor(() => expect(peer.received.some((r) => r.type === "Delete" && JSON.stringify(r.json).includes(noteId))).toBe(true));
    expect((await getAp(noteId)).status).toBe(404);

    // every delivery went through the queue and succeeded, signed (the peer verified each)
    const jobs = await sql<{ status: string }>(
      `SELECT status::text AS status FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`,
      [t.tenantId],
    );
    expect(jobs.length).toBeGreaterThanOrEqual(6);
    await waitFor(async () =>
      expect(
        (
          await sql<{ status: string }>(
            `SELECT status::text AS status FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`,
            [t.tenantId],
          )
        ).every((j) => j.status === "succeeded"),
      ).toBe(true),
    );
    void Note;
  });

  it("a moderator's rejection or deletion of a comment sent out is Delete(Tombstone) to the recipients of its Create", async () => {
    const t = await federatingTenant(server, "moderated_out");
    await peer.follow("alice", new URL(t.actor));
    await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(1));
    const article = await discussionWithUrl(t, "moderated");
    const bobNote = await peer.reply("bob", new URL(t.actor), new URL(article), "<p>Bob asks</p>");
    const bobComment = await waitFor(async () => {
      const [r] = await sql<{ comment_id: string }>(`SELECT comment_id FROM federation_objects WHERE tenant_id = $1 AND object_id = $2`, [
        t.tenantId,
        bobNote.id!.href,
      ]);
      expect(r).toBeDefined();
      return r!.comment_id;
    });
    const ann = await t.reader("ann", { name: "Ann Local" });
    const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    // one answers bob (sent to the followers and to bob), one is top-level (to the followers)
    const answer = (await ann.post(`/api/v1/discussions/moderated/comments`, { body: "Ann answers", parentId: bobComment })).body;
    const other = (await ann.post(`/api/v1/discussions/moderated/comments`, { body: "Ann again" })).body;
    const inboxesOf = async (activityId: string) =>
      (
        await sql<{ inbox: string }>(
          `SELECT message->>'inbox' AS inbox FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub' AND message->'activity'->>'id' = $2 ORDER BY 1`,
          [t.tenantId, activityId],
        )
      ).map((r) => r.inbox);
    for (const c of [answer, other]) {
      const noteId = `${t.actor}/notes/${c.id}`;
      await waitFor(() => expect(peer.received.some((r) => r.type === "Create" && (r.json.object as any)?.id === noteId)).toBe(true));
    }
    // the peer both follows the site and hosts bob: its shared inbox once (contract section 28)
    const answerCreate = await inboxesOf(`${t.actor}/notes/${answer.id}#create`);
    expect(answerCreate).toEqual([`${peer.url}/inbox`]);

    expect((await moderator.post(`/api/v1/comments/${answer.id}/reject`)).body.status).toBe("rejected");
    expect((await moderator.del(`/api/v1/comments/${other.id}`)).status).toBeLessThan(300);
    const deleteOf = (noteId: string) =>
      waitFor(() => {
        const d = peer.received.find((r) => r.type === "Delete" && (r.json.object as any)?.id === noteId);
        expect(d).toBeDefined();
        expect((d!.json.object as any).type).toBe("Tombstone");
        return d!.json as any;
      });
    const rejected = await deleteOf(`${t.actor}/notes/${answer.id}`);
    expect(rejected.actor).toBe(t.actor);
    expect(await inboxesOf(rejected.id)).toEqual(answerCreate);
    const deleted = await deleteOf(`${t.actor}/notes/${other.id}`);
    expect(await inboxesOf(deleted.id)).toEqual([`${peer.url}/inbox`]);
    // both Notes are gone from their ids too
    expect((await getAp(`${t.actor}/notes/${answer.id}`)).status).toBe(404);
    expect((await getAp(`${t.actor}/notes/${other.id}`)).status).toBe(404);
  });
});
