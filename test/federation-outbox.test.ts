// The actor's outbox (contract section 28): an OrderedCollection with totalItems and pages, listing
// its Create(Article) activities newest first under the ids their deliveries carried. Read by the
// Fedify peer of test/support/fedi-peer.ts after it follows, as a server reads a new follow's history.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFediPeer, type FediPeer } from "./support/fedi-peer.js";
import { federatingTenant, getAp, startFederatingServer } from "./support/federating-server.js";

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

describe("the outbox", () => {
  it("lists the actor's Create(Article) activities newest first, in pages, with the ids that were delivered", async () => {
    const t = await federatingTenant(server, "outboxed");
    const empty = await getAp(`${t.actor}/outbox`);
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ type: "OrderedCollection", totalItems: 0 });

    await peer.follow("alice", new URL(t.actor));
    await waitFor(() => expect(peer.received.some((r) => r.type === "Accept" && r.json.actor === t.actor)).toBe(true));
    // more than a page (20): made one after the other, so each is newer than the one before
    const ids = Array.from({ length: 22 }, (_, i) => `post-${String(i).padStart(2, "0")}`);
    for (const id of ids) {
      const res = await t.api.put(`/api/v1/discussions/${id}`, { title: `Post ${id}`, url: `https://blog.example/${id}` });
      expect(res.status).toBeLessThan(300);
    }
    // a discussion without a url is no Article: not announced, not listed
    expect((await t.api.put("/api/v1/discussions/no-url", { title: "Draft" })).status).toBeLessThan(300);
    const article = (id: string) => `${t.actor}/articles/${id}`;
    const delivered = new Map<string, string>();
    await waitFor(() => {
      for (const r of peer.received) {
        const object = r.json.object as { id?: string; type?: string } | undefined;
        if (r.type === "Create" && object?.type === "Article" && object.id?.startsWith(`${t.actor}/`))
          delivered.set(object.id, r.json.id as string);
      }
      expect(delivered.size).toBe(ids.length);
    });

    const first = await getAp(`${t.actor}/outbox`);
    expect(first.json).toMatchObject({ type: "OrderedCollection", totalItems: 22 });
    expect(typeof first.json.first).toBe("string");

    const outbox = await peer.collection(new URL(`${t.actor}/outbox`));
    expect(outbox.totalItems).toBe(22);
    expect(outbox.items.map((i) => i.type)).toEqual(ids.map(() => "Create"));
    // newest first, each the Article of its discussion under the activity id its delivery carried
    const objects = outbox.items.map((i) => i.object as { id: string; type: string; url: string; name: string });
    expect(objects.map((o) => o.id)).toEqual([...ids].reverse().map(article));
    expect(objects.every((o) => o.type === "Article")).toBe(true);
    expect(objects[0]).toMatchObject({ url: "https://blog.example/post-21", name: "Post post-21" });
    expect(outbox.items.map((i) => i.id)).toEqual([...ids].reverse().map((id) => delivered.get(article(id))));
    expect(outbox.items.every((i) => i.actor === t.actor)).toBe(true);

    // a cursor it did not issue is an empty page, not an error
    const forged = await getAp(`${t.actor}/outbox?cursor=${encodeURIComponent("nope")}`);
    expect(forged.status).toBe(200);
    expect(forged.json.orderedItems ?? []).toEqual([]);
  });
});
