// A remote actor (src/modules/federation/engine/remote-actors.ts) is read of its document once while the
// document is unchanged: read again (Fedify's JSON-LD expansion) only when the loader answers another
// document (changed, or fetched again after an erasure forgot it); an actor whose document does not
// load is not kept, and its reader (remote-reader.ts) is named by its id. Fedify's own parsing, on
// documents in memory; the loader is the one thing stood in for (its cache is the federation's KV store).
import { getDocumentLoader } from "@fedify/fedify";
import { Object as ApObject } from "@fedify/vocab";
import { describe, expect, it } from "vitest";
import { REMOTE_ACTORS_KEPT, remoteActor } from "../../src/modules/federation/engine/remote-actors.js";
import { remoteReader } from "../../src/modules/federation/engine/remote-reader.js";

const contexts = getDocumentLoader();

function remoteServer(host: string) {
  const docs = new Map<string, unknown>();
  let reads = 0;
  const documentLoader = async (url: string) => {
    if (!docs.has(url)) throw new Error(`404 ${url}`);
    // as the KV store answers: a new object each time, of the same JSON
    return { contextUrl: null, documentUrl: url, document: structuredClone(docs.get(url)) };
  };
  const ctx = {
    documentLoader,
    async lookupObject(id: URL | string) {
      reads++;
      const { document } = await documentLoader(String(id));
      return ApObject.fromJsonLd(document, { documentLoader: contexts, contextLoader: contexts });
    },
  };
  const actor = (name: string, user = "ann", icon = `https://${host}/${user}.png`) => {
    const id = new URL(`https://${host}/users/${user}`);
    docs.set(id.href, {
      "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
      id: id.href,
      type: "Person",
      preferredUsername: user,
      name,
      inbox: `${id.href}/inbox`,
      endpoints: { sharedInbox: `https://${host}/inbox` },
      icon: { type: "Image", url: icon },
    });
    return id;
  };
  return { ctx, actor, docs, reads: () => reads };
}

describe("a remote actor", () => {
  it("is made of its document once while the document is the same, and again when it changes", async () => {
    const peer = remoteServer("kept.example");
    const ann = peer.actor("Ann");
    const first = await remoteReader(peer.ctx, ann);
    expect(first).toEqual({ id: "ap:https://kept.example/users/ann", name: "Ann", avatarUrl: "https://kept.example/ann.png" });
    expect(await remoteActor(peer.ctx, ann)).toEqual({
      preferredUsername: "ann",
      name: "Ann",
      iconUrl: "https://kept.example/ann.png",
      inbox: "https://kept.example/users/ann/inbox",
      sharedInbox: "https://kept.example/inbox",
    });
    for (let i = 0; i < 5; i++) expect(await remoteReader(peer.ctx, ann)).toEqual(first);
    expect(peer.reads()).toBe(1);
    // the profile edited (the loader's cache has the new document): the next reader is the new one
    peer.actor("Ann B.", "ann", "https://kept.example/new.png");
    expect(await remoteReader(peer.ctx, ann)).toEqual({ ...first, name: "Ann B.", avatarUrl: "https://kept.example/new.png" });
    expect(peer.reads()).toBe(2);
  });

  it("whose document does not load is no actor, its reader its id alone, and it is read again next time", async () => {
    const peer = remoteServer("gone.example");
    const bob = new URL("https://gone.example/users/bob");
    expect(await remoteReader(peer.ctx, bob)).toEqual({
      id: "ap:https://gone.example/users/bob",
      name: "@bob@gone.example",
      avatarUrl: null,
    });
    expect(peer.reads()).toBe(0);
    // erased and forgotten, then its document loads again: read, not answered from before
    peer.actor("Bob", "bob");
    expect((await remoteReader(peer.ctx, bob)).name).toBe("Bob");
    peer.docs.delete(bob.href);
    expect((await remoteReader(peer.ctx, bob)).name).toBe("@bob@gone.example");
    expect(peer.reads()).toBe(1);
  });

  it(`is one of at most ${REMOTE_ACTORS_KEPT} kept, the least recently used going first`, async () => {
    const peer = remoteServer("many.example");
    const first = peer.actor("First", "u0");
    await remoteReader(peer.ctx, first);
    for (let i = 1; i <= REMOTE_ACTORS_KEPT; i++) {
      if (i === REMOTE_ACTORS_KEPT / 2) await remoteReader(peer.ctx, first); // used again: kept
      await remoteReader(peer.ctx, peer.actor(`User ${i}`, `u${i}`));
    }
    const reads = peer.reads();
    await remoteReader(peer.ctx, first);
    expect(peer.reads()).toBe(reads);
    await remoteReader(peer.ctx, new URL("https://many.example/users/u1"));
    expect(peer.reads()).toBe(reads + 1);
  }, 60_000);
});
