// The lossless export (contract section 27): a tenant holding every kind of record — discussions with
// a title, a url and a state; readers with a badge and a trust level; comments approved, pending,
// rejected, deleted, pinned, edited, a reply, a mention; votes both ways, reactions, page reactions —
// exported, imported into an empty tenant and exported again gives the same records but for the ids
// bound to the tenant (comment ids), and the documented format (docs/import-export.md) lists exactly
// the members each record is written with.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

type Rec = Record<string, unknown> & { type: string };

async function exportOf(t: TestTenant): Promise<{ text: string; records: Rec[] }> {
  const res = await fetch(`${server.url}/api/v1/export`, { headers: { "x-api-key": t.apiKey } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return {
    text,
    records: text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec),
  };
}

async function importInto(t: TestTenant, text: string) {
  const res = await fetch(`${server.url}/api/v1/imports?format=ndjson`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey, "content-type": "application/x-ndjson" },
    body: text,
  });
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  for (let i = 0; i < 400; i++) {
    const r = await t.api.get(`/api/v1/imports/${id}`);
    if (r.body.state !== "running") return r.body;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error("the import did not finish");
}

/**
 * The records with comment ids (bound to the tenant) replaced by what names a comment in both
 * tenants (its discussion, time and body), and the header's tenant and time left out; sorted.
 */
function comparable(records: Rec[]): string[] {
  const key = new Map<string, string>();
  for (const r of records)
    if (r.type === "comment") key.set(r.id as string, `${String(r.discussionId)}|${String(r.createdAt)}|${String(r.body)}`);
  const named = (id: unknown) => (typeof id === "string" ? (key.get(id) ?? `unknown ${id}`) : id);
  return records
    .filter((r) => r.type !== "export")
    .map((r) => {
      const out: Rec = { ...r };
      if (r.type === "comment") Object.assign(out, { id: named(r.id), parentId: named(r.parentId) });
      if ("commentId" in r) out.commentId = named(r.commentId);
      return JSON.stringify(out);
    })
    .sort();
}

