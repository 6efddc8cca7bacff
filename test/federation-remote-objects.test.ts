// A remote reply and its Note's row in federation_objects are one statement (eng_post_remote_comment:
// eng_post_comment and the row, as the inbox's Create(Note) posts it: src/modules/federation/engine/inbox.ts),
// and so are a remote Like's reaction and its row (eng_toggle_remote_reaction): a Note the tenant holds already is
// refused and leaves no comment, and no statement of its own writes the row.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Tenant } from "../src/generated/prisma/client.js";
import { tenantRow } from "../src/auth/auth-cache.js";
import { postComment } from "../src/modules/comments/write.js";
import { toggleReaction } from "../src/modules/reactions/reactions.js";
import { remoteContext } from "../src/modules/federation/engine/remote-reader.js";
import { AppError } from "../src/lib/errors.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;
let tenant: Tenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  tenant = (await tenantRow(server.app.runtime.services, t.tenantId))!;
});
afterAll(() => server?.stop());

const ACTOR = "https://peer.example/users/bob";
const reader = { id: `ap:${ACTOR}`, name: "Bob of the peer", avatarUrl: null };
const as = () => remoteContext(server.app.runtime.services, tenant, reader);

const sql = <R>(text: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(text, [t.tenantId, ...values]);
const objects = (objectId: string) =>
  sql<{ kind: string; commentId: string; readerId: string; actorId: string }>(
    `SELECT kind, comment_id AS "commentId", reader_id AS "readerId", actor_id AS "actorId" FROM federation_objects WHERE tenant_id = $1 AND object_id = $2`,
    [objectId],
  );
const comments = (discussion: string) =>
  sql<{ id: string }>(`SELECT id FROM comments WHERE tenant_id = $1 AND discussion_id = $2 ORDER BY created_at`, [discussion]);

/** The statements run on the app's client (every store's goes through it) while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const spy = vi.spyOn(server.app.runtime.services.sql, "query");
  try {
    await work();
    return spy.mock.calls.map((c) => c[0]);
  } finally {
    spy.mockRestore();
  }
}

describe("a remote reply", () => {
  it("is written with its Note's row by the comment's own statement", async () => {
    const note = `https://peer.example/notes/${Date.now()}-1`;
    let id = "";
    const ran = await statementsOf(async () => {
      id = (await postComment(as(), "fed-one", { body: "from afar" }, { remote: { objectId: note, actorId: ACTOR } })).id;
    });
    expect(await objects(note)).toEqual([{ kind: "note", commentId: id, readerId: reader.id, actorId: ACTOR }]);
    expect(ran.filter((s) => /federation_objects/.test(s))).toEqual([]);
    expect(ran.filter((s) => /eng_post_remote_comment/.test(s))).toHaveLength(1);
    expect(ran.filter((s) => /eng_post_comment/.test(s))).toEqual([]);
  });

  it("of a Note the tenant holds already is refused, and leaves no comment", async () => {
    const note = `https://peer.example/notes/${Date.now()}-2`;
    const first = await postComment(as(), "fed-two", { body: "once" }, { remote: { objectId: note, actorId: ACTOR } });
    const again = await postComment(as(), "fed-two", { body: "twice" }, { remote: { objectId: note, actorId: ACTOR } }).catch(
      (err: unknown) => err,
    );
    expect(again).toBeInstanceOf(AppError);
    expect([(again as AppError).status, (again as AppError).code]).toEqual([409, "remote_object_held"]);
    expect(await comments("fed-two")).toEqual([{ id: first.id }]);
    expect((await objects(note)).map((o) => o.commentId)).toEqual([first.id]);
  });

  it("costs a local comment no row", async () => {
    const local = await postComment(as(), "fed-three", { body: "no mapping" });
    expect(await sql(`SELECT 1 FROM federation_objects WHERE tenant_id = $1 AND comment_id = $2`, [local.id])).toEqual([]);
  });
});

describe("a remote Like", () => {
  it("is written and taken back with its Like's row by the toggle's own statement", async () => {
    const target = await postComment(as(), "fed-four", { body: "like me" });
    const like = `https://peer.example/likes/${Date.now()}`;
    const on = await statementsOf(async () => {
      const r = await toggleReaction(as(), target.id, { kind: "like" }, { objectId: like, actorId: ACTOR });
      expect(r.active).toBe(true);
    });
    expect(await objects(like)).toEqual([{ kind: "like", commentId: target.id, readerId: reader.id, actorId: ACTOR }]);
    const off = await statementsOf(async () => {
      const r = await toggleReaction(as(), target.id, { kind: "like" }, { objectId: like, actorId: ACTOR });
      expect(r.active).toBe(false);
    });
    expect(await objects(like)).toEqual([]);
    expect([...on, ...off].filter((s) => /federation_objects/.test(s))).toEqual([]);
  });
});
