// GET /api/v1/discussions/{id}/comments, the moderation queue (GET /api/v1/comments) and comment
// search (GET /api/v1/comments/search) answer their comments from `itemsJson` (each built once:
// src/modules/comment-answers) where it selected each member of the fragment CommentFields. The REST
// answer must stay what that fragment gave, member for member and in its order, less the two members
// a caller does not get when null (myVote, moderationReason): held here against /graphql's `items` for
// each kind of caller — a backend's key, a reader with their vote, a browser's key without
// moderate_content, a moderator listing pending comments with a rule's reason, a shadow-banned
// reader seeing their own comment, and a tombstone; the queue and search for a moderator.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startServer, type TestServer } from "./support/server.js";

let server: TestServer;
let t: TestTenant;

const FIELDS = `id discussionId parentId author { id name avatarUrl badge } body bodyHtml status pinned editedAt createdAt
  reactions: reactionMap replyCount score upvotes downvotes kind myVote moderationReason`;
const LIST = `query ($d: String!, $status: CommentListStatus) { comments(discussionId: $d, status: $status, limit: 50) { items { ${FIELDS} } nextCursor } }`;

/** What REST answered before itemsJson: the fragment's members, less myVote and moderationReason when null. */
function fromFragment(c: Record<string, unknown>): Record<string, unknown> {
  const { myVote, moderationReason, ...rest } = c;
  return { ...rest, ...(myVote === null ? {} : { myVote }), ...(moderationReason === null ? {} : { moderationReason }) };
}

type Caller = ReturnType<TestTenant["as"]>;

/** REST's answer and /graphql's items for the same caller, compared as JSON text (so in order too). */
async function expectSame(caller: Caller, discussion: string, status?: string) {
  const rest = await caller.get(`/api/v1/discussions/${discussion}/comments?limit=50${status ? `&status=${status}` : ""}`);
  expect(rest.status, JSON.stringify(rest.body)).toBe(200);
  const gql = await caller.post("/graphql", { query: LIST, variables: { d: discussion, ...(status ? { status } : {}) } });
  expect(gql.body.errors).toBeUndefined();
  const items = (gql.body.data.comments.items as Record<string, unknown>[]).map(fromFragment);
  expect(rest.body.items.length).toBeGreaterThan(0);
  expect(JSON.stringify(rest.body.items)).toBe(JSON.stringify(items));
  expect(rest.body.nextCursor).toBe(gql.body.data.comments.nextCursor);
  return rest.body.items as Record<string, unknown>[];
}

/** REST's answer of one comment (GET /api/v1/comments/{id}, from `answerJson`) against /graphql's `comment` selecting the fragment's members. */
async function expectOne(caller: Caller, id: string) {
  const rest = await caller.get(`/api/v1/comments/${id}`);
  expect(rest.status, JSON.stringify(rest.body)).toBe(200);
  const gql = await caller.post("/graphql", { query: `query ($id: String!) { comment(id: $id) { ${FIELDS} } }`, variables: { id } });
  expect(gql.body.errors).toBeUndefined();
  expect(JSON.stringify(rest.body)).toBe(JSON.stringify(fromFragment(gql.body.data.comment)));
  return rest.body as Record<string, unknown>;
}

/** A page REST answers (at `path`) against the root field `field` of /graphql selecting the fragment's members. */
async function expectPage(caller: Caller, path: string, field: string) {
  const rest = await caller.get(path, { headers: { "x-service-consistency": "primary" } });
  expect(rest.status, JSON.stringify(rest.body)).toBe(200);
  const gql = await caller.post("/graphql", { query: `{ page: ${field} { items { ${FIELDS} } nextCursor } }` });
  expect(gql.body.errors).toBeUndefined();
  expect(rest.body.items.length).toBeGreaterThan(0);
  expect(JSON.stringify(rest.body.items)).toBe(JSON.stringify(gql.body.data.page.items.map(fromFragment)));
  return rest.body.items as Record<string, unknown>[];
}

