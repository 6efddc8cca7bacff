// What an inbound activity cannot make the service do (docs/fediverse.md "Safety", docs/security.md
// "Inbound federation"): spend seconds of CPU on a Linked Data signature over a graph
// its sender chose, spend another domain's budget, create a discussion, take the id of another
// server's Note, or point the site's deliveries at a third server; nor learn, through the shared
// inbox, who blocks it — each against real Fedify peers on loopback addresses of their own (other
// domains to the service).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { randomBytes } from "node:crypto";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, inboundApplied, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";

let server: TestServer & { publicUrl: string };
let peer: FediPeer;
let victim: FediPeer;
let spender: FediPeer;
let spent: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);
const AS = "https://www.w3.org/ns/activitystreams";
const BUDGET = 10;

beforeAll(async () => {
  server = await startFederatingServer({ inboxPerDomainPerMinute: BUDGET });
  peer = await startFediPeer({ names: ["alice"] });
  victim = await startFediPeer({ names: ["vic"], host: "127.0.0.4" });
  spender = await startFediPeer({ names: ["sam"], host: "127.0.0.6" });
  spent = await startFediPeer({ names: ["tom"], host: "127.0.0.7" });
});

afterAll(async () => {
  for (const p of [peer, victim, spender, spent]) await p?.close();
  await server?.stop();
});

async function site(handle: string, settings: Record<string, unknown> = {}) {
  const t = await federatingTenant(server, handle);
  if (Object.keys(settings).length) expect((await t.api.patch("/api/v1/settings", settings)).status).toBe(200);
  await t.api.put(`/api/v1/discussions/post`, { title: "A post", url: `https://${handle}.example/post` });
  return { ...t, inbox: new URL(`${t.actor}/inbox`), article: `${t.actor}/articles/post` };
}

const commentsOf = (tenantId: string) =>
  sql<{ body: string; author_id: string; status: string }>(
    `SELECT body, author_id, status FROM comments WHERE tenant_id = $1 ORDER BY created_at`,
    [tenantId],
  );

const problem = async (res: Response) => ((await res.json()) as { code: string }).code;

/** `n` blank nodes, each linked to every other: a graph whose canonicalization (URDNA2015) takes seconds. */
function clique(n: number) {
  const ids = Array.from({ length: n }, (_, i) => `_:b${i}`);
  return ids.map((id) => ({ "@id": id, "https://example.com/ns#knows": ids.filter((o) => o !== id).map((o) => ({ "@id": o })) }));
}

/** alice's Create(Note) replying to `article`, carrying a Linked Data `signature` over a clique of 8 blank nodes. */
function ldSigned(article: string, id: string) {
  const alice = peer.actorUri("alice").href;
  return {
    "@context": AS,
    id: `${alice}/statuses/${id}/activity`,
    type: "Create",
    actor: alice,
    object: {
      id: `${alice}/statuses/${id}`,
      type: "Note",
      attributedTo: alice,
      inReplyTo: article,
      content: `<p>signed twice ${id}</p>`,
      to: [`${AS}#Public`],
    },
    "https://example.com/ns#web": clique(8),
    signature: {
      type: "RsaSignature2017",
      creator: `${alice}#main-key`,
      created: new Date().toISOString(),
      signatureValue: randomBytes(256).toString("base64"),
    },
  };
}

/**
 * `send`'s answer, the CPU time this process (the server, in it) spent until it came, and the slowest
 * /healthz answered meanwhile.
 */
async function whileHealthz(send: () => Promise<Response>): Promise<{ res: Response; cpuMs: number; healthzMs: number }> {
  const cpu = process.cpuUsage();
  let done = false;
  const sending = send().finally(() => (done = true));
  let healthzMs = 0;
  while (!done) {
    const t = performance.now();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    healthzMs = Math.max(healthzMs, performance.now() - t);
    await new Promise((r) => setTimeout(r, 50));
  }
  const res = await sending;
  const spent = process.cpuUsage(cpu);
  return { res, cpuMs: (spent.user + spent.system) / 1000, healthzMs };
}

