// The GraphQL API driven by the clients frontend teams use: Apollo Client and urql with
// their normalised caches, over documents typed by GraphQL Code Generator's client preset. A toggle
// updates the cached comment by itself (no update function, no manual patching), and the generated
// types hold no `any`.
import { readFile } from "node:fs/promises";
import { ApolloClient, HttpLink, InMemoryCache } from "@apollo/client";
import { Client as UrqlClient, fetchExchange } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { ClientCommentsDocument, ClientToggleReactionDocument, type ClientCommentsQuery } from "./generated/client/graphql.js";

let server: TestServer;
let t: TestTenant;
let pk: string;
let headers: Record<string, string>;
let commentId: string;
const discussionId = "clients-1";

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "frontend" })).body.key;
  // a page's credentials: the publishable key and the reader's assertion from the tenant's backend
  headers = { "x-api-key": pk, "x-service-identity": await t.identity("front", { name: "Front" }) };
  await t.api.put(`/api/v1/discussions/${discussionId}`, { title: "Clients" });
  const c = await t.as({ key: t.apiKey, identity: await t.identity("writer") }).post(`/api/v1/discussions/${discussionId}/comments`, {
    body: "react to me",
  });
  commentId = c.body.id;
});
afterAll(() => server?.stop());

type CommentNode = ClientCommentsQuery["comments"]["edges"][number]["node"];

describe("Apollo Client", () => {
  it("toggleReaction updates the normalised cache: a cache-only read shows the new counts and the reader's reaction", async () => {
    const client = new ApolloClient({ link: new HttpLink({ uri: `${server.url}/graphql`, headers }), cache: new InMemoryCache() });
    const first = await client.query({ query: ClientCommentsDocument, variables: { discussionId, first: 10 } });
    const before: CommentNode = first.data!.comments.edges[0]!.node;
    expect(before).toMatchObject({ id: commentId, reactions: [], viewerReactions: [] });

    const toggled = await client.mutate({ mutation: ClientToggleReactionDocument, variables: { commentId, kind: "love" } });
    expect(toggled.data?.toggleReaction.active).toBe(true);

    const cached = await client.query({ query: ClientCommentsDocument, variables: { discussionId, first: 10 }, fetchPolicy: "cache-only" });
    const after: CommentNode = cached.data!.comments.edges[0]!.node;
    expect(after.reactions).toEqual([{ __typename: "ReactionCount", kind: "love", count: 1 }]);
    expect(after.viewerReactions).toEqual(["love"]);
    expect((client.cache.extract() as Record<string, unknown>)[`Comment:${commentId}`]).toBeDefined();

    await client.mutate({ mutation: ClientToggleReactionDocument, variables: { commentId, kind: "love" } }); // back off
    client.stop();
  });
});

describe("urql with Graphcache", () => {
  it("toggleReaction updates the normalised cache with no updater", async () => {
    const client = new UrqlClient({
      url: `${server.url}/graphql`,
      exchanges: [cacheExchange({}), fetchExchange],
      fetchOptions: { headers },
    });
    const first = await client.query(ClientCommentsDocument, { discussionId, first: 10 }).toPromise();
    expect(first.error).toBeUndefined();
    expect(first.data!.comments.edges[0]!.node).toMatchObject({ id: commentId, reactions: [], viewerReactions: [] });

    const toggled = await client.mutation(ClientToggleReactionDocument, { commentId, kind: "wow" }).toPromise();
    expect(toggled.error).toBeUndefined();

    const cached = await client.query(ClientCommentsDocument, { discussionId, first: 10 }, { requestPolicy: "cache-only" }).toPromise();
    const node = cached.data!.comments.edges[0]!.node;
    expect(node.reactions.map((r) => [r.kind, r.count])).toEqual([["wow", 1]]);
    expect(node.viewerReactions).toEqual(["wow"]);
  });
});

describe("GraphQL Code Generator's client preset", () => {
  it("types every field of our documents: no `any` in the generated types", async () => {
    const types = await readFile(new URL("./generated/client/graphql.ts", import.meta.url), "utf8");
    expect(types).toContain("export type ClientCommentsQuery");
    expect(types.match(/\bany\b/g) ?? []).toEqual([]);
    // DateTime is a string, not any
    expect(types).toMatch(/createdAt: string/);
  });
});

// Type-level checks, compiled by `npm run typecheck`: the generated result types are exact.
type IsAny<T> = 0 extends 1 & T ? true : false;
const countIsNumber: IsAny<CommentNode["reactions"][number]["count"]> = false;
const viewerIsStrings: CommentNode["viewerReactions"] extends string[] ? true : false = true;
void countIsNumber;
void viewerIsStrings;
