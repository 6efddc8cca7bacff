// HTTP signatures both ways (docs/fediverse.md "Safety", "Delivery"): the inbox verifies RFC 9421 HTTP
// Message Signatures as well as draft-cavage ones (a tampered body is refused either way); outbound
// activities are signed with RFC 9421 first and, when a server refuses that, with draft-cavage at
// once in the same attempt (a double knock), the spec each server accepted remembered for its next
// delivery; each outbound activity carries an Object Integrity Proof by the actor's Ed25519 key. The
// peers (test/support/fedi-peer.ts) are real Fedify servers verifying what they get, one verifying
// only RFC 9421, one only draft-cavage.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getDocumentLoader, verifyObject } from "@fedify/fedify";
import { Accept } from "@fedify/vocab";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";

let server: TestServer & { publicUrl: string };
let peer: FediPeer;
let modern: FediPeer;
let legacy: FediPeer;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 20_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sql = <R>(text: string, values: unknown[]) => server.app.runtime.services.sql.query<R>(text, values);
const AS = "https://www.w3.org/ns/activitystreams";
const RFC9421 = "rfc9421";
const CAVAGE = "draft-cavage-http-signatures-12";

beforeAll(async () => {
  // started together: each peer's keys are made while the others' are
  [server, peer, modern, legacy] = await Promise.all([
    startFederatingServer(),
    startFediPeer({ names: ["alice"] }),
    startFediPeer({ names: ["rita"], accepts: RFC9421 }),
    startFediPeer({ names: ["carl"], accepts: CAVAGE }),
  ]);
});

afterAll(async () => {
  await peer?.close();
  await modern?.close();
  await legacy?.close();
  await server?.stop();
});

async function site(handle: string) {
  const t = await federatingTenant(server, handle);
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

describe("inbound", () => {
  it("takes a Create(Note) signed with RFC 9421 as one signed with draft-cavage; a tampered body is refused either way", async () => {
    const t = await site("sig_inbound");
    const modernPost = await peer.signedPost("alice", t.inbox, createNote(t, "9421", "Signed the RFC way"), { spec: RFC9421 });
    expect(modernPost.status).toBe(202);
    const cavagePost = await peer.signedPost("alice", t.inbox, createNote(t, "cavage", "Signed the draft way"), { spec: CAVAGE });
    expect(cavagePost.status).toBe(202);
    await waitFor(async () => {
      const rows = await sql<{ body: string }>(`SELECT body FROM comments WHERE tenant_id = $1 ORDER BY body`, [t.tenantId]);
      expect(rows.map((r) => r.body)).toEqual(["Signed the RFC way", "Signed the draft way"]);
    });
    for (const spec of [RFC9421, CAVAGE] as const) {
      const tampered = await peer.signedPost("alice", t.inbox, createNote(t, `tampered-${spec}`, "Original"), {
        spec,
        tamper: (body) => body.replace("Original", "Changed"),
      });
      expect(tampered.status).toBe(401);
      expect((await tampered.json()).code).toBe("signature_invalid");
    }
    expect(await sql(`SELECT 1 FROM comments WHERE tenant_id = $1 AND body LIKE 'Changed%'`, [t.tenantId])).toEqual([]);
  });
});

describe("outbound", () => {
  it("signs with RFC 9421 for a server that verifies only that", async () => {
    const t = await site("sig_modern");
    const follow = await modern.follow("rita", new URL(t.actor));
    await waitFor(() =>
      expect(modern.received.some((r) => r.type === "Accept" && JSON.stringify(r.json).includes(follow.id!.href))).toBe(true),
    );
    const ours = modern.knocks.filter((k) => k.path === "/users/rita/inbox" || k.path === "/inbox");
    expect(ours.map((k) => [k.spec, k.status])).toEqual([[RFC9421, 202]]);
  });

  it("knocks again with draft-cavage for a server that verifies only that, and signs its next delivery so at once", async () => {
    const t = await site("sig_legacy");
    const follow = await legacy.follow("carl", new URL(t.actor));
    await waitFor(() =>
      expect(legacy.received.some((r) => r.type === "Accept" && JSON.stringify(r.json).includes(follow.id!.href))).toBe(true),
    );
    expect(legacy.knocks.map((k) => [k.spec, k.status])).toEqual([
      [RFC9421, 401],
      [CAVAGE, 202],
    ]);
    // one attempt: the job succeeded on its first, with the draft-cavage knock
    await waitFor(async () =>
      expect(
        await sql(`SELECT attempts, status::text FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`, [t.tenantId]),
      ).toEqual([{ attempts: 1, status: "succeeded" }]),
    );
    // the next delivery to that server (the announcement of a new discussion) goes signed with draft-cavage first
    await t.api.put(`/api/v1/discussions/second`, { title: "Second", url: "https://sig_legacy.example/second" });
    await waitFor(() => expect(legacy.received.some((r) => r.type === "Create")).toBe(true));
    expect(legacy.knocks.slice(2).map((k) => [k.spec, k.status])).toEqual([[CAVAGE, 202]]);
  });

  it("carries an Object Integrity Proof (eddsa-jcs-2022) by the actor's Ed25519 key, which the peer verifies", async () => {
    const t = await site("sig_proof");
    const follow = await modern.follow("rita", new URL(t.actor));
    await waitFor(() =>
      expect(modern.received.some((r) => r.type === "Accept" && JSON.stringify(r.json).includes(follow.id!.href))).toBe(true),
    );
    const knock = modern.knocks.find((k) => k.body.includes(follow.id!.href) && k.status === 202)!;
    const json = JSON.parse(knock.body) as Record<string, any>;
    expect(json.type).toBe("Accept");
    const proof = json.proof;
    expect(proof).toMatchObject({ type: "DataIntegrityProof", cryptosuite: "eddsa-jcs-2022", proofPurpose: "assertionMethod" });
    // its key is the actor's Ed25519 Multikey, listed under assertionMethod
    const actor = (await (await fetch(t.actor, { headers: { accept: "application/activity+json" } })).json()) as Record<string, any>;
    const method = [actor.assertionMethod].flat().find((m: any) => m.id === proof.verificationMethod);
    expect(method).toMatchObject({ type: "Multikey", controller: t.actor });
    expect(method.publicKeyMultibase).toMatch(/^z6Mk/);
    // the peer's Fedify verifies it (fetching the key from the actor), and refuses the activity changed
    const loader = getDocumentLoader({ allowPrivateAddress: true });
    const options = { documentLoader: loader, contextLoader: loader };
    expect(await verifyObject(Accept, json, options)).toBeInstanceOf(Accept);
    expect(await verifyObject(Accept, { ...json, to: `${modern.url}/users/someone-else` }, options)).toBeNull();
  });
});