describe("REST's comment lists, built from itemsJson, and its comments, from answerJson", () => {
  beforeAll(async () => {
    server = await startServer();
    t = await createTestTenant(server);
    await t.api.patch("/api/v1/settings", { votes: "updown", safety: { suspectWords: ["cheap"] } });
    await t.api.put("/api/v1/discussions/same", { title: "The same page" });
  });
  afterAll(() => server?.stop());

  it("answers every caller what the fragment CommentFields gave, member for member and in order", async () => {
    const as = async (sub: string, key = t.apiKey) => t.as({ key, identity: await t.identity(sub, { name: sub.toUpperCase() }) });
    const ann = await as("ann");
    const bo = await as("bo");
    const first = await ann.post("/api/v1/discussions/same/comments", { body: "**First**, with [a link](https://example.com)" });
    const reply = await bo.post("/api/v1/discussions/same/comments", { body: "A reply", parentId: first.body.id });
    const gone = await bo.post("/api/v1/discussions/same/comments", { body: "Soon a tombstone" });
    await ann.post("/api/v1/discussions/same/comments", { body: "A reply to the tombstone", parentId: gone.body.id });
    expect((await t.api.del(`/api/v1/comments/${gone.body.id}`)).status).toBe(204);
    expect((await bo.put(`/api/v1/comments/${first.body.id}/vote`, { value: 1 })).status).toBe(200);
    expect((await ann.put(`/api/v1/comments/${reply.body.id}/vote`, { value: -1 })).status).toBe(200);
    await bo.post(`/api/v1/comments/${first.body.id}/reactions`, { kind: "like" });
    await ann.post("/api/v1/discussions/same/comments", { body: "Cheap watches here" }); // held: a suspect word

    // a backend's key: no myVote, no moderationReason on published comments
    const plain = await expectSame(t.api, "same");
    expect(plain.some((c) => "myVote" in c || "moderationReason" in c)).toBe(false);
    expect(plain.find((c) => c.id === gone.body.id)).toMatchObject({ status: "deleted", body: "" });
    // a reader: their vote on each comment (0 on their own)
    const voted = await expectSame(bo, "same");
    expect(voted.find((c) => c.id === first.body.id)).toMatchObject({ myVote: 1, upvotes: 1, reactions: { like: 1 } });
    expect(voted.find((c) => c.id === reply.body.id)).toMatchObject({ myVote: 0, downvotes: 1 });
    // a browser's key without moderate_content: the tombstone names nobody
    const browser = await as("cy", (await keyWith(t, [])).key);
    const shown = await expectSame(browser, "same");
    expect(shown.find((c) => c.id === gone.body.id)).toMatchObject({ author: { id: "", name: "" } });
    // a moderator's pending list: the rule's reason
    const pending = await expectSame(t.api, "same", "pending");
    expect(pending[0]).toMatchObject({ status: "pending", moderationReason: { source: "rule", rule: "suspectWords" } });

    // a shadow-banned reader sees their own comment as published; nobody else sees it
    const dee = await as("dee", (await keyWith(t, [])).key);
    expect((await dee.post("/api/v1/discussions/same/comments", { body: "Before the ban" })).status).toBe(201);
    expect((await t.api.post("/api/v1/readers/dee/ban", { shadow: true })).status).toBe(200);
    const hidden = await dee.post("/api/v1/discussions/same/comments", { body: "Only I see this" });
    const own = await expectSame(dee, "same");
    expect(own.find((c) => c.id === hidden.body.id)).toMatchObject({ status: "approved" });
    expect((await expectSame(browser, "same")).some((c) => c.id === hidden.body.id)).toBe(false);

    // one comment (answerJson) as the fragment gave it, to the same callers
    expect(await expectOne(bo, first.body.id)).toMatchObject({ myVote: 1 });
    expect(await expectOne(t.api, first.body.id)).not.toHaveProperty("myVote");
    expect(await expectOne(browser, gone.body.id)).toMatchObject({ status: "deleted", author: { id: "", name: "" } });
    expect(await expectOne(dee, hidden.body.id)).toMatchObject({ status: "approved" });
    expect(hidden.body).toEqual(await expectOne(dee, hidden.body.id).then(({ myVote: _, ...c }) => c));
  });

  it("answers the moderation queue and comment search as their fragment gave too", async () => {
    const queue = await expectPage(t.api, "/api/v1/comments?status=pending", "moderationQueue(status: pending, first: 50)");
    expect(queue[0]).toMatchObject({ status: "pending", moderationReason: { source: "rule" } });
    const found = await expectPage(t.api, "/api/v1/comments/search?q=reply", 'searchComments(q: "reply", limit: 50)');
    expect(found.length).toBe(2);
    const deleted = await expectPage(t.api, "/api/v1/comments/search?status=deleted", "searchComments(status: deleted, limit: 50)");
    expect(deleted[0]).toMatchObject({ status: "deleted" });
  });
});
