// Votes on comments (contract section 18): the setting, PUT /comments/{id}/vote and its refusals,
// the comment's score, upvotes, downvotes and myVote (REST and GraphQL), the reaction_toggled event on
// the stream and to webhooks, exact tallies under 200 concurrent voters, and sort=best / sort=score.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";
import { openSse } from "./support/sse.js";
import { createClient } from "graphql-sse";
import { TestVoteDocument, TestVotedCommentsDocument } from "./generated/operations.js";
import { loggedEvent } from "./support/event-log.js";

let server: TestServer;
let receiver: Receiver;
let n = 0;

beforeAll(async () => {
  server = await startWebhookServer();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

const prisma = () => server.app.runtime.services.prisma;

/** A tenant with votes set to `mode` and a discussion of its own. */
async function setup(mode: "off" | "up" | "updown" = "updown") {
  const t = await createTestTenant(server);
  if (mode !== "off") expect((await t.api.patch("/api/v1/settings", { votes: mode })).status).toBe(200);
  return { t, d: `votes-${++n}` };
}

async function post(t: TestTenant, d: string, sub = "author", body = "vote on me"): Promise<string> {
  const r = await (await t.reader(sub)).post(`/api/v1/discussions/${d}/comments`, { body });
  expect(r.status).toBe(201);
  return r.body.id;
}

/** The Wilson lower bound (z = 1.96) as docs/choices.md defines it, written out again to check the stored one. */
function wilson(up: number, n: number): number {
  if (up === 0) return 0;
  const z = 1.96;
  const p = up / n;
  return (p + (z * z) / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
}

describe("settings votes", () => {
  it('defaults to "off", is patched to up or updown, and refuses anything else (422)', async () => {
    const t = await createTestTenant(server);
    expect((await t.api.get("/api/v1/settings")).body.votes).toBe("off");
    expect((await t.api.patch("/api/v1/settings", { votes: "up" })).body.votes).toBe("up");
    const bad = await t.api.patch("/api/v1/settings", { votes: "sideways" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ path: "votes", message: expect.stringContaining("updown") }]);
    expect((await t.api.get("/api/v1/settings")).body.votes).toBe("up");
    // a vote's event says kind "vote": no reaction kind may
    const kinds = await t.api.patch("/api/v1/settings", { reactionKinds: ["like", "vote"] });
    expect([kinds.status, kinds.body.errors]).toEqual([422, [{ path: "reactionKinds[1]", message: expect.stringContaining("vote") }]]);
  });
});

describe("PUT /comments/{id}/vote", () => {
  it("records one vote per reader, answers the tallies, and carries them on the comment with myVote", async () => {
    const { t, d } = await setup("updown");
    const id = await post(t, d);
    const a = await t.reader("va");
    const b = await t.reader("vb");
    const up = await a.put(`/api/v1/comments/${id}/vote`, { value: 1 });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ value: 1, score: 1, upvotes: 1, downvotes: 0 });
    expect((await a.put(`/api/v1/comments/${id}/vote`, { value: 1 })).body).toEqual({ value: 1, score: 1, upvotes: 1, downvotes: 0 });
    expect((await b.put(`/api/v1/comments/${id}/vote`, { value: -1 })).body).toEqual({ value: -1, score: 0, upvotes: 1, downvotes: 1 });
    expect((await a.put(`/api/v1/comments/${id}/vote`, { value: -1 })).body).toEqual({ value: -1, score: -2, upvotes: 0, downvotes: 2 });
    expect((await b.put(`/api/v1/comments/${id}/vote`, { value: 0 })).body).toEqual({ value: 0, score: -1, upvotes: 0, downvotes: 1 });

    // the comment: tallies for everyone, myVote only with an identity
    const anon = await t.api.get(`/api/v1/comments/${id}`);
    expect(anon.body).toMatchObject({ score: -1, upvotes: 0, downvotes: 1 });
    expect(anon.body).not.toHaveProperty("myVote");
    expect((await a.get(`/api/v1/comments/${id}`)).body).toMatchObject({ score: -1, myVote: -1 });
    expect((await b.get(`/api/v1/comments/${id}`)).body).toMatchObject({ score: -1, myVote: 0 });
    const list = await a.get(`/api/v1/discussions/${d}/comments`);
    expect(list.body.items[0]).toMatchObject({ id, score: -1, upvotes: 0, downvotes: 1, myVote: -1 });

    const rows = await prisma().vote.findMany({ where: { commentId: id } });
    expect(rows.map((r) => [r.readerId, r.value])).toEqual([["va", -1]]);
    const row = await prisma().comment.findUnique({ where: { id } });
    expect([row?.upvotes, row?.downvotes, row?.score, row?.voteBest]).toEqual([0, 1, -1, 0]);

    // GraphQL: the mutation and the comment's fields
    const gql = await b.gql(TestVoteDocument, { commentId: id, input: { value: 1 } });
    expect(gql.data?.vote).toEqual({
      commentId: id,
      readerId: "vb",
      kind: "vote",
      value: 1,
      score: 0,
      upvotes: 1,
      downvotes: 1,
      comment: { id, score: 0, upvotes: 1, downvotes: 1, myVote: 1 },
    });
    const page = await t.api.gql(TestVotedCommentsDocument, { discussionId: d });
    expect(page.data?.comments.items[0]).toEqual({ id, score: 0, upvotes: 1, downvotes: 1, myVote: null });
  });

  it("emits reaction_toggled with kind vote on the stream and to webhooks, only when the vote changes", async () => {
    const { t, d } = await setup("updown");
    const id = await post(t, d);
    await createVerifiedEndpoint(t, receiver, { events: ["reaction_toggled"] });
    const sse = openSse(`${server.url}/api/v1/stream/${d}`, { "x-api-key": t.apiKey });
    await sse.waitFor((f) => f.length === 1);
    // and a GraphQL subscription, whose typed payload of a vote is VoteEventData
    const gql = createClient({ url: `${server.url}/graphql`, headers: { "x-api-key": t.apiKey }, retryAttempts: 0 });
    const payloads: any[] = [];
    const subscription = gql.iterate({
      query: `subscription ($d: String!) { discussionEvents(discussionId: $d) { __typename
        ... on StreamEvent { type payload { __typename ... on VoteEventData { vote { kind value score upvotes downvotes comment { id } } } } } } }`,
      variables: { d },
    });
    const collecting = (async () => {
      for await (const r of subscription) payloads.push(r.data?.discussionEvents);
    })();
    await vi.waitFor(() => expect(payloads).toHaveLength(1), { timeout: 10_000 });
    const a = await t.reader("ea");
    await a.put(`/api/v1/comments/${id}/vote`, { value: 1 });
    await a.put(`/api/v1/comments/${id}/vote`, { value: 1 }); // no change: no event
    await a.put(`/api/v1/comments/${id}/vote`, { value: 0 });
    const events = await sse.waitForEvents(2);
    sse.close();
    await vi.waitFor(() => expect(payloads).toHaveLength(3), { timeout: 10_000 });
    await subscription.return?.();
    await collecting;
    gql.dispose();
    expect(payloads.slice(1)).toEqual(
      [
        [1, 1],
        [0, 0],
      ].map(([value, score]) => ({
        __typename: "StreamEvent",
        type: "reaction_toggled",
        payload: {
          __typename: "VoteEventData",
          vote: { kind: "vote", value, score, upvotes: score, downvotes: 0, comment: { id } },
        },
      })),
    );
    const reaction = (value: number, score: number, upvotes: number) => ({
      commentId: id,
      readerId: "ea",
      kind: "vote",
      value,
      score,
      upvotes,
      downvotes: 0,
    });
    expect(events.map((e) => [e.event, e.data.data.reaction])).toEqual([
      ["reaction_toggled", reaction(1, 1, 1)],
      ["reaction_toggled", reaction(0, 0, 0)],
    ]);
    const mine = () => receiver.deliveries().filter((r) => r.json?.discussionId === d);
    await receiver.waitFor(() => mine().length === 2);
    expect(mine().map((r) => [r.event, r.json.data.reaction])).toEqual([
      ["reaction_toggled", reaction(1, 1, 1)],
      ["reaction_toggled", reaction(0, 0, 0)],
    ]);
    expect(await prisma().event.count({ where: { tenantId: t.tenantId, discussionId: d, type: "reaction_toggled" } })).toBe(2);
    // a comment event carries the tallies as REST shows them to a caller without an identity (no myVote)
    const edit = await (await t.reader("author")).patch(`/api/v1/comments/${id}`, { body: "edited" });
    expect(edit.body).toMatchObject({ score: 0, upvotes: 0, downvotes: 0 });
    expect(edit.body).not.toHaveProperty("myVote"); // a write's answer is exactly its event's comment
    expect((await (await t.reader("author")).get(`/api/v1/comments/${id}`)).body).toMatchObject({ myVote: 0 });
    const edited = await loggedEvent(prisma(), { where: { tenantId: t.tenantId, discussionId: d, type: "comment_edited" } });
    expect((edited?.payload as any).data.comment).toEqual(edit.body);
    expect((edited?.payload as any).data.comment).toEqual((await t.api.get(`/api/v1/comments/${id}`)).body);
  });

  it("refuses: votes off (409), -1 under up, a bad value and one's own comment (422), no identity (401)", async () => {
    const off = await setup("off");
    const offId = await post(off.t, off.d);
    const refused = await (await off.t.reader("x")).put(`/api/v1/comments/${offId}/vote`, { value: 1 });
    expect([refused.status, refused.body.code]).toEqual([409, "votes_disabled"]);

    const { t, d } = await setup("up");
    const id = await post(t, d);
    const a = await t.reader("ra");
    const down = await a.put(`/api/v1/comments/${id}/vote`, { value: -1 });
    expect([down.status, down.body.errors]).toEqual([422, [{ path: "value", message: expect.stringContaining('"up"') }]]);
    for (const value of [2, "1", 0.5, null]) {
      const bad = await a.put(`/api/v1/comments/${id}/vote`, { value });
      expect([bad.status, bad.body.code, bad.body.errors?.[0]?.path], JSON.stringify(value)).toEqual([422, "validation_failed", "value"]);
    }
    expect((await a.put(`/api/v1/comments/${id}/vote`, {})).body.errors).toEqual([{ path: "value", message: "is required" }]);
    const own = await (await t.reader("author")).put(`/api/v1/comments/${id}/vote`, { value: 1 });
    expect([own.status, own.body.errors]).toEqual([422, [{ path: "comment", message: expect.stringContaining("own") }]]);
    expect((await t.api.put(`/api/v1/comments/${id}/vote`, { value: 1 })).body.code).toBe("invalid_identity");
    expect((await a.put("/api/v1/comments/cmt_nope/vote", { value: 1 })).status).toBe(404);
    const { t: other } = await setup("updown");
    expect((await (await other.reader("ra")).put(`/api/v1/comments/${id}/vote`, { value: 1 })).status).toBe(404);
    expect(await prisma().vote.count({ where: { commentId: id } })).toBe(0);
  });

  it("answers a repeat under the same Idempotency-Key from the first, without voting twice", async () => {
    const { t, d } = await setup("updown");
    const id = await post(t, d);
    const a = await t.reader("ik");
    const headers = { "Idempotency-Key": `vote-${id}` };
    const first = await a.put(`/api/v1/comments/${id}/vote`, { value: 1 }, { headers });
    await (await t.reader("other")).put(`/api/v1/comments/${id}/vote`, { value: 1 });
    const again = await a.put(`/api/v1/comments/${id}/vote`, { value: 1 }, { headers });
    expect([again.status, again.headers.get("idempotent-replayed"), again.body]).toEqual([200, "true", first.body]);
    expect(first.body).toEqual({ value: 1, score: 1, upvotes: 1, downvotes: 0 });
    const other = await a.put(`/api/v1/comments/${id}/vote`, { value: -1 }, { headers });
    expect([other.status, other.body.code]).toEqual([422, "idempotency_key_reused"]);
    expect(await prisma().event.count({ where: { tenantId: t.tenantId, discussionId: d, type: "reaction_toggled" } })).toBe(2);
  });

  it("refuses deleted comments and locked or archived discussions (409)", async () => {
    const { t, d } = await setup("updown");
    const id = await post(t, d);
    const gone = await post(t, d);
    await (await t.reader("author")).del(`/api/v1/comments/${gone}`);
    const a = await t.reader("rl");
    const tombstone = await a.put(`/api/v1/comments/${gone}/vote`, { value: 1 });
    expect([tombstone.status, tombstone.body.code]).toEqual([409, "comment_not_approved"]);
    await t.api.post(`/api/v1/discussions/${d}/lock`);
    const locked = await a.put(`/api/v1/comments/${id}/vote`, { value: 1 });
    expect([locked.status, locked.body.code]).toEqual([409, "discussion_locked"]);
    await t.api.post(`/api/v1/discussions/${d}/archive`);
    const archived = await a.put(`/api/v1/comments/${id}/vote`, { value: 1 });
    expect([archived.status, archived.body.code]).toEqual([409, "discussion_archived"]);
  });
});

