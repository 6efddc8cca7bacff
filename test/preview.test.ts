// POST /api/v1/preview and GraphQL `preview` (contract section 18): a body rendered as a comment
// would show it, for any key (a publishable one from an allowed origin included), with the same
// limit and problems as a post, as the tenant's `formatting` settings say.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { client } from "./support/client.js";

const ORIGIN = "https://news.example";
const REL = "nofollow ugc noopener noreferrer";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

async function tenantWithPage(): Promise<{ t: TestTenant; browser: ReturnType<typeof client> }> {
  const t = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN] })).status).toBe(200);
  const pk = await t.admin.post("/api/v1/publishable-keys", { label: "site" });
  expect(pk.status).toBe(201);
  return { t, browser: client(server.url, { key: pk.body.key, headers: { origin: ORIGIN } }) };
}

describe("POST /api/v1/preview", () => {
  it("renders a body with a secret key and with a publishable key from an allowed origin, with or without an identity", async () => {
    const { t, browser } = await tenantWithPage();
    const body = "**Hi** <script>alert(1)</script> [site](https://x.example/) [bad](javascript:alert(1)) www.y.example";
    const expected = {
      bodyHtml: `<p><strong>Hi</strong> &lt;script&gt;alert(1)&lt;/script&gt; <a href="https://x.example/" rel="${REL}">site</a> [bad](javascript:alert(1)) <a href="http://www.y.example" rel="${REL}">www.y.example</a></p>`,
      links: 2,
    };
    for (const caller of [t.api, browser, client(server.url, { key: t.apiKey, identity: await t.identity("pia") })]) {
      const r = await caller.post("/api/v1/preview", { body });
      expect(r.status).toBe(200);
      expect(r.body).toEqual(expected);
    }
    expect((await browser.post("/api/v1/preview", { body }, { identity: await t.identity("pia") })).body).toEqual(expected);
    // GraphQL, as the REST route runs it
    const gql = await browser.raw("POST", "/graphql", {
      query: "query($b: String!) { preview(body: $b) { bodyHtml links } }",
      variables: { b: body },
    });
    expect(gql.body).toEqual({ data: { preview: expected } });
    // no key: 401
    expect((await client(server.url).post("/api/v1/preview", { body })).status).toBe(401);
  });

  it("refuses what a post refuses, with the same 422", async () => {
    const { t, browser } = await tenantWithPage();
    expect((await t.api.patch("/api/v1/settings", { maxBodyLength: 20 })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/d1", { title: "d" })).status).toBe(201);
    const author = t.as({ key: t.apiKey, identity: await t.identity("ann") });
    const bodies: unknown[] = [{ body: "x".repeat(21) }, { body: "   " }, {}, { body: 5 }, { body: "a\u0000b" }];
    for (const input of bodies) {
      const post = await author.post("/api/v1/discussions/d1/comments", input);
      expect([input, post.status]).toEqual([input, 422]);
      for (const caller of [t.api, browser]) {
        const preview = await caller.post("/api/v1/preview", input);
        expect([input, preview.status, preview.body.code, preview.body.errors]).toEqual([
          input,
          422,
          "validation_failed",
          post.body.errors,
        ]);
      }
    }
    // the limit counts characters (code points), as a post's does
    expect((await t.api.post("/api/v1/preview", { body: "😀".repeat(20) })).status).toBe(200);
    const unknown = await t.api.post("/api/v1/preview", { body: "x", parentId: "c" });
    expect([unknown.status, unknown.body.errors]).toEqual([422, [{ path: "parentId", message: "is not a known field" }]]);
  });

  it("renders as the tenant's formatting settings say: plain text, images", async () => {
    const { t, browser } = await tenantWithPage();
    expect((await t.api.get("/api/v1/settings")).body.formatting).toEqual({ markdown: true, images: false });
    const image = "![a](https://x.example/a.png)";
    expect((await browser.post("/api/v1/preview", { body: image })).body).toEqual({
      bodyHtml: `<p>!<a href="https://x.example/a.png" rel="${REL}">a</a></p>`,
      links: 1,
    });

    const withImages = await t.api.patch("/api/v1/settings", { formatting: { images: true } });
    expect(withImages.body.formatting).toEqual({ markdown: true, images: true });
    expect((await browser.post("/api/v1/preview", { body: image })).body).toEqual({
      bodyHtml: '<p><img src="https://x.example/a.png" alt="a" loading="lazy" referrerpolicy="no-referrer" /></p>',
      links: 0,
    });

    const plain = await t.api.patch("/api/v1/settings", { formatting: { markdown: false } });
    expect(plain.body.formatting).toEqual({ markdown: false, images: true });
    // a reader-facing client (the embed) reads them with its publishable key
    const reader = await browser.raw("POST", "/graphql", { query: "{ readerSettings { formatting { markdown images } } }" });
    expect(reader.body).toEqual({ data: { readerSettings: { formatting: { markdown: false, images: true } } } });
    expect((await browser.post("/api/v1/preview", { body: "**a** <b>b</b>\nhttps://x.example/" })).body).toEqual({
      bodyHtml: "<p>**a** &lt;b&gt;b&lt;/b&gt;<br />\nhttps://x.example/</p>",
      links: 0,
    });

    const bad = await t.api.patch("/api/v1/settings", { formatting: { markdown: "yes", colour: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["formatting.colour", "formatting.markdown"]);
  });
});
