// Page reactions (contract section 18): the pageReactionKinds setting, POST /discussions/{id}/reactions
// and its GraphQL twin, the discussion's reactions and myReactions, the reaction_toggled event on the
// stream and to webhooks, exact counts under concurrency, and a reader's export and erasure.
import { createClient } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { eventually, startReceiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";
import { openSse, WAIT } from "./support/sse.js";
import { client } from "./support/client.js";
import {
  TestDiscussionReactionsDocument,
  TestGetSettingsDocument,
  TestReaderSettingsDocument,
  TestToggleDiscussionReactionDocument,
  TestUpdateSettingsDocument,
} from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;

beforeAll(async () => {
  server = await startWebhookServer();
});
afterAll(() => server?.stop());

const prisma = () => server.app.runtime.services.prisma;

/** A tenant with page reactions on (kinds `up`, `heart`, `wow`). */
async function tenantWithKinds(kinds: string[] = ["up", "heart", "wow"]): Promise<TestTenant> {
  const t = await createTestTenant(server);
  const r = await t.api.patch("/api/v1/settings", { pageReactionKinds: kinds });
  expect(r.status).toBe(200);
  return t;
}

describe("settings pageReactionKinds", () => {
  it("defaults to [] (off), is patched and validated like reactionKinds, and is shown to readers", async () => {
    const t = await createTestTenant(server);
    const got = await t.api.get("/api/v1/settings");
    expect(got.body.pageReactionKinds).toEqual([]);
    expect(got.body.reactionKinds).toEqual(["like", "love", "laugh", "wow", "sad", "angry"]);

    for (const [value, path] of [
      [["Like"], "pageReactionKinds[0]"],
      [["up", "up"], "pageReactionKinds"],
      [Array.from({ length: 33 }, (_, i) => `k${i}`), "pageReactionKinds"],
    ] as const) {
      const bad = await t.api.patch("/api/v1/settings", { pageReactionKinds: value });
      expect([bad.status, bad.body.code]).toEqual([422, "validation_failed"]);
      expect(bad.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    const set = await t.api.patch("/api/v1/settings", { pageReactionKinds: ["up", "heart"] });
    expect([set.status, set.body.pageReactionKinds]).toEqual([200, ["up", "heart"]]);
    // PATCH merges: another field leaves it alone
    expect((await t.api.patch("/api/v1/settings", { maxBodyLength: 500 })).body.pageReactionKinds).toEqual(["up", "heart"]);

    // GraphQL: settings and the reader-facing readerSettings (publishable key)
    const g = await t.api.gql(TestGetSettingsDocument);
    expect(g.data?.settings.pageReactionKinds).toEqual(["up", "heart"]);
    const u = await t.api.gql(TestUpdateSettingsDocument, { input: { pageReactionKinds: [] } });
    expect(u.data?.updateSettings.pageReactionKinds).toEqual([]);
    const bad = await t.api.gql(TestUpdateSettingsDocument, { input: { pageReactionKinds: ["a b"] } });
    expect(bad.errors?.[0]?.extensions?.code).toBe("validation_failed");
    await t.api.patch("/api/v1/settings", { pageReactionKinds: ["wow"], allowedOrigins: ["https://site.example"] });
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const page = client(server.url, { key: pk, headers: { origin: "https://site.example" } });
    const seen = await page.gql(TestReaderSettingsDocument);
    expect(seen.errors).toBeUndefined();
    expect(seen.data?.readerSettings.pageReactionKinds).toEqual(["wow"]);
  });
});

describe("POST /api/v1/discussions/{id}/reactions", () => {
  it("answers 409 page_reactions_disabled while no kinds are set, 401 without identity, 422 for another kind", async () => {
    const t = await createTestTenant(server);
    const ann = await t.reader("ann");
    const off = await ann.post("/api/v1/discussions/pr-off/reactions", { kind: "like" });
    expect([off.status, off.body.code]).toEqual([409, "page_reactions_disabled"]);
    expect(off.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    // nothing was created by the refusal
    expect((await t.api.get("/api/v1/discussions/pr-off")).status).toBe(404);

    await t.api.patch("/api/v1/settings", { pageReactionKinds: ["up"] });
    const anon = await t.api.post("/api/v1/discussions/pr-off/reactions", { kind: "up" });
    expect([anon.status, anon.body.code]).toEqual([401, "invalid_identity"]);
    const other = await ann.post("/api/v1/discussions/pr-off/reactions", { kind: "like" });
    expect([other.status, other.body.errors]).toEqual([422, [{ path: "kind", message: "must be one of up" }]]);
    expect((await ann.post("/api/v1/discussions/pr-off/reactions", {})).body.errors).toEqual([{ path: "kind", message: "is required" }]);
    expect((await ann.post("/api/v1/discussions/pr-off/reactions", { kind: 1 })).status).toBe(422);
    expect((await ann.post("/api/v1/discussions/pr-off/reactions", { kind: "up", extra: 1 })).status).toBe(422);
    const badId = await ann.post("/api/v1/discussions/bad%20id/reactions", { kind: "up" });
    expect([badId.status, badId.body.code]).toEqual([400, "invalid_parameter"]);
  });

  it("toggles, keeps counts on the discussion, shows myReactions with an identity; a new discussion is created", async () => {
    const t = await tenantWithKinds();
    const ann = await t.reader("ann");
    const bob = await t.reader("bob");
    // the discussion does not exist yet: the first reaction creates it, as a first post does
    const on = await ann.post("/api/v1/discussions/pr-1/reactions", { kind: "up" });
    expect([on.status, on.body]).toEqual([200, { kind: "up", active: true, counts: { up: 1 } }]);
    expect((await bob.post("/api/v1/discussions/pr-1/reactions", { kind: "up" })).body.counts).toEqual({ up: 2 });
    expect((await bob.post("/api/v1/discussions/pr-1/reactions", { kind: "heart" })).body.counts).toEqual({ up: 2, heart: 1 });
    const off = await ann.post("/api/v1/discussions/pr-1/reactions", { kind: "up" });
    expect(off.body).toEqual({ kind: "up", active: false, counts: { up: 1, heart: 1 } });

    const plain = await t.api.get("/api/v1/discussions/pr-1");
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ id: "pr-1", state: "open", commentCount: 0, reactions: { up: 1, heart: 1 } });
    expect("myReactions" in plain.body).toBe(false);
    expect((await bob.get("/api/v1/discussions/pr-1")).body.myReactions).toEqual(["heart", "up"]);
    expect((await ann.get("/api/v1/discussions/pr-1")).body.myReactions).toEqual([]);
    const list = await bob.get("/api/v1/discussions");
    expect(list.body.items.find((d: { id: string }) => d.id === "pr-1")).toMatchObject({
      reactions: { up: 1, heart: 1 },
      myReactions: ["heart", "up"],
    });
    expect((await t.api.get("/api/v1/discussions")).body.items.every((d: object) => !("myReactions" in d))).toBe(true);
    // a discussion nobody reacted to has {} (and comment counts are untouched)
    await t.api.put("/api/v1/discussions/pr-quiet", { title: "Quiet" });
    expect((await t.api.get("/api/v1/discussions/pr-quiet")).body.reactions).toEqual({});

    // the rows: one per reader and kind
    const rows = await prisma().pageReaction.findMany({
      where: { tenantId: t.tenantId, discussionId: "pr-1" },
      orderBy: { readerId: "asc" },
    });
    expect(rows.map((r) => [r.readerId, r.kind])).toEqual(
      [
        ["bob", "up"],
        ["bob", "heart"],
      ].sort(),
    );

    // GraphQL: the mutation and Discussion.reactions / reactionMap / myReactions
    const g = await ann.gql(TestToggleDiscussionReactionDocument, { discussionId: "pr-1", input: { kind: "wow" } });
    expect(g.data?.toggleDiscussionReaction).toEqual({
      discussionId: "pr-1",
      readerId: "ann",
      kind: "wow",
      active: true,
      counts: [
        { kind: "heart", count: 1 },
        { kind: "up", count: 1 },
        { kind: "wow", count: 1 },
      ],
      countMap: { up: 1, heart: 1, wow: 1 },
      discussion: { id: "pr-1", reactionMap: { up: 1, heart: 1, wow: 1 }, myReactions: ["wow"] },
    });
    const q = await bob.gql(TestDiscussionReactionsDocument, { id: "pr-1" });
    expect(q.data?.discussion.myReactions).toEqual(["heart", "up"]);
    expect(q.data?.discussion.reactions).toEqual([
      { kind: "heart", count: 1 },
      { kind: "up", count: 1 },
      { kind: "wow", count: 1 },
    ]);
    expect((await t.api.gql(TestDiscussionReactionsDocument, { id: "pr-1" })).data?.discussion.myReactions).toBeNull();
    const bad = await ann.gql(TestToggleDiscussionReactionDocument, { discussionId: "pr-1", input: { kind: "nope" } });
    expect(bad.errors?.[0]?.extensions?.code).toBe("validation_failed");

    // a kind dropped from the settings keeps its counts but cannot be toggled
    await t.api.patch("/api/v1/settings", { pageReactionKinds: ["up"] });
    expect((await ann.post("/api/v1/discussions/pr-1/reactions", { kind: "wow" })).status).toBe(422);
    expect((await t.api.get("/api/v1/discussions/pr-1")).body.reactions).toEqual({ up: 1, heart: 1, wow: 1 });
  });

  it("through a publishable key from an allowed origin: toggles on a known discussion, 404 on an unknown one (it never creates one)", async () => {
    const t = await tenantWithKinds();
    await t.api.patch("/api/v1/settings", { allowedOrigins: ["https://site.example"] });
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const page = client(server.url, { key: pk, identity: await t.identity("ann"), headers: { origin: "https://site.example" } });
    const unknown = await page.post("/api/v1/discussions/pr-pk-new/reactions", { kind: "up" });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    expect((await t.api.get("/api/v1/discussions/pr-pk-new")).status).toBe(404);
    await t.api.put("/api/v1/discussions/pr-pk", { title: "Known" });
    expect((await page.post("/api/v1/discussions/pr-pk/reactions", { kind: "up" })).body).toEqual({
      kind: "up",
      active: true,
      counts: { up: 1 },
    });
    expect((await page.get("/api/v1/discussions/pr-pk")).body).toMatchObject({ reactions: { up: 1 }, myReactions: ["up"] });
  });

  it("refuses banned readers (403), locked and archived discussions (409), as comment reactions do", async () => {
    const t = await tenantWithKinds();
    const ann = await t.reader("ann");
    expect((await ann.post("/api/v1/discussions/pr-rules/reactions", { kind: "up" })).status).toBe(200);
    await t.api.post("/api/v1/discussions/pr-rules/lock");
    const locked = await ann.post("/api/v1/discussions/pr-rules/reactions", { kind: "up" });
    expect([locked.status, locked.body.code]).toEqual([409, "discussion_locked"]);
    await t.api.post("/api/v1/discussions/pr-rules/archive");
    const archived = await ann.post("/api/v1/discussions/pr-rules/reactions", { kind: "up" });
    expect([archived.status, archived.body.code]).toEqual([409, "discussion_archived"]);
    expect((await t.api.get("/api/v1/discussions/pr-rules")).body.reactions).toEqual({ up: 1 });

    const bob = await t.reader("bob");
    expect((await bob.post("/api/v1/discussions/pr-rules-2/comments", { body: "first" })).status).toBe(201);
    expect((await t.api.post("/api/v1/readers/bob/ban", { reason: "spam" })).status).toBe(200);
    const banned = await bob.post("/api/v1/discussions/pr-other/reactions", { kind: "up" });
    expect([banned.status, banned.body.code]).toEqual([403, "reader_banned"]);
    // the refusal created nothing
    expect((await t.api.get("/api/v1/discussions/pr-other")).status).toBe(404);
  });

  it("keeps exact counts with 40 readers at once and one reader toggling concurrently", async () => {
    const t = await tenantWithKinds();
    const readers0 = await Promise.all(Array.from({ length: 40 }, (_, i) => t.reader(`c${i}`)));
    // racing to create the discussion, too
    const results = await Promise.all(readers0.map((r) => r.post("/api/v1/discussions/pr-conc/reactions", { kind: "heart" })));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(results.map((r) => r.body.counts.heart).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const same = await t.reader("same");
    const toggles = await Promise.all(
      Array.from({ length: 9 }, () => same.post("/api/v1/discussions/pr-conc/reactions", { kind: "heart" })),
    );
    expect(toggles.filter((r) => r.body.active)).toHaveLength(5);
    const d = await prisma().discussion.findUniqueOrThrow({ where: { tenantId_id: { tenantId: t.tenantId, id: "pr-conc" } } });
    expect(d.reactionCounts).toEqual({ heart: 41 });
    expect(await prisma().pageReaction.count({ where: { tenantId: t.tenantId, discussionId: "pr-conc" } })).toBe(41);
    // every reaction names a reader the service holds (no foreign key keeps it: the function writes both)
    const readers = await prisma().reader.count({
      where: { tenantId: t.tenantId, id: { in: [...readers0.map((_, i) => `c${i}`), "same"] } },
    });
    expect(readers).toBe(41);
    const events = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, discussionId: "pr-conc" }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events).toHaveLength(49);
    expect(d.seq).toBe(49);
  });
});

describe("the reaction_toggled event", () => {
  it("goes to the stream for everyone and to webhooks with data.reaction {discussionId, commentId: null, readerId, kind, active, counts}", async () => {
    const t = await tenantWithKinds();
    const receiver = await startReceiver();
    await createVerifiedEndpoint(t, receiver, { events: ["reaction_toggled"] });
    await t.api.put("/api/v1/discussions/pr-ev", {});
    const es = openSse(`${server.url}/api/v1/stream/pr-ev`, { "x-api-key": t.apiKey });
    await es.waitFor((f) => f[0]?.event === "connected");
    const ann = await t.reader("ann");
    await ann.post("/api/v1/discussions/pr-ev/reactions", { kind: "wow" });
    const [frame] = await es.waitForEvents(1);
    expect(frame!.event).toBe("reaction_toggled");
    const reaction = { discussionId: "pr-ev", commentId: null, readerId: "ann", kind: "wow", active: true, counts: { wow: 1 } };
    expect(frame!.data).toMatchObject({ type: "reaction_toggled", discussionId: "pr-ev", data: { reaction } });
    expect(Object.keys(frame!.data.data.reaction)).toEqual(["discussionId", "commentId", "readerId", "kind", "active", "counts"]);
    es.close();
    await receiver.waitFor(() => receiver.deliveries().length >= 1, WAIT.timeout);
    const hook = receiver.deliveries()[0]!;
    expect(hook.headers["x-service-event"]).toBe("reaction_toggled");
    expect(hook.json.data).toEqual({ reaction });
    await receiver.close();
  });
});

describe("the GraphQL subscription", () => {
  it("types a page reaction's payload as DiscussionReactionEventData, and a discussion event carries its reactions", async () => {
    const t = await tenantWithKinds();
    await t.api.put("/api/v1/discussions/pr-sub", {});
    const c = createClient({ url: `${server.url}/graphql`, headers: { "x-api-key": t.apiKey }, retryAttempts: 0 });
    const got: any[] = [];
    const it = c.iterate({
      query: `subscription { discussionEvents(discussionId: "pr-sub") { __typename ... on StreamEvent { type payload {
        __typename
        ... on DiscussionReactionEventData { reaction { discussionId readerId kind active countMap } }
        ... on DiscussionEventData { discussion { id reactionMap } } } } } }`,
    });
    const loop = (async () => {
      for await (const r of it) got.push(r);
    })();
    await eventually(async () => got.length >= 1);
    await (await t.reader("ann")).post("/api/v1/discussions/pr-sub/reactions", { kind: "up" });
    await t.api.post("/api/v1/discussions/pr-sub/lock");
    await eventually(async () => got.length >= 3);
    expect(got.slice(1).map((r) => r.data.discussionEvents.payload)).toEqual([
      {
        __typename: "DiscussionReactionEventData",
        reaction: { discussionId: "pr-sub", readerId: "ann", kind: "up", active: true, countMap: { up: 1 } },
      },
      { __typename: "DiscussionEventData", discussion: { id: "pr-sub", reactionMap: { up: 1 } } },
    ]);
    await it.return?.();
    await loop;
    c.dispose();
  });
});

describe("a reader's export and erasure", () => {
  it("export lists their page reactions; erasure removes them and fixes the counts", async () => {
    const t = await tenantWithKinds();
    const manager = t.as({ key: (await keyWith(t, ["manage_readers"])).key });
    const ann = await t.reader("ann");
    const bob = await t.reader("bob");
    await ann.post("/api/v1/discussions/pr-x1/reactions", { kind: "up" });
    await ann.post("/api/v1/discussions/pr-x1/reactions", { kind: "heart" });
    await bob.post("/api/v1/discussions/pr-x1/reactions", { kind: "up" });
    // ann reacted on a page where she never commented, and commented where she did not react
    await ann.post("/api/v1/discussions/pr-x2/reactions", { kind: "wow" });
    await ann.post("/api/v1/discussions/pr-x3/comments", { body: "hello" });

    const x = await manager.get("/api/v1/readers/ann/export");
    expect(x.body.pageReactions).toEqual([
      { discussionId: "pr-x1", kind: "up", createdAt: expect.any(String) },
      { discussionId: "pr-x1", kind: "heart", createdAt: expect.any(String) },
      { discussionId: "pr-x2", kind: "wow", createdAt: expect.any(String) },
    ]);
    expect((await ann.get("/api/v1/me/export")).body.pageReactions).toHaveLength(3);

    expect((await manager.del("/api/v1/readers/ann")).status).toBe(204);
    expect((await t.api.get("/api/v1/discussions/pr-x1")).body.reactions).toEqual({ up: 1 });
    expect((await t.api.get("/api/v1/discussions/pr-x2")).body.reactions).toEqual({});
    expect(await prisma().pageReaction.count({ where: { tenantId: t.tenantId, readerId: "ann" } })).toBe(0);
    expect(await prisma().pageReaction.count({ where: { tenantId: t.tenantId, readerId: "bob" } })).toBe(1);
    // the log's copies no longer name her
    const toggles = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, type: "reaction_toggled" } });
    expect(toggles.length).toBeGreaterThan(0);
    expect(toggles.filter((e) => (e.payload as any).data.reaction.readerId === "ann")).toEqual([]);
    const audit = await eventually(async () => (await t.admin.get("/api/v1/audit?action=reader.erase")).body.items[0] ?? null);
    expect(audit.details).toMatchObject({ reactionsRemoved: 3 });
  });
});
