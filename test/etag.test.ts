// A weak ETag sent back (W/"…", as a gzip-ing proxy passes the answer's ETag on) is a match on every
// route that answers 304: the fragment, the feeds, the REST table's cacheable answers (counts), the
// embed's scripts and the ALTCHA widget's files (src/http/etag.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

async function revalidate(path: string, headers: Record<string, string> = {}): Promise<[number, number, number]> {
  const first = await fetch(`${server.url}${path}`, { headers });
  await first.arrayBuffer();
  const etag = first.headers.get("etag");
  expect(etag, path).toMatch(/^"[^"]+"$/);
  const strong = await fetch(`${server.url}${path}`, { headers: { ...headers, "if-none-match": etag! } });
  const weak = await fetch(`${server.url}${path}`, { headers: { ...headers, "if-none-match": `"other", W/${etag!}` } });
  await Promise.all([strong.arrayBuffer(), weak.arrayBuffer()]);
  return [first.status, strong.status, weak.status];
}

describe("If-None-Match with a weak ETag", () => {
  it("answers 304 on every route with an ETag", async () => {
    const t = await createTestTenant(server);
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "etag" })).body.key as string;
    expect((await t.api.put("/api/v1/discussions/etag-1", { title: "Tags" })).status).toBe(201);
    const NOT_MODIFIED = [200, 304, 304];
    expect(await revalidate(`/embed/v1/discussions/etag-1.html?key=${pk}`)).toEqual(NOT_MODIFIED);
    expect(await revalidate(`/api/v1/feeds/discussions/etag-1.atom?key=${pk}`)).toEqual(NOT_MODIFIED);
    expect(await revalidate("/api/v1/discussions/counts?ids=etag-1", { "x-api-key": t.apiKey })).toEqual(NOT_MODIFIED);
    expect(await revalidate("/auth/v1/static/altcha/altcha.css")).toEqual(NOT_MODIFIED);
    const embed = await fetch(`${server.url}/embed/v1/count.js`);
    await embed.arrayBuffer();
    if (embed.status !== 503) expect(await revalidate("/embed/v1/count.js")).toEqual(NOT_MODIFIED);
  });
});