describe("Linked Data signatures", () => {
  it("never verifies one: a clique of blank nodes under a `signature` is answered at once, unsigned (401) or HTTP-signed (202)", async () => {
    const t = await site("ldsig_site");
    const body = JSON.stringify(ldSigned(t.article, "unsigned"));
    expect(body.length).toBeLessThan(2_500);
    const alice = peer.actorUri("alice").href;
    // no valid HTTP signature: refused, without canonicalizing anything
    const unsigned = await whileHealthz(() =>
      fetch(t.inbox, {
        method: "POST",
        headers: {
          "content-type": "application/activity+json",
          date: new Date().toUTCString(),
          digest: "SHA-256=AAAA",
          signature: `keyId="${alice}#main-key",algorithm="rsa-sha256",headers="(request-target) date digest",signature="AAAA"`,
        },
        body,
      }),
    );
    expect(unsigned.res.status).toBe(401);
    expect(await problem(unsigned.res)).toBe("signature_invalid");
    expect(unsigned.cpuMs).toBeLessThan(6_000);
    expect(unsigned.healthzMs).toBeLessThan(1_000);
    // the same, HTTP-signed by alice (as Mastodon sends a public reply: both signatures): taken, on its
    // HTTP signature over the body as it came, its Linked Data one ignored
    const signed = await whileHealthz(() => peer.signedPost("alice", t.inbox, ldSigned(t.article, "signed")));
    expect(signed.res.status).toBe(202);
    expect(signed.cpuMs).toBeLessThan(6_000);
    expect(signed.healthzMs).toBeLessThan(1_000);
    await waitFor(async () => expect((await commentsOf(t.tenantId)).map((c) => c.body)).toEqual(["signed twice signed"]));
    // and the Fedify peer's own Create, as it signs it, still comes in
    await peer.reply("alice", new URL(t.actor), new URL(t.article), "<p>plain reply</p>");
    await waitFor(async () => expect((await commentsOf(t.tenantId)).map((c) => c.body)).toEqual(["signed twice signed", "plain reply"]));
  }, 60_000);
});

describe("a domain's budget", () => {
  it("is charged to the verified key's domain, not to a keyid= named before the real keyId", async () => {
    const t = await site("budget_site");
    const tom = spent.actorUri("tom").href;
    const decoy = (sig: string) => `keyid="${tom}#main-key",${sig}`;
    const like = (who: FediPeer, name: string, id: string) => ({
      "@context": AS,
      id: `${who.url}/likes/${id}`,
      type: "Like",
      actor: who.actorUri(name).href,
      object: t.article,
    });
    const statuses: number[] = [];
    for (let i = 0; i < BUDGET + 1; i++) {
      statuses.push((await spender.signedPost("sam", t.inbox, like(spender, "sam", `s${i}`), { signature: decoy })).status);
    }
    // sam's server spends its own budget (the decoy names another domain's key)...
    expect(statuses).toEqual([...Array<number>(BUDGET).fill(202), 429]);
    // ...and tom's domain still has all of its own
    expect((await spent.signedPost("tom", t.inbox, like(spent, "tom", "t0"))).status).toBe(202);
  });
});

describe("replies", () => {
  it("attach only to a discussion that exists: a reply to any other Article id creates nothing, whatever discussions.autoCreate says", async () => {
    const on = await site("autocreate_on_site", { discussions: { autoCreate: true } });
    const off = await site("autocreate_off_site", { discussions: { autoCreate: false } });
    for (const t of [on, off]) {
      await peer.reply("alice", new URL(t.actor), new URL(`${t.actor}/articles/invented`), "<p>here first</p>");
      await peer.reply("alice", new URL(t.actor), new URL(t.article), "<p>on the post</p>");
    }
    await inboundApplied(server);
    for (const t of [on, off]) {
      await waitFor(async () => expect((await commentsOf(t.tenantId)).map((c) => c.body)).toEqual(["on the post"]));
      expect(await sql(`SELECT id FROM discussions WHERE tenant_id = $1 ORDER BY id`, [t.tenantId])).toEqual([{ id: "post" }]);
    }
  });

  it("refuses a Note whose id is on another server (400) and takes that server's own Create of it", async () => {
    const t = await site("origin_site");
    const alice = peer.actorUri("alice").href;
    const vicsNote = victim.statusUri("vic", "77").href;
    const squat = await peer.signedPost("alice", t.inbox, {
      "@context": AS,
      id: `${alice}/statuses/squat/activity`,
      type: "Create",
      actor: alice,
      object: { id: vicsNote, type: "Note", attributedTo: alice, inReplyTo: t.article, content: "<p>mine now</p>", to: [`${AS}#Public`] },
    });
    expect(squat.status).toBe(400);
    expect(await problem(squat)).toBe("activity_invalid");
    // an activity whose own id is another server's is refused as well
    const like = { "@context": AS, id: `${victim.url}/likes/1`, type: "Like", actor: alice, object: t.article };
    const borrowed = await peer.signedPost("alice", t.inbox, like);
    expect(borrowed.status).toBe(400);
    expect(await problem(borrowed)).toBe("activity_invalid");
    await victim.reply("vic", new URL(t.actor), new URL(t.article), "<p>the real one</p>", "77");
    await waitFor(async () =>
      expect(await commentsOf(t.tenantId)).toEqual([
        { body: "the real one", author_id: `ap:${victim.actorUri("vic").href}`, status: "approved" },
      ]),
    );
  });
});

