// Erasing a fediverse reader (`ap:<actor id>`; docs/privacy.md, docs/fediverse.md): besides their
// comments (anonymized or removed, as settings privacy.erasure says) and everything a reader's erasure
// removes, what the federation keeps of their actor goes — the tenant's rows of their remote Notes and
// Likes (federation_objects), their follow (federation_followers), and the server's cached documents
// and public key of theirs (federation_kv) — and nothing of another actor or another tenant. Against
// the real peer (test/support/fedi-peer.ts), over HTTP.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, startFederatingServer } from "./support/federating-server.js";

let server: Awaited<ReturnType<typeof startFederatingServer>>;
let peer: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);

beforeAll(async () => {
  [server, peer] = await Promise.all([startFederatingServer(), startFediPeer({ names: ["alice", "bob"] })]);
});

afterAll(async () => {
  await peer?.close();
  await server?.stop();
});

/** A federating site with a discussion, followed by bob and alice, each of whom replied; alice liked bob's reply and bob alice's. */
async function siteWithReplies(handle: string, erasure: "anonymize" | "delete") {
  const t = await federatingTenant(server, handle);
  expect((await t.api.patch("/api/v1/settings", { privacy: { erasure } })).status).toBe(200);
  await t.api.put(`/api/v1/discussions/post`, { title: "A post", url: `https://${handle}.example/post` });
  const article = new URL(`${t.actor}/articles/post`);
  for (const who of ["bob", "alice"]) await peer.follow(who, new URL(t.actor));
  const bobNote = await peer.reply("bob", new URL(t.actor), article, `<p>bob's secret words on ${handle}</p>`);
  const aliceNote = await peer.reply("alice", new URL(t.actor), article, `<p>alice on ${handle}</p>`);
  const commentOf = (objectId: string) =>
    waitFor(async () => {
      const [r] = await sql<{ comment_id: string }>(
        `SELECT comment_id FROM federation_objects WHERE tenant_id = $1 AND object_id = $2 AND kind = 'note'`,
        [t.tenantId, objectId],
      );
      expect(r).toBeDefined();
      return r!.comment_id;
    });
  const bobComment = await commentOf(bobNote.id!.href);
  const aliceComment = await commentOf(aliceNote.id!.href);
  await peer.like("alice", new URL(t.actor), bobNote.id!);
  await peer.like("bob", new URL(t.actor), aliceNote.id!);
  await waitFor(async () =>
    expect(await sql(`SELECT 1 FROM federation_objects WHERE tenant_id = $1 AND kind = 'like'`, [t.tenantId])).toHaveLength(2),
  );
  await waitFor(async () => expect(await sql(`SELECT 1 FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(2));
  return { ...t, bobNote, aliceNote, bobComment, aliceComment };
}

/** The tenant's federation rows: [kind, actor] of its objects, and its followers. */
async function federationRows(tenantId: string) {
  const objects = await sql<{ kind: string; actor_id: string; reader_id: string }>(
    `SELECT kind, actor_id, reader_id FROM federation_objects WHERE tenant_id = $1 ORDER BY kind, actor_id`,
    [tenantId],
  );
  const followers = await sql<{ actor_id: string }>(`SELECT actor_id FROM federation_followers WHERE tenant_id = $1 ORDER BY actor_id`, [
    tenantId,
  ]);
  return { objects: objects.map((o) => [o.kind, o.actor_id, o.reader_id]), followers: followers.map((f) => f.actor_id) };
}

/** The server's cached entries naming `actorId` (documents under it, its key). */
const cachedOf = async (actorId: string) =>
  (
    await sql<{ key: string }>(`SELECT key FROM federation_kv WHERE strpos(key, $1) > 0 AND key NOT LIKE '%activityIdempotence%'`, [
      actorId,
    ])
  )
    .map((r) => r.key.split("\u001f").slice(1).join(" "))
    .sort();

describe("erasing a fediverse reader", () => {
  it("removes their remote objects, their follow and the cached actor, anonymizing their comments; nothing of others", async () => {
    const bob = peer.actorUri("bob").href;
    const alice = peer.actorUri("alice").href;
    const t = await siteWithReplies("erase_anon", "anonymize");
    const other = await siteWithReplies("erase_other", "anonymize");
    const otherBefore = await federationRows(other.tenantId);
    expect(otherBefore.followers).toEqual([alice, bob].sort());

    // before: the server holds bob's actor document, his key and his statuses (Fedify's cache)
    const cached = await cachedOf(bob);
    expect(cached).toEqual(expect.arrayContaining([`publicKey ${bob}#main-key`, `remoteDocument ${bob}`]));
    const aliceCached = await cachedOf(alice);
    expect(aliceCached.length).toBeGreaterThan(0);

    const erased = await t.api.del(`/api/v1/readers/${encodeURIComponent(`ap:${bob}`)}`);
    expect(erased.status).toBe(204);

    // his comment is kept anonymized (settings privacy.erasure "anonymize"), alice's untouched
    const [c] = await sql<{ author_id: string; body: string }>(`SELECT author_id, body FROM comments WHERE tenant_id = $1 AND id = $2`, [
      t.tenantId,
      t.bobComment,
    ]);
    expect(c).toEqual({ author_id: "", body: "[erased]" });
    const aliceComment = (await t.api.get(`/api/v1/comments/${t.aliceComment}`)).body;
    expect(aliceComment).toMatchObject({ body: "alice on erase_anon", author: { id: `ap:${alice}` } });
    expect(aliceComment.reactions.like ?? 0).toBe(0); // bob's like went with him
    // the tenant's rows of bob are gone (his Note, his Like, his follow); alice's stay, her Like of his comment too
    expect(await federationRows(t.tenantId)).toEqual({
      objects: [
        ["like", alice, `ap:${alice}`],
        ["note", alice, `ap:${alice}`],
      ],
      followers: [alice],
    });
    expect(await sql(`SELECT 1 FROM readers WHERE tenant_id = $1 AND id = $2`, [t.tenantId, `ap:${bob}`])).toEqual([]);
    // the activities of his the inbox stored for the site are gone; alice's stay, as do his for the other site
    const inboundActors = (tenantId: string) =>
      sql<{ actor: string }>(
        `SELECT DISTINCT message->'activity'->>'actor' AS actor FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_inbound' ORDER BY 1`,
        [tenantId],
      );
    expect(await inboundActors(t.tenantId)).toEqual([{ actor: alice }]);
    expect(await inboundActors(other.tenantId)).toEqual([{ actor: alice }, { actor: bob }].sort((a, b) => a.actor.localeCompare(b.actor)));
    // the server's cache of bob is gone; alice's is not
    expect(await cachedOf(bob)).toEqual([]);
    expect(await cachedOf(alice)).toEqual(aliceCached);
    // the other site, where bob was not erased, keeps all its rows
    expect(await federationRows(other.tenantId)).toEqual(otherBefore);
    expect((await other.api.get(`/api/v1/comments/${other.bobComment}`)).body.author.id).toBe(`ap:${bob}`);

    // his Note no longer names the anonymized comment: his edit of it changes nothing (alice's edit of hers still does)
    await peer.update("bob", new URL(t.actor), t.bobNote, "<p>bob again</p>");
    await peer.update("alice", new URL(t.actor), t.aliceNote, "<p>alice again</p>");
    await waitFor(async () => expect((await t.api.get(`/api/v1/comments/${t.aliceComment}`)).body.body).toBe("alice again"));
    expect(
      (await sql<{ body: string }>(`SELECT body FROM comments WHERE tenant_id = $1 AND id = $2`, [t.tenantId, t.bobComment]))[0]!.body,
    ).toBe("[erased]");
    // and erasing again finds nothing left
    expect((await t.api.del(`/api/v1/readers/${encodeURIComponent(`ap:${bob}`)}`)).status).toBe(204);
  });

  it("in the delete mode removes their comments with their rows", async () => {
    const bob = peer.actorUri("bob").href;
    const alice = peer.actorUri("alice").href;
    const t = await siteWithReplies("erase_delete", "delete");
    expect((await t.api.del(`/api/v1/readers/${encodeURIComponent(`ap:${bob}`)}`)).status).toBe(204);
    expect(await sql(`SELECT 1 FROM comments WHERE tenant_id = $1 AND id = $2`, [t.tenantId, t.bobComment])).toEqual([]);
    // alice's Like of his removed comment is hers: left as it is
    expect(await federationRows(t.tenantId)).toEqual({
      objects: [
        ["like", alice, `ap:${alice}`],
        ["note", alice, `ap:${alice}`],
      ],
      followers: [alice],
    });
    expect(await cachedOf(bob)).toEqual([]);
  });

  it("a failure in its last statement leaves their profile and their federation rows together; erasing again removes both", async () => {
    const bob = peer.actorUri("bob").href;
    const t = await siteWithReplies("erase_midway", "anonymize");
    const bobsRows = async () => {
      const [r] = await sql<{ profile: boolean; objects: number; follows: number }>(
        `SELECT EXISTS (SELECT 1 FROM readers WHERE tenant_id = $1 AND id = $2) AS profile,
                (SELECT count(*)::int FROM federation_objects WHERE tenant_id = $1 AND actor_id = $3) AS objects,
                (SELECT count(*)::int FROM federation_followers WHERE tenant_id = $1 AND actor_id = $3) AS follows`,
        [t.tenantId, `ap:${bob}`, bob],
      );
      return r;
    };
    expect(await bobsRows()).toEqual({ profile: true, objects: 2, follows: 1 });
    // another transaction holds bob's follow (a Follow of his being handled, say): the erasure waits
    // for it at its last statement, which is cancelled there (a timeout, an operator)
    const holder = new pg.Client({ connectionString: server.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      const held = await holder.query("SELECT 1 FROM federation_followers WHERE tenant_id = $1 AND actor_id = $2 FOR UPDATE", [
        t.tenantId,
        bob,
      ]);
      expect(held.rowCount).toBe(1);
      const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const erasing = t.api.del(`/api/v1/readers/${encodeURIComponent(`ap:${bob}`)}`);
      let blocked: number | undefined;
      await waitFor(async () => {
        await holder.query("SELECT pg_stat_clear_snapshot()"); // pg_stat_activity is otherwise read once per transaction
        blocked = (
          await holder.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [holderPid])
        ).rows[0]?.pid;
        expect(blocked).toBeDefined();
      });
      expect((await holder.query<{ ok: boolean }>("SELECT pg_cancel_backend($1) AS ok", [blocked])).rows[0]!.ok).toBe(true);
      expect((await erasing).status).toBeGreaterThanOrEqual(500);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    // nothing of the last statement is kept: not the profile's deletion without the rows', nor the reverse
    expect(await bobsRows()).toEqual({ profile: true, objects: 2, follows: 1 });
    expect((await t.api.del(`/api/v1/readers/${encodeURIComponent(`ap:${bob}`)}`)).status).toBe(204);
    expect(await bobsRows()).toEqual({ profile: false, objects: 0, follows: 0 });
    expect(await cachedOf(bob)).toEqual([]);
  });
});