/** Each record type's members as docs/import-export.md lists them ("author" counted as one member). */
function documentedMembers(): Map<string, string[]> {
  const doc = readFileSync(new URL("../docs/import-export.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("**The export format"), doc.indexOf("## At a million comments"));
  const out = new Map<string, string[]>();
  for (const [, literal] of section.matchAll(/`(\{"type":"\w+"[^`]*\})`/g)) {
    const type = /"type":"(\w+)"/.exec(literal!)![1]!;
    const flat = literal!.replace(/:\{[^{}]*\}/g, "").replace(/:"[^"]*"/g, "");
    out.set(
      type,
      [...flat.matchAll(/"(\w+)"/g)].map((m) => m[1]!),
    );
  }
  return out;
}

describe("the export", () => {
  it("is lossless: exported, imported into an empty tenant and exported again, it gives the same records but for comment ids", async () => {
    const a = await createTestTenant(server, "Everything");
    expect((await a.api.patch("/api/v1/settings", { votes: "updown", pageReactionKinds: ["like", "wow"] })).status).toBe(200);
    expect((await a.api.put("/api/v1/discussions/one", { title: "One", url: "https://site.example/one" })).status).toBe(201);
    expect((await a.api.put("/api/v1/discussions/two", { title: "Two", url: "https://site.example/two" })).status).toBe(201);
    const ann = await a.reader("ann", { name: "Ann", avatarUrl: "https://site.example/ann.png" });
    const bob = await a.reader("bob", { name: "Bob" });
    const cyd = await a.reader("cyd", { name: "Cyd" });
    const root = (await ann.post("/api/v1/discussions/one/comments", { body: "The root" })).body;
    const reply = (await bob.post("/api/v1/discussions/one/comments", { body: "A reply", parentId: root.id })).body;
    const edited = (await cyd.post("/api/v1/discussions/one/comments", { body: "Before" })).body;
    expect((await cyd.patch(`/api/v1/comments/${edited.id}`, { body: "After an edit" })).status).toBe(200);
    const gone = (await bob.post("/api/v1/discussions/two/comments", { body: "Deleted soon" })).body;
    expect((await bob.del(`/api/v1/comments/${gone.id}`)).status).toBe(204);
    const rejected = (await cyd.post("/api/v1/discussions/two/comments", { body: "Rejected soon" })).body;
    expect((await a.api.post(`/api/v1/comments/${rejected.id}/reject`)).status).toBe(200);
    const mention = (await cyd.post("/api/v1/discussions/two/comments", { body: "Mentioned elsewhere" })).body;
    // a webmention's comment is a comment of kind `mention` (contract section 24): made so here, the
    // export's subject being what the row holds
    await server.app.runtime.services.sql.query(`UPDATE comments SET kind = 'mention' WHERE tenant_id = $1 AND id = $2`, [
      a.tenantId,
      mention.id,
    ]);
    expect((await a.api.post(`/api/v1/comments/${root.id}/pin`)).status).toBe(200);
    expect((await a.api.patch("/api/v1/readers/ann", { badge: "Editor" })).status).toBe(200);
    expect((await a.api.put("/api/v1/readers/ann/trust", { level: "trusted" })).status).toBe(200);
    expect((await a.api.put("/api/v1/readers/bob/trust", { level: "premoderated" })).status).toBe(200);
    const held = (await bob.post("/api/v1/discussions/one/comments", { body: "Held for review" })).body;
    expect(held.status).toBe("pending");
    expect((await cyd.put(`/api/v1/comments/${root.id}/vote`, { value: 1 })).status).toBe(200);
    expect((await bob.put(`/api/v1/comments/${root.id}/vote`, { value: -1 })).status).toBe(200);
    expect((await ann.put(`/api/v1/comments/${reply.id}/vote`, { value: 1 })).status).toBe(200);
    expect((await cyd.post(`/api/v1/comments/${root.id}/reactions`, { kind: "like" })).status).toBe(200);
    expect((await ann.post("/api/v1/discussions/one/reactions", { kind: "like" })).status).toBe(200);
    expect((await bob.post("/api/v1/discussions/one/reactions", { kind: "wow" })).status).toBe(200);
    expect((await a.api.post("/api/v1/discussions/two/lock")).status).toBe(200);

    const first = await exportOf(a);
    const types = new Set(first.records.map((r) => r.type));
    expect([...types].sort()).toEqual(["comment", "discussion", "end", "export", "pageReaction", "reaction", "reader", "vote"]);
    expect(first.records.at(-1)).toEqual({
      type: "end",
      counts: { discussions: 2, readers: 3, comments: 7, reactions: 1, votes: 3, pageReactions: 2 },
    });
    expect(first.records.find((r) => r.type === "reader" && r.id === "ann")).toMatchObject({ badge: "Editor", trustLevel: "trusted" });
    expect(first.records.find((r) => r.type === "comment" && r.id === root.id)).toMatchObject({
      pinned: true,
      upvotes: 1,
      downvotes: 1,
      reactions: { like: 1 },
    });
    expect(first.records.find((r) => r.type === "comment" && r.id === mention.id)).toMatchObject({ kind: "mention" });
    expect(first.records.find((r) => r.type === "discussion" && r.id === "two")).toMatchObject({ state: "locked" });

    // every record written with exactly the members the documented format lists
    const documented = documentedMembers();
    expect([...documented.keys()].sort()).toEqual([...types].sort());
    for (const r of first.records) expect(Object.keys(r), r.type).toEqual(documented.get(r.type));
    const author = first.records.find((r) => r.type === "comment")!.author as Record<string, unknown>;
    expect(Object.keys(author)).toEqual(["id", "name", "avatarUrl", "badge"]);

    const b = await createTestTenant(server, "Empty");
    const done = await importInto(b, first.text);
    expect(done.failure ?? null, JSON.stringify(done.errors)).toBeNull();
    expect(done).toMatchObject({ state: "succeeded", skipped: 0, threads: 2, readers: 3, comments: 7, reactions: 6 });
    const second = await exportOf(b);
    expect(comparable(second.records)).toEqual(comparable(first.records));
    // and what the records stand for works in the new tenant: the comment's score and the page's counts
    const thread = await b.api.get("/api/v1/discussions/one");
    expect(thread.body.reactions).toEqual({ like: 1, wow: 1 });
  });
});
