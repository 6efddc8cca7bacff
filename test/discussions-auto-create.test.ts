// Discussions a page brings into being (settings discussions.autoCreate, docs/embed.md): a reader's
// first comment through a publishable key, from one of the tenant's allowedOrigins, creates the
// discussion with the page's URL (on that origin) and title; at most discussions.autoCreatePerMinute
// per origin; without an allowed Origin, with the setting off, or with a page of another origin it
// creates nothing and says why. Over REST and GraphQL, as a browser's fetch sends them (Origin).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";

const SITE = "https://blog.example";
let server: TestServer;
let t: TestTenant;
let pk: string;
let identity: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [SITE] })).status).toBe(200);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key;
  identity = await t.identity("ann", { name: "Ann", ttlSeconds: 3600 });
});
afterAll(() => server?.stop());

/** The reader's browser on `origin` (none: a caller that sends no Origin). */
const browser = (origin: string | null = SITE) => client(server.url, { key: pk, identity, headers: origin ? { origin } : {} });
const discussion = (id: string) => t.api.get(`/api/v1/discussions/${id}`);

describe("settings discussions.autoCreate", () => {
  it("is on by default, with 30 a minute per origin", async () => {
    const s = await t.api.get("/api/v1/settings");
    expect(s.body.discussions).toEqual({ autoCreate: true, autoCreatePerMinute: 30 });
    const gql = await t.api.post("/graphql", { query: "{ settings { discussions { autoCreate autoCreatePerMinute } } }" });
    expect(gql.body.data.settings.discussions).toEqual({ autoCreate: true, autoCreatePerMinute: 30 });
    for (const [discussions, path] of [
      [{ autoCreate: "yes" }, "discussions.autoCreate"],
      [{ autoCreatePerMinute: 0 }, "discussions.autoCreatePerMinute"],
      [{ autoCreatePerMinute: 10_001 }, "discussions.autoCreatePerMinute"],
    ] as const) {
      const bad = await t.api.patch("/api/v1/settings", { discussions });
      expect(bad.status, JSON.stringify(discussions)).toBe(422);
      expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    }
  });

  it("creates the discussion with the page's URL and title at the first comment from an allowed origin", async () => {
    const posted = await browser().post("/api/v1/discussions/first-post/comments", {
      body: "First!",
      discussion: { url: `${SITE}/2026/first-post?ref=x`, title: "My first post" },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    const d = await discussion("first-post");
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: "first-post", title: "My first post", url: `${SITE}/2026/first-post?ref=x`, commentCount: 1 });
    // a later page's words do not rename it
    const again = await browser().post("/api/v1/discussions/first-post/comments", {
      body: "Second",
      discussion: { url: `${SITE}/elsewhere`, title: "Renamed?" },
    });
    expect(again.status).toBe(201);
    expect((await discussion("first-post")).body).toMatchObject({ title: "My first post", url: `${SITE}/2026/first-post?ref=x` });
    // without page details it is created all the same, untitled
    expect((await browser().post("/api/v1/discussions/bare-post/comments", { body: "Hi" })).status).toBe(201);
    expect((await discussion("bare-post")).body).toMatchObject({ title: null, url: null });
  });

  it("creates one over GraphQL the same way", async () => {
    const r = await browser().post("/graphql", {
      query: `mutation($input: PostCommentInput!) { postComment(discussionId: "gql-post", input: $input) { body } }`,
      variables: { input: { body: "Via GraphQL", discussion: { url: `${SITE}/gql`, title: "GraphQL" } } },
    });
    expect(r.body.errors).toBeUndefined();
    expect((await discussion("gql-post")).body).toMatchObject({ title: "GraphQL", url: `${SITE}/gql` });
  });

  it("creates nothing without an allowed Origin, for a page of another origin, or for a body it refuses", async () => {
    const none = await browser(null).post("/api/v1/discussions/no-origin/comments", { body: "x", discussion: { url: `${SITE}/x` } });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: "not_found", resource: "discussion" });
    expect(none.body.detail).toContain("allowedOrigins");
    const foreign = await browser().post("/api/v1/discussions/foreign/comments", {
      body: "x",
      discussion: { url: "https://evil.example/x" },
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual([
      { path: "discussion.url", message: `must be a page of ${SITE} (the page the comment comes from)` },
    ]);
    const notHttp = await browser().post("/api/v1/discussions/foreign/comments", { body: "x", discussion: { url: "javascript:alert(1)" } });
    expect(notHttp.status).toBe(422);
    const twoLines = await browser().post("/api/v1/discussions/foreign/comments", { body: "x", discussion: { title: "a\nb" } });
    expect(twoLines.status).toBe(422);
    expect(twoLines.body.errors[0].path).toBe("discussion.title");
    const empty = await browser().post("/api/v1/discussions/foreign/comments", { body: "  ", discussion: { url: `${SITE}/x` } });
    expect(empty.status).toBe(422);
    for (const id of ["no-origin", "foreign"]) expect((await discussion(id)).status).toBe(404);
  });

  it("is bounded per origin and minute (429 with Retry-After); existing discussions go on", async () => {
    const other = await createTestTenant(server);
    expect((await other.api.patch("/api/v1/settings", { allowedOrigins: [SITE], discussions: { autoCreatePerMinute: 2 } })).status).toBe(
      200,
    );
    const key = (await other.admin.post("/api/v1/publishable-keys", { label: "blog" })).body.key;
    const reader = client(server.url, { key, identity: await other.identity("bo"), headers: { origin: SITE } });
    for (const id of ["burst-1", "burst-2"])
      expect((await reader.post(`/api/v1/discussions/${id}/comments`, { body: "x" })).status).toBe(201);
    const third = await reader.post("/api/v1/discussions/burst-3/comments", { body: "x" });
    expect(third.status).toBe(429);
    expect(third.body.code).toBe("rate_limited");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await other.api.get("/api/v1/discussions/burst-3")).status).toBe(404);
    expect((await reader.post("/api/v1/discussions/burst-1/comments", { body: "still here" })).status).toBe(201);
  });

  it("off: a page's comment on a discussion the backend has not made is the 404 it was, saying so", async () => {
    expect((await t.api.patch("/api/v1/settings", { discussions: { autoCreate: false } })).status).toBe(200);
    try {
      const r = await browser().post("/api/v1/discussions/off-post/comments", { body: "x", discussion: { url: `${SITE}/off` } });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: "not_found", resource: "discussion" });
      expect(r.body.detail).toContain("autoCreate is off");
      expect((await discussion("off-post")).status).toBe(404);
    } finally {
      expect((await t.api.patch("/api/v1/settings", { discussions: { autoCreate: true } })).status).toBe(200);
    }
  });
});
