// The Atom feeds (contract section 19): a discussion's and the tenant's latest visible comments,
// read back by a real feed parser (@rowanmanning/feed-parser), with `?key=pk_…` (publishable keys
// only), ETag/304 and a public cache of 60 s.
import { parseFeed } from "@rowanmanning/feed-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("Atom feeds", () => {
  it("a discussion's feed and the tenant's recent one: entries newest first, permalinks, bodyHtml as html content", async () => {
    const t = await createTestTenant(server);
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "feeds" })).body.key as string;
    expect((await t.api.put("/api/v1/discussions/fd-1", { title: "Rivers & <lakes>", url: "https://news.example/rivers" })).status).toBe(
      201,
    );
    const ann = await t.reader("ann", { name: "Ann" });
    const first = (await ann.post("/api/v1/discussions/fd-1/comments", { body: "**Deep** water <script>x</script>" })).body.id;
    const second = (await ann.post("/api/v1/discussions/fd-1/comments", { body: "second" })).body.id;
    const elsewhere = (await ann.post("/api/v1/discussions/fd-2/comments", { body: "elsewhere" })).body.id;
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    await ann.post("/api/v1/discussions/fd-1/comments", { body: "held, not in a feed" });

    const res = await fetch(`${server.url}/api/v1/feeds/discussions/fd-1.atom?key=${pk}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/atom\+xml/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    const xml = await res.text();
    const feed = parseFeed(xml);
    expect(feed.meta.type).toBe("atom");
    expect(feed.title).toBe("Comments on Rivers & <lakes>");
    expect(feed.url).toBe("https://news.example/rivers");
    expect(feed.items.map((i) => i.url)).toEqual([
      `https://news.example/rivers#comment-${second}`,
      `https://news.example/rivers#comment-${first}`,
    ]);
    const entry = feed.items[1]!;
    // the html content is the stored bodyHtml as it is (the parser decodes entities once more as it reads it)
    expect(xml).toContain('<content type="html"><![CDATA[<p><strong>Deep</strong> water &lt;script&gt;x&lt;/script&gt;</p>]]></content>');
    expect(entry.content).toContain("<p><strong>Deep</strong> water");
    expect(entry.title).toBe("Ann on Rivers & <lakes>");
    expect(entry.authors.map((a) => a.name)).toEqual(["Ann"]);
    expect(entry.published).toBeInstanceOf(Date);
    expect(xml).not.toContain("<script>");

    // unchanged: 304 with the same ETag; a new comment changes it
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${server.url}/api/v1/feeds/discussions/fd-1.atom?key=${pk}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);

    const recent = parseFeed(await (await fetch(`${server.url}/api/v1/feeds/recent.atom?key=${pk}`)).text());
    expect(recent.title).toBe("Recent comments");
    expect(recent.items.map((i) => i.id)).toEqual([elsewhere, second, first].map((id) => expect.stringContaining(id)));
    // a comment of a discussion without a url has no page to link: its entry's id (a URN) stands in
    expect(recent.items[0]!.url).toBe(recent.items[0]!.id);
    expect(recent.items[0]!.id).toMatch(/^urn:engagement:/);

    // the secret key in its header works too
    expect((await fetch(`${server.url}/api/v1/feeds/recent.atom`, { headers: { "x-api-key": t.apiKey } })).status).toBe(200);
  });

  it("takes only a publishable key in the URL; an unknown discussion or key is a problem document", async () => {
    const t = await createTestTenant(server);
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "feeds" })).body.key as string;
    const cases: [string, number][] = [
      [`/api/v1/feeds/recent.atom?key=${t.apiKey}`, 400],
      ["/api/v1/feeds/recent.atom", 401],
      ["/api/v1/feeds/recent.atom?key=pk_unknown", 401],
      [`/api/v1/feeds/discussions/nope.atom?key=${pk}`, 404],
      [`/api/v1/feeds/discussions/bad%20id.atom?key=${pk}`, 404],
      [`/api/v1/feeds/discussions/fd-1.rss?key=${pk}`, 404],
    ];
    for (const [path, status] of cases) {
      const r = await fetch(`${server.url}${path}`);
      expect([path, r.status]).toEqual([path, status]);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
  });
});