describe("concurrency", () => {
  it("keeps exact tallies with 200 readers voting at once on one comment", async () => {
    const { t, d } = await setup("updown");
    const id = await post(t, d);
    const readers = await Promise.all(Array.from({ length: 200 }, (_, i) => t.reader(`c${i}`)));
    // readers 0..139 up, 140..199 down; then 20 of the up-voters change to down and 10 take theirs back, at once
    const first = await Promise.all(readers.map((r, i) => r.put(`/api/v1/comments/${id}/vote`, { value: i < 140 ? 1 : -1 })));
    expect(first.map((r) => r.status)).toEqual(first.map(() => 200));
    // each answer is the tally right after that vote: every count from 1 to 200 appears exactly once
    expect(first.map((r) => r.body.upvotes + r.body.downvotes).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const second = await Promise.all([
      ...readers.slice(0, 20).map((r) => r.put(`/api/v1/comments/${id}/vote`, { value: -1 })),
      ...readers.slice(20, 30).map((r) => r.put(`/api/v1/comments/${id}/vote`, { value: 0 })),
    ]);
    expect(second.map((r) => r.status)).toEqual(second.map(() => 200));

    const row = await prisma().comment.findUnique({ where: { id } });
    const votes = await prisma().vote.groupBy({ by: ["value"], where: { commentId: id }, _count: true });
    const count = (v: number) => votes.find((x) => x.value === v)?._count ?? 0;
    expect([count(1), count(-1)]).toEqual([110, 80]);
    expect([row?.upvotes, row?.downvotes, row?.score]).toEqual([110, 80, 30]);
    expect(row?.voteBest).toBeCloseTo(wilson(110, 190), 12);
    expect((await t.api.get(`/api/v1/comments/${id}`)).body).toMatchObject({ score: 30, upvotes: 110, downvotes: 80 });
    expect(await prisma().event.count({ where: { tenantId: t.tenantId, discussionId: d, type: "reaction_toggled" } })).toBe(230);
  });
});

describe("sort=best and sort=score", () => {
  it("order by the Wilson lower bound and by score, ties newest first, pinned first, page by page", async () => {
    const { t, d } = await setup("updown");
    // tallies per comment (up, down), posted in this order (so later = newer)
    const plan: [string, number, number][] = [
      ["a", 0, 0],
      ["b", 1, 0],
      ["c", 10, 2],
      ["d", 3, 0],
      ["e", 0, 2],
      ["f", 6, 1],
      ["g", 1, 0],
      ["h", 0, 0],
    ];
    const ids: Record<string, string> = {};
    const author = await t.reader("author");
    /** each comment's createdAt and id: the tie-breakers (two posts may share a millisecond) */
    const newness: Record<string, [number, string]> = {};
    for (const [name] of plan) {
      const r = await author.post(`/api/v1/discussions/${d}/comments`, { body: name });
      ids[name] = r.body.id;
      newness[name] = [Date.parse(r.body.createdAt), r.body.id];
    }
    const newer = (x: string, y: string) => {
      const [tx, ix] = newness[x]!;
      const [ty, iy] = newness[y]!;
      return ty - tx || (iy < ix ? -1 : iy > ix ? 1 : 0);
    };
    const voters = await Promise.all(Array.from({ length: 12 }, (_, i) => t.reader(`s${i}`)));
    for (const [name, up, down] of plan) {
      for (let i = 0; i < up + down; i++) {
        expect((await voters[i]!.put(`/api/v1/comments/${ids[name]}/vote`, { value: i < up ? 1 : -1 })).status).toBe(200);
      }
    }
    const order = (key: (p: [string, number, number]) => number) =>
      plan
        .map((p) => ({ name: p[0], key: key(p) }))
        .sort((x, y) => y.key - x.key || newer(x.name, y.name))
        .map((x) => x.name);
    const expected = {
      best: order(([, up, down]) => wilson(up, up + down)),
      score: order(([, up, down]) => up - down),
    };
    // the keys themselves (ties aside): more votes at the same share rank higher under best, not under score
    expect(expected.best.slice(0, 3)).toEqual(["c", "f", "d"]);
    expect(expected.score.slice(0, 3)).toEqual(["c", "f", "d"]);
    expect(expected.best.at(-1) === "e" || expected.best.at(-1) === "a").toBe(true);
    expect(expected.score.at(-1)).toBe("e");
    const names = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));

    for (const sort of ["best", "score"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = `sort=${sort}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await t.api.get(`/api/v1/discussions/${d}/comments?${q}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((c: { id: string }) => names[c.id]));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen, sort).toEqual(expected[sort]);
      // GraphQL: the same order
      const gql = await t.api.gql(TestVotedCommentsDocument, { discussionId: d, sort, limit: 20 });
      expect(gql.data?.comments.items.map((c) => names[c.id])).toEqual(expected[sort]);
    }

    // a pinned comment comes first whatever its votes; the rest keep their order
    await t.api.post(`/api/v1/comments/${ids.a}/pin`);
    const pinned = await t.api.get(`/api/v1/discussions/${d}/comments?sort=best&limit=2`);
    const rest = await t.api.get(
      `/api/v1/discussions/${d}/comments?sort=best&limit=20&cursor=${encodeURIComponent(pinned.body.nextCursor)}`,
    );
    expect([...pinned.body.items, ...rest.body.items].map((c: { id: string }) => names[c.id])).toEqual([
      "a",
      ...expected.best.filter((x) => x !== "a"),
    ]);
    // a cursor of one sort is refused by another
    const wrong = await t.api.get(`/api/v1/discussions/${d}/comments?sort=score&cursor=${encodeURIComponent(pinned.body.nextCursor)}`);
    expect(wrong.status).toBe(400);
  });

  it("pages of one walk each order by a count through its every part (above zero, zero, below; pinned or not), as one page does", async () => {
    const { t, d } = await setup("updown");
    // (up, down, likes, pinned): counts above, at and below zero, pinned comments among each
    const plan: [string, number, number, number, boolean][] = [
      ["a", 2, 0, 1, false],
      ["b", 0, 0, 0, true],
      ["c", 0, 1, 0, false],
      ["d", 1, 0, 2, true],
      ["e", 0, 0, 0, false],
      ["f", 0, 2, 1, false],
      ["g", 0, 1, 0, true],
      ["h", 3, 1, 0, false],
      ["i", 0, 0, 0, false],
    ];
    const author = await t.reader("author");
    const voters = await Promise.all(Array.from({ length: 4 }, (_, i) => t.reader(`p${i}`)));
    const ids: Record<string, string> = {};
    for (const [name] of plan) ids[name] = (await author.post(`/api/v1/discussions/${d}/comments`, { body: name })).body.id;
    for (const [name, up, down, likes, pin] of plan) {
      for (let i = 0; i < up + down; i++) {
        expect((await voters[i]!.put(`/api/v1/comments/${ids[name]}/vote`, { value: i < up ? 1 : -1 })).status).toBe(200);
      }
      for (let i = 0; i < likes; i++)
        expect((await voters[i]!.post(`/api/v1/comments/${ids[name]}/reactions`, { kind: "like" })).status).toBe(200);
      if (pin) expect((await t.api.post(`/api/v1/comments/${ids[name]}/pin`)).status).toBe(200);
    }
    const names = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));
    for (const sort of ["top", "best", "score"] as const) {
      const whole = await t.api.get(`/api/v1/discussions/${d}/comments?sort=${sort}&limit=50`);
      const all: string[] = whole.body.items.map((c: { id: string }) => names[c.id]);
      // pinned first; within each, the count's order (the part above zero, zero, below), ties newest first
      const key = (c: { reactions: Record<string, number>; score: number; upvotes: number; downvotes: number }) =>
        sort === "top"
          ? Object.values(c.reactions).reduce((x, y) => x + y, 0)
          : sort === "score"
            ? c.score
            : wilson(c.upvotes, c.upvotes + c.downvotes);
      const expected = [...whole.body.items]
        .map((c, i) => ({ name: names[c.id]!, pinned: c.pinned as boolean, key: key(c), newness: i }))
        .sort(
          (x, y) =>
            Number(y.pinned) - Number(x.pinned) ||
            y.key - x.key ||
            plan.findIndex((p) => p[0] === y.name) - plan.findIndex((p) => p[0] === x.name),
        )
        .map((x) => x.name);
      expect(all, sort).toEqual(expected);
      expect(all.slice(0, 3).sort(), sort).toEqual(["b", "d", "g"]);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await t.api.get(
          `/api/v1/discussions/${d}/comments?sort=${sort}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((c: { id: string }) => names[c.id]));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen, sort).toEqual(all);
    }
  });
});
