// The indexable thread of a page (contract section 27): GET /embed/v1/discussions.html?url=<page>&key=pk_…
// answers the fragment of the discussion whose url is the page's (the same bytes as by its id), and for
// a page of one of the site's allowedOrigins that has none yet an empty thread for it (200, so a static
// build that includes it does not fail) whose element names the discussion its first comment creates;
// `engagement render --url` prints the same.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { client } from "./support/client.js";
import { discussionIdForKey, urlKey } from "../src/modules/discussions/url-key.js";

const SITE = "https://pages.example";
let server: TestServer;
let t: TestTenant;
let pk: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [SITE] })).status).toBe(200);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key;
});
afterAll(() => server?.stop());

const byUrl = async (url: string | null, query = `key=${pk}`) => {
  const res = await fetch(`${server.url}/embed/v1/discussions.html?${url === null ? "" : `url=${encodeURIComponent(url)}&`}${query}`);
  return { res, html: await res.text() };
};
const byId = async (id: string, query = `key=${pk}`) => {
  const res = await fetch(`${server.url}/embed/v1/discussions/${encodeURIComponent(id)}.html?${query}`);
  return { res, html: await res.text() };
};
const attr = (html: string, name: string) => new RegExp(`<engagement-thread[^>]* ${name}="([^"]*)"`).exec(html)?.[1] ?? null;

describe("GET /embed/v1/discussions.html?url=", () => {
  it("is the fragment of the page's discussion, byte for byte the one by its id", async () => {
    expect((await t.api.put("/api/v1/discussions/known", { title: "Known", url: `${SITE}/known` })).status).toBe(201);
    const ann = await t.reader("ann", { name: "Ann" });
    expect((await ann.post("/api/v1/discussions/known/comments", { body: "Known comment" })).status).toBe(201);
    const a = await byUrl("https://PAGES.example/known/#comments", `key=${pk}&sort=oldest&lang=de`);
    expect(a.res.status).toBe(200);
    expect(a.res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(a.res.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=300");
    expect(a.res.headers.get("link")).toBe(`<${SITE}/known>; rel="canonical"`);
    const b = await byId("known", `key=${pk}&sort=oldest&lang=de`);
    expect(a.html).toBe(b.html);
    expect(a.html).toContain("Known comment");
    expect(a.res.headers.get("etag")).toBe(b.res.headers.get("etag"));
    // without JavaScript, where to comment: the page itself, in the page's language
    expect(a.html).toContain(
      `<noscript><p><a href="${SITE}/known">Kommentieren Sie auf der Seite selbst, mit JavaScript</a></p></noscript>`,
    );
  });

  it("answers an empty thread for a page of the site that has no discussion yet, named as its first comment will make it", async () => {
    const page = `${SITE}/2026/new-post?ref=feed`;
    const first = await byUrl(page);
    expect(first.res.status).toBe(200);
    const id = discussionIdForKey(urlKey(page)!);
    expect(attr(first.html, "discussion-id")).toBe(id);
    expect(attr(first.html, "discussion-url")).toBe(page);
    expect(attr(first.html, "publishable-key")).toBe(pk);
    expect(first.html).toContain("No comments yet.");
    expect(first.html).toContain('"commentCount":0');
    expect(first.html).not.toContain("datePublished");
    // the same bytes each time (an ETag that holds), and If-None-Match answers 304
    const again = await byUrl(page);
    expect(again.html).toBe(first.html);
    const etag = first.res.headers.get("etag")!;
    const cached = await fetch(`${server.url}/embed/v1/discussions.html?url=${encodeURIComponent(page)}&key=${pk}`, {
      headers: { "if-none-match": etag },
    });
    expect(cached.status).toBe(304);
    // nothing was stored
    expect((await t.api.get(`/api/v1/discussions/${id}`)).status).toBe(404);

    // the page's first comment (the element posts to the id the fragment names) creates it with that url
    const reader = client(server.url, { key: pk, identity: await t.identity("bo", { name: "Bo" }), headers: { origin: SITE } });
    const posted = await reader.post(`/api/v1/discussions/${encodeURIComponent(id)}/comments`, {
      body: "First here",
      discussion: { url: page, title: "New post" },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    const after = await byUrl(`${SITE}/2026/new-post/?ref=feed#x`);
    expect(after.res.status).toBe(200);
    expect(attr(after.html, "discussion-id")).toBe(id);
    expect(after.html).toContain("First here");
    expect(after.res.headers.get("etag")).not.toBe(etag);
  });

  it("finds the discussion a page's first comment made from another address of it, by the id the element names it with", async () => {
    const page = `${SITE}/mirrored`;
    const id = discussionIdForKey(urlKey(page)!);
    expect((await t.api.put(`/api/v1/discussions/${encodeURIComponent(id)}`, { url: "https://mirror.example/mirrored" })).status).toBe(201);
    const r = await byUrl(page);
    expect(r.res.status).toBe(200);
    expect(attr(r.html, "discussion-id")).toBe(id);
    expect(attr(r.html, "discussion-url")).toBe("https://mirror.example/mirrored");
  });

  it("is 404 for a page of another site, 400 for a missing or bad url, and keeps the key rules", async () => {
    const elsewhere = await byUrl("https://elsewhere.example/post");
    expect(elsewhere.res.status).toBe(404);
    expect(JSON.parse(elsewhere.html).code).toBe("not_found");
    // a later page of a thread that has none is no page
    expect((await byUrl(`${SITE}/nothing-yet`, `key=${pk}&cursor=abc`)).res.status).toBe(404);
    for (const bad of [null, "", "/relative", "ftp://pages.example/x"]) {
      const r = await byUrl(bad);
      expect(r.res.status, String(bad)).toBe(400);
      expect(JSON.parse(r.html)).toMatchObject({ code: "invalid_parameter", errors: [{ path: "url" }] });
    }
    expect((await byUrl(`${SITE}/x`, `key=${pk}&id=known`)).res.status).toBe(400);
    expect((await byUrl(`${SITE}/x`, `key=${t.apiKey}`)).res.status).toBe(400);
    expect((await byUrl(`${SITE}/x`, "")).res.status).toBe(401);
  });
});

describe("engagement render --url", () => {
  const env = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET: TEST_ADMIN_SECRET };
    for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY"]) delete e[k];
    return e;
  };

  it("prints the fragment the route answers, for a known page and a new one", { timeout: 60_000 }, async () => {
    for (const page of [`${SITE}/known`, `${SITE}/never-commented`]) {
      const r = await runCliInProcess(["render", "--tenant", t.tenantId, "--url", page, "--key", pk, "--api-base", server.url], env());
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe((await byUrl(page)).html);
    }
    const other = await runCliInProcess(["render", "--tenant", t.tenantId, "--url", "https://elsewhere.example/a"], env());
    expect(other.code).toBe(1);
    const neither = await runCliInProcess(["render", "--tenant", t.tenantId], env());
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain("--discussion <id> or with --url");
    const both = await runCliInProcess(["render", "--tenant", t.tenantId, "--discussion", "known", "--url", `${SITE}/known`], env());
    expect(both.code).toBe(1);
  });
});
