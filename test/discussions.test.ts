import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TestUpsertDiscussionDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  other = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe("discussions", () => {
  it("upserts: 201 on create, 200 on update, fields merged", async () => {
    const a = await t.api.put("/api/v1/discussions/article-1", { title: "Hello", url: "https://example.com/a" });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ id: "article-1", title: "Hello", url: "https://example.com/a", state: "open", commentCount: 0 });
    const b = await t.api.put("/api/v1/discussions/article-1", { title: "Hello again" });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ title: "Hello again", url: "https://example.com/a" });
    const g = await t.api.get("/api/v1/discussions/article-1");
    expect(g.status).toBe(200);
    expect(g.body.counts).toEqual({ comments: 0 });
    expect(g.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("rejects bad ids (400) and bad fields (422, all listed)", async () => {
    const bad = await t.api.put("/api/v1/discussions/has%20space", { title: "x" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_parameter");
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    const invalid = await t.api.put("/api/v1/discussions/ok-id", { title: 5, url: "not a url" });
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe("validation_failed");
    expect(invalid.body.errors.map((e: any) => e.path)).toContain("title");
  });

  it("refuses a title with line breaks or other control characters on create and on update (422 naming title)", async () => {
    const bad = [
      "Hello\r\nBcc: eve@evil.example",
      "Hello\n",
      "\rHello",
      "Hel\tlo",
      "Hello\u0000",
      "Hello\u007f",
      "Hello\u0085",
      "Hello\u2028",
    ];
    for (const title of bad) {
      const created = await t.api.put("/api/v1/discussions/title-new", { title });
      expect(created.status, JSON.stringify(title)).toBe(422);
      expect(created.body.errors).toEqual([{ path: "title", message: "must not contain line breaks or other control characters" }]);
    }
    expect((await t.api.get("/api/v1/discussions/title-new")).status).toBe(404);
    expect((await t.api.put("/api/v1/discussions/title-old", { title: "Fine – “quoted” ünïcode" })).status).toBe(201);
    for (const title of bad) {
      const updated = await t.api.put("/api/v1/discussions/title-old", { title });
      expect(updated.status, JSON.stringify(title)).toBe(422);
      expect(updated.body.errors.map((e: any) => e.path)).toEqual(["title"]);
    }
    const gql = await t.api.gql(TestUpsertDiscussionDocument, { id: "title-old", input: { title: "Hello\r\nBcc: eve@evil.example" } });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "validation_failed", errors: [{ path: "title" }] });
    expect((await t.api.get("/api/v1/discussions/title-old")).body.title).toBe("Fine – “quoted” ünïcode");
  });

  it("accepts ids of up to 128 chars; longer ones are a 400 problem, however long", async () => {
    expect((await t.api.put(`/api/v1/discussions/${"a".repeat(128)}`, {})).status).toBe(201);
    const over = await t.api.put(`/api/v1/discussions/${"a".repeat(129)}`, {});
    expect(over).toMatchObject({ status: 400, body: { code: "invalid_parameter" } });
    const huge = await t.api.get(`/api/v1/discussions/${"a".repeat(5000)}`);
    expect(huge.status).toBe(400);
    expect(huge.headers.get("content-type")).toContain("application/problem+json");
  });

  it("lists with a cursor, newest first, stable across pages", async () => {
    for (let i = 0; i < 5; i++) await t.api.put(`/api/v1/discussions/list-${i}`, {});
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await t.api.get(`/api/v1/discussions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.items.map((d: any) => d.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => id.startsWith("list-"))).toEqual(["list-4", "list-3", "list-2", "list-1", "list-0"]);
    expect((await t.api.get("/api/v1/discussions?limit=101")).status).toBe(400);
    expect((await t.api.get("/api/v1/discussions?cursor=garbage")).status).toBe(400);
  });

  it("lock / unlock / archive with moderate_content, and events in seq order", async () => {
    await t.api.put("/api/v1/discussions/mod-1", {});
    const locked = await t.api.post("/api/v1/discussions/mod-1/lock");
    expect(locked.status).toBe(200);
    expect(locked.body.state).toBe("locked");
    expect((await t.api.post("/api/v1/discussions/mod-1/unlock")).body.state).toBe("open");
    expect((await t.api.post("/api/v1/discussions/mod-1/archive")).body.state).toBe("archived");
    const again = await t.api.post("/api/v1/discussions/mod-1/unlock");
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("discussion_archived");
    const events = await loggedEvents(server.app.runtime.services.prisma, {
      where: { tenantId: t.tenantId, discussionId: "mod-1" },
      orderBy: { seq: "asc" },
    });
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, "discussion_locked"],
      [2, "discussion_unlocked"],
      [3, "discussion_archived"],
    ]);
    const env = events[0]!.payload as any;
    expect(env).toMatchObject({ seq: 1, type: "discussion_locked", tenantId: t.tenantId, discussionId: "mod-1" });
    expect(env.data.discussion).toMatchObject({ id: "mod-1", state: "locked" });
  });

  it("is invisible across tenants (404, never 403)", async () => {
    await t.api.put("/api/v1/discussions/private-1", { title: "mine" });
    expect((await other.api.get("/api/v1/discussions/private-1")).status).toBe(404);
    expect((await other.api.post("/api/v1/discussions/private-1/lock")).status).toBe(404);
    const list = await other.api.get("/api/v1/discussions?limit=100");
    expect(list.body.items.map((d: any) => d.id)).not.toContain("private-1");
  });

  it("serves the same operation over GraphQL with extensions.code", async () => {
    const ok = await t.api.gql(TestUpsertDiscussionDocument, { id: "gql-1", input: { title: "G" } });
    expect(ok.data?.upsertDiscussion).toMatchObject({ created: true, discussion: { id: "gql-1", title: "G", state: "open" } });
    const anon = await t.as({}).gql(TestUpsertDiscussionDocument, { id: "gql-2" });
    expect(anon.errors?.[0]?.extensions?.code).toBe("unauthenticated");
  });

  // pages render the url as a link: the rule avatarUrl follows (src/lib/http-url.ts)
  const NOT_HTTP = [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "ftp://example.com/a",
    "//example.com/a",
    "https://example.com/\u0000a",
    `https://example.com/${"a".repeat(2048)}`,
  ];

  it("takes only http(s) urls: anything else is a 422 validation_failed problem naming `url`, and nothing is stored", async () => {
    for (const url of ["https://example.com/a?b=c#d", "http://localhost:8080/x"]) {
      const ok = await t.api.put("/api/v1/discussions/url-ok", { url });
      expect([200, 201], url).toContain(ok.status);
      expect(ok.body.url).toBe(url);
    }
    for (const url of NOT_HTTP) {
      for (const id of ["url-ok", "url-new"]) {
        const r = await t.api.put(`/api/v1/discussions/${id}`, { title: "t", url });
        expect(r.status, url).toBe(422);
        expect(r.headers.get("content-type")).toContain("application/problem+json");
        expect(r.body).toMatchObject({
          code: "validation_failed",
          errors: [{ path: "url", message: "must be an http(s) URL of at most 2048 chars" }],
        });
      }
    }
    expect((await t.api.get("/api/v1/discussions/url-ok")).body.url).toBe("http://localhost:8080/x");
    expect((await t.api.get("/api/v1/discussions/url-new")).status).toBe(404);
  });

  it("takes only http(s) urls over GraphQL too (upsertDiscussion: validation_failed)", async () => {
    for (const url of NOT_HTTP) {
      const r = await t.api.gql(TestUpsertDiscussionDocument, { id: "gql-url", input: { url } });
      expect(r.data?.upsertDiscussion ?? null, url).toBeNull();
      expect(r.errors?.[0]?.extensions?.code, url).toBe("validation_failed");
    }
    const ok = await t.api.gql(TestUpsertDiscussionDocument, { id: "gql-url", input: { url: "https://example.com/ok" } });
    expect(ok.data?.upsertDiscussion?.created).toBe(true);
  });
});
