// GraphQL as clients expect it: Relay connections with first/after and pageInfo, global
// object identification, and the same error codes as REST for the same condition.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const gql = async (
  query: string,
  variables: Record<string, unknown> = {},
  creds: { key?: string; identity?: string } = { key: t.apiKey },
) => (await t.as(creds).raw("POST", "/graphql", { query, variables })).body;

describe("Relay connections", () => {
  it("page comments with first/after, edges with cursors and pageInfo, matching REST's pages", async () => {
    const id = "relay-1";
    const author = t.as({ key: t.apiKey, identity: await t.identity("relay") });
    for (const body of ["a", "b", "c", "d", "e"])
      expect((await author.post(`/api/v1/discussions/${id}/comments`, { body })).status).toBe(201);
    const q = `query ($d: String!, $after: String) {
      comments(discussionId: $d, sort: oldest, first: 2, after: $after) {
        edges { cursor node { id body } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      } }`;
    const bodies: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const r: any = await gql(q, { d: id, after });
      const c = r.data.comments;
      bodies.push(...c.edges.map((e: any) => e.node.body));
      expect(c.pageInfo.startCursor).toBe(c.edges[0].cursor);
      expect(c.pageInfo.endCursor).toBe(c.edges.at(-1).cursor);
      expect(c.pageInfo.hasPreviousPage).toBe(false);
      pages++;
      if (!c.pageInfo.hasNextPage) break;
      after = c.pageInfo.endCursor;
    }
    expect(bodies).toEqual(["a", "b", "c", "d", "e"]);
    expect(pages).toBe(3);
    // an edge's cursor resumes right after that edge
    const first = (await gql(q, { d: id, after: null })).data.comments.edges;
    const fromFirst = (await gql(q, { d: id, after: first[0].cursor })).data.comments.edges.map((e: any) => e.node.body);
    expect(fromFirst).toEqual(["b", "c"]);
    // REST answers the same pages from the same fields
    const rest = await t.api.get(`/api/v1/discussions/${id}/comments?sort=oldest&limit=2`);
    expect(rest.body.items.map((c: any) => c.body)).toEqual(["a", "b"]);
    expect(rest.body.nextCursor).toBe(first[1].cursor);
  });

  it("refuse backward paging and bad arguments with invalid_parameter, as REST does", async () => {
    const r = await gql(`{ discussions(last: 2) { edges { node { id } } } }`);
    expect(r.errors[0].extensions.code).toBe("invalid_parameter");
    const bad = await gql(`{ discussions(first: 1, after: "nope") { edges { node { id } } } }`);
    expect(bad.errors[0].extensions.code).toBe("invalid_parameter");
    expect(bad.errors[0].extensions.errors).toEqual([{ path: "after", message: expect.any(String) }]);
    const big = await gql(`{ discussions(first: 101) { edges { node { id } } } }`);
    expect(big.errors[0].extensions.code).toBe("invalid_parameter");
    expect(big.errors[0].extensions.errors[0].path).toBe("first");
    const rest = await t.api.get("/api/v1/discussions?cursor=nope");
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe("invalid_parameter");
  });

  it("cover every list: discussions, keys, publishable keys, webhooks, deliveries", async () => {
    const r = await gql(`{
      discussions(first: 1) { edges { node { id } } pageInfo { hasNextPage } }
      apiKeys(first: 1) { edges { node { id prefix } } pageInfo { hasNextPage } }
      publishableKeys(first: 1) { edges { node { id } } pageInfo { hasNextPage } }
      webhooks(first: 1) { edges { node { webhookId } } pageInfo { hasNextPage } }
    }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.apiKeys.edges).toHaveLength(1);
  });
});

describe("global object identification", () => {
  it("node(id:) fetches comments, discussions and keys by the ids both APIs use; others' or unknown ids are null", async () => {
    const d = "relay-node";
    const c = await t.as({ key: t.apiKey, identity: await t.identity("n") }).post(`/api/v1/discussions/${d}/comments`, { body: "hi" });
    const key = (await t.api.get("/api/v1/keys")).body.items[0].id;
    const r = await gql(
      `query ($c: ID!, $d: ID!, $k: ID!) {
        c: node(id: $c) { __typename id ... on Comment { body discussionId } }
        d: node(id: $d) { __typename id ... on Discussion { commentCount } }
        k: node(id: $k) { __typename id ... on ApiKey { prefix } }
        none: node(id: "cmt_nothing") { id }
        many: nodes(ids: [$c, $d]) { id }
      }`,
      { c: c.body.id, d, k: key },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.c).toEqual({ __typename: "Comment", id: c.body.id, body: "hi", discussionId: d });
    expect(r.data.d).toEqual({ __typename: "Discussion", id: d, commentCount: 1 });
    expect(r.data.k.__typename).toBe("ApiKey");
    expect(r.data.none).toBeNull();
    expect(r.data.many).toEqual([{ id: c.body.id }, { id: d }]);
    const other = await createTestTenant(server);
    const foreign = (await other.api.raw("POST", "/graphql", { query: `{ node(id: "${c.body.id}") { id } }` })).body;
    expect(foreign.data.node).toBeNull();
  });
});

describe("typed fields and mutations that return what they changed", () => {
  it("reactions are typed, viewerReactions are the asserting reader's, and toggleReaction returns the comment", async () => {
    const d = "relay-reactions";
    const ann = await t.identity("ann");
    const ben = await t.identity("ben");
    const c = await t.as({ key: t.apiKey, identity: ann }).post(`/api/v1/discussions/${d}/comments`, { body: "react" });
    const toggle = `mutation ($id: String!, $kind: String) { toggleReaction(commentId: $id, input: { kind: $kind }) {
      kind active counts { kind count } comment { id reactions { kind count } viewerReactions } } }`;
    await gql(toggle, { id: c.body.id, kind: "like" }, { key: t.apiKey, identity: ben });
    const r = await gql(toggle, { id: c.body.id, kind: "wow" }, { key: t.apiKey, identity: ben });
    expect(r.errors).toBeUndefined();
    expect(r.data.toggleReaction).toEqual({
      kind: "wow",
      active: true,
      counts: [
        { kind: "like", count: 1 },
        { kind: "wow", count: 1 },
      ],
      comment: {
        id: c.body.id,
        reactions: [
          { kind: "like", count: 1 },
          { kind: "wow", count: 1 },
        ],
        viewerReactions: ["like", "wow"],
      },
    });
    const list = `query ($d: String!) { comments(discussionId: $d, first: 10) { edges { node { id viewerReactions } } } }`;
    expect((await gql(list, { d }, { key: t.apiKey, identity: ann })).data.comments.edges[0].node.viewerReactions).toEqual([]);
    expect((await gql(list, { d }, { key: t.apiKey, identity: ben })).data.comments.edges[0].node.viewerReactions).toEqual(["like", "wow"]);
    expect((await gql(list, { d })).data.comments.edges[0].node.viewerReactions).toEqual([]);
    // REST keeps its contract shape from the same operation
    const rest = await t.as({ key: t.apiKey, identity: ben }).post(`/api/v1/comments/${c.body.id}/reactions`, { kind: "wow" });
    expect(rest.body).toEqual({ kind: "wow", active: false, counts: { like: 1 } });
    expect((await t.api.get(`/api/v1/comments/${c.body.id}`)).body.reactions).toEqual({ like: 1 });
  });

  it("a request without credentials refused as a whole is HTTP 401, as over REST; a partial one stays 200", async () => {
    const anon = await t.as({}).raw("POST", "/graphql", { query: "{ discussions(first: 1) { edges { node { id } } } }" });
    expect(anon.status).toBe(401);
    expect(anon.body.errors[0].extensions.code).toBe("unauthenticated");
    expect(anon.body.extensions?.http).toBeUndefined();
    const rest = await t.as({}).get("/api/v1/discussions");
    expect([rest.status, rest.body.code]).toEqual([401, "unauthenticated"]);
    const bad = await t.as({ key: `ek_${"0".repeat(64)}` }).raw("POST", "/graphql", { query: "{ discussions { edges { node { id } } } }" });
    expect(bad.status).toBe(401);
    const denied = await t.as({ key: await createKeyFor([]) }).raw("POST", "/graphql", { query: "{ settings { moderation } }" });
    expect([denied.status, denied.body.errors[0].extensions.code]).toEqual([200, "missing_capability"]);
  });
});

async function createKeyFor(capabilities: string[]): Promise<string> {
  return (await t.api.post("/api/v1/keys", { label: "k", capabilities })).body.key;
}
