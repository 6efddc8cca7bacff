// Two instances of the service federating with each other (contract section 24), each with its own
// database, keys, queue and worker, over loopback HTTP: B's site follows A's (a Follow queued by
// B's own delivery machinery, as an operator's tool would), A verifies B's signature by fetching B's
// actor and answers with a signed Accept that B verifies; A's new discussion is announced to B; a
// comment of A's sent to B in reply to B's Article becomes a comment of B's; B's local reply to it goes
// back to A (mentioning A's actor) and becomes a reply of A's comment. The service itself only
// answers, so the two activities that start a conversation (the Follow, and A's Note replying to B's
// Article) are built here and sent through each instance's own signed queue.
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { Create, Follow } from "@fedify/vocab";
import { federatingTenant, startFederatingServer } from "./support/federating-server.js";
import type { TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { noteOf, readNote } from "../src/modules/federation/engine/objects.js";

type Server = TestServer & { publicUrl: string };
let a: Server;
let b: Server;
let bDatabase: Awaited<ReturnType<typeof isolatedDatabase>>;
const waitFor = <T>(fn: () => Promise<T> | T, timeout = 30_000) => vi.waitFor(fn, { timeout, interval: 100 });
const sqlOf =
  (s: Server) =>
  <R>(text: string, values: unknown[]) =>
    s.app.runtime.services.sql.query<R>(text, values);
const contextOf = (s: Server) => s.app.runtime.federation.federation.createContext(new URL(s.publicUrl), s.app.runtime.federation.data);

beforeAll(async () => {
  // another service: a database of its own (the instance does not make one more when given one)
  [a, bDatabase] = await Promise.all([startFederatingServer(), isolatedDatabase("federation_b")]);
  b = await startFederatingServer({ database: bDatabase });
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await bDatabase?.drop();
});

it("two instances follow, accept, announce and answer each other's comments", async () => {
  const ta = await federatingTenant(a, "instance_a");
  const tb = await federatingTenant(b, "instance_b");

  // B's site follows A's: B's queue signs it with B's key; A fetches B's actor to verify it
  const ctxB = contextOf(b);
  const follow = new Follow({ id: new URL(`${tb.actor}#follows/1`), actor: new URL(tb.actor), object: new URL(ta.actor) });
  await b.app.runtime.federation.data.outbound.send(ctxB, tb.tenantId, follow, [`${ta.actor}/inbox`]);
  await waitFor(async () =>
    expect(await sqlOf(a)(`SELECT actor_id, inbox FROM federation_followers WHERE tenant_id = $1`, [ta.tenantId])).toEqual([
      { actor_id: tb.actor, inbox: `${b.publicUrl}/ap/inbox` },
    ]),
  );
  // A's Accept was delivered to B and taken (B verified A's signature): the job succeeded
  const jobsOf = (s: Server, tenantId: string) =>
    sqlOf(s)<{ status: string; last_error: string | null }>(
      `SELECT status::text AS status, last_error FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`,
      [tenantId],
    );
  await waitFor(async () => expect(await jobsOf(a, ta.tenantId)).toEqual([{ status: "succeeded", last_error: null }]));

  // A's new discussion is announced to B
  await ta.api.put(`/api/v1/discussions/a-post`, { title: "A's post", url: "https://a.example/post" });
  await waitFor(async () => {
    const jobs = await sqlOf(a)<{ status: string; type: string }>(
      `SELECT status::text AS status, message->'activity'->>'type' AS type FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub'`,
      [ta.tenantId],
    );
    expect(jobs).toContainEqual({ status: "succeeded", type: "Create" });
    expect(jobs.every((j) => j.status === "succeeded")).toBe(true);
  });

  // B has a page of its own; A's comment is sent to B as a reply to B's Article
  await tb.api.put(`/api/v1/discussions/b-post`, { title: "B's post", url: "https://b.example/post" });
  const aComment = await (await ta.reader("ada", { name: "Ada" })).post(`/api/v1/discussions/a-post/comments`, { body: "Hello from A" });
  const ctxA = contextOf(a);
  const row = await readNote(a.app.runtime.services.stores(ta.tenantId).sql, aComment.body.id);
  const note = noteOf(ctxA, ta.tenantId, row!, null).clone({ replyTarget: new URL(`${tb.actor}/articles/b-post`) });
  await a.app.runtime.federation.data.outbound.send(
    ctxA,
    ta.tenantId,
    new Create({ id: new URL(`${note.id!.href}#to-b`), actor: new URL(ta.actor), object: note }),
    [`${tb.actor}/inbox`],
  );
  const onB = await waitFor(async () => {
    const list = await tb.api.get(`/api/v1/discussions/b-post/comments`);
    expect(list.body.items).toHaveLength(1);
    return list.body.items[0];
  });
  expect(onB.author.id).toBe(`ap:${ta.actor}`);
  expect(onB.author.name).toBe((await sqlOf(a)<{ name: string }>(`SELECT name FROM tenants WHERE id = $1`, [ta.tenantId]))[0]!.name);
  expect(onB.body).toContain("Hello from A");

  // B's reader answers it: B sends Create(Note) to A (the remote author answered), in reply to A's Note
  const bea = await tb.reader("bea", { name: "Bea" });
  expect((await bea.post(`/api/v1/discussions/b-post/comments`, { body: "Hello back from B", parentId: onB.id })).status).toBe(201);
  const onA = await waitFor(async () => {
    const [c] = await sqlOf(a)<{ author_id: string; parent_id: string; body: string }>(
      `SELECT author_id, parent_id, body FROM comments WHERE tenant_id = $1 AND author_id LIKE 'ap:%'`,
      [ta.tenantId],
    );
    expect(c).toBeDefined();
    return c!;
  });
  expect(onA.author_id).toBe(`ap:${tb.actor}`);
  expect(onA.parent_id).toBe(aComment.body.id);
  expect(onA.body).toContain("Hello back from B");
});