describe("followers", () => {
  it("are taken only with inboxes on their own origin", async () => {
    const t = await site("inbox_site");
    // frank's actor names inboxes on victim's server: the follow is ignored, nothing is sent there
    const elsewhere = await startFediPeer({ names: ["frank"], host: "127.0.0.8", inboxOrigin: victim.url, sharedInboxOrigin: victim.url });
    try {
      await elsewhere.follow("frank", new URL(t.actor));
    } finally {
      await elsewhere.close();
    }
    // gina's own inbox is at home, her shared inbox elsewhere: she is followed at her own inbox
    const half = await startFediPeer({ names: ["gina"], host: "127.0.0.9", sharedInboxOrigin: victim.url });
    try {
      await half.follow("gina", new URL(t.actor));
      await waitFor(async () => expect(half.received.map((r) => r.type)).toContain("Accept"));
      await inboundApplied(server);
      // (the same outbound pass would have sent frank's Accept to the other server's inbox)
      expect(victim.received).toEqual([]);
    } finally {
      await half.close();
    }
    expect(await sql(`SELECT actor_id, inbox FROM federation_followers WHERE tenant_id = $1`, [t.tenantId])).toEqual([
      { actor_id: half.actorUri("gina").href, inbox: `${half.url}/users/gina/inbox` },
    ]);
  });
});

describe("a blocked domain through the shared inbox", () => {
  it("is answered 202 when it replies to a remote Note a site holds, and nothing is stored (no oracle of who blocks whom)", async () => {
    const t = await site("quiet_block_site", { federation: { blockedDomains: ["127.0.0.4"] } });
    const note = await peer.reply("alice", new URL(t.actor), new URL(t.article), "<p>first</p>");
    await waitFor(async () => expect((await commentsOf(t.tenantId)).map((c) => c.body)).toEqual(["first"]));
    const vic = victim.actorUri("vic").href;
    const reply = {
      "@context": AS,
      id: `${vic}/statuses/quiet/activity`,
      type: "Create",
      actor: vic,
      object: {
        id: `${vic}/statuses/quiet`,
        type: "Note",
        attributedTo: vic,
        inReplyTo: note.id!.href,
        content: "<p>blocked</p>",
        to: [`${AS}#Public`],
      },
    };
    const res = await victim.signedPost("vic", new URL(`${server.publicUrl}/ap/inbox`), reply);
    expect(res.status).toBe(202);
    await inboundApplied(server);
    expect((await commentsOf(t.tenantId)).map((c) => c.body)).toEqual(["first"]);
  });
});

describe("deliveries", () => {
  it("go to no inbox on another origin than its actor's: a follower's row written before, nor a remote author's", async () => {
    const t = await site("delivery_site");
    const home = await startFediPeer({ names: ["hal"], host: "127.0.0.10" });
    // an actor on 127.0.0.11 whose inbox is vic's, on victim's server
    const away = await startFediPeer({ names: ["vic"], host: "127.0.0.11", inboxOrigin: victim.url });
    try {
      await home.follow("hal", new URL(t.actor));
      await waitFor(async () => expect(home.received.map((r) => r.type)).toContain("Accept"));
      // a discussion federated once the actor exists (announced to its followers)
      await t.api.put(`/api/v1/discussions/later`, { title: "Later", url: "https://delivery_site.example/later" });
      const later = `${t.actor}/articles/later`;
      await waitFor(() => expect(home.received.some((r) => r.type === "Create")).toBe(true));
      // a follower's row from before inboxes were checked, its inbox on victim's server
      await sql(`INSERT INTO federation_followers (tenant_id, actor_id, inbox, follow_id, created_at) VALUES ($1, $2, $3, NULL, now())`, [
        t.tenantId,
        spender.actorUri("sam").href,
        `${victim.url}/inbox`,
      ]);
      const queuedTo = async (noteId: string) =>
        (
          await sql<{ inbox: string }>(
            `SELECT message->>'inbox' AS inbox FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub' AND strpos(message::text, $2) > 0 ORDER BY 1`,
            [t.tenantId, noteId],
          )
        ).map((r) => r.inbox);
      const ann = await t.reader("ann", { name: "Ann Local" });
      const first = await ann.post(`/api/v1/discussions/later/comments`, { body: "to the followers" });
      expect(first.status).toBe(201);
      const firstNote = `${t.actor}/notes/${first.body.id}`;
      await waitFor(async () => expect(await queuedTo(firstNote)).toEqual([`${home.url}/inbox`]));

      // a reply to the away actor's comment goes to the followers, and to its author only at its own server
      const note = await away.reply("vic", new URL(t.actor), new URL(later), "<p>from away</p>");
      const [row] = await waitFor(async () => {
        const rows = await sql<{ comment_id: string }>(
          `SELECT comment_id FROM federation_objects WHERE tenant_id = $1 AND object_id = $2`,
          [t.tenantId, note.id!.href],
        );
        expect(rows).toHaveLength(1);
        return rows;
      });
      const second = await ann.post(`/api/v1/discussions/later/comments`, { body: "answering", parentId: row!.comment_id });
      expect(second.status).toBe(201);
      await waitFor(async () => expect(await queuedTo(`${t.actor}/notes/${second.body.id}`)).toEqual([`${home.url}/inbox`]));
    } finally {
      await home.close();
      await away.close();
    }
  });
});
