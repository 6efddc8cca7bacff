// Answers are compressed when the client accepts it (src/http/compression.ts): a large JSON, HTML
// or JavaScript answer comes as brotli or gzip, as Accept-Encoding prefers, and as it is without
// one; a small JSON answer (under 1 KiB) goes as it is; an event stream is never compressed, and its
// first event arrives at once. Raw node:http, so what travels is what is checked (fetch would
// decompress and ask for gzip itself).
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { COMPRESS_THRESHOLD_BYTES } from "../src/http/compression.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

function get(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

function send(method: string, path: string, body: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const decoded = (r: Raw): string => {
  const encoding = r.headers["content-encoding"];
  if (encoding === "br") return brotliDecompressSync(r.bytes).toString("utf8");
  if (encoding === "gzip") return gunzipSync(r.bytes).toString("utf8");
  return r.bytes.toString("utf8");
};

/** The first bytes of an event stream, then the connection is dropped. */
function firstBytesOf(path: string, headers: Record<string, string>, until: string): Promise<{ headers: Raw["headers"]; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString("utf8");
        if (text.includes(until)) {
          resolve({ headers: res.headers, text });
          req.destroy();
        }
      });
      res.on("end", () => resolve({ headers: res.headers, text }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`no ${until} within 5 s: the stream was held back`)));
    req.on("error", reject);
    req.end();
  });
}

describe("compression", () => {
  it("a large JSON answer is brotli or gzip as Accept-Encoding prefers, identity without one", async () => {
    const plain = await get("/api/v1/openapi.json");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(100_000);
    const br = await get("/api/v1/openapi.json", { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 5);
    expect(decoded(br)).toBe(plain.bytes.toString("utf8"));
    const gz = await get("/api/v1/openapi.json", { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(decoded(gz)).toBe(plain.bytes.toString("utf8"));
    expect((await get("/api/v1/openapi.json", { "accept-encoding": "identity" })).headers["content-encoding"]).toBeUndefined();
  });

  it("HTML and JavaScript too (the console's page and script, GraphiQL's page and bundle)", async () => {
    const page = await get("/console/", { "accept-encoding": "br, gzip" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const script = /<script[^>]+src="([^"]+\.js)"/.exec(decoded(page))?.[1];
    expect(script).toBeDefined();
    const js = await get(new URL(script!, `${server.url}/console/`).pathname, { "accept-encoding": "gzip" });
    expect([js.status, js.headers["content-type"], js.headers["content-encoding"]]).toEqual([
      200,
      expect.stringMatching(/javascript/),
      "gzip",
    ]);
    const graphiql = await get("/graphql", { accept: "text/html", "accept-encoding": "br" });
    expect(graphiql.headers["content-type"]).toMatch(/^text\/html/);
    const bundle = /<script src="([^"]+)"/.exec(decoded(graphiql))![1]!;
    const bundleBr = await get(bundle, { "accept-encoding": "br" });
    expect([bundleBr.status, bundleBr.headers["content-encoding"], bundleBr.headers["cache-control"]]).toEqual([
      200,
      "br",
      "public, max-age=31536000, immutable",
    ]);
    const bundlePlain = await get(bundle);
    expect(bundlePlain.headers["content-encoding"]).toBeUndefined();
    expect(decoded(bundleBr)).toBe(bundlePlain.bytes.toString("utf8"));
  });

  it("a small JSON answer goes as it is", async () => {
    expect((await t.api.put("/api/v1/discussions/small-1", { title: "Small" })).status).toBe(201);
    const small = await get("/api/v1/discussions/small-1", { "x-api-key": t.apiKey, "accept-encoding": "br, gzip" });
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(COMPRESS_THRESHOLD_BYTES);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(small.bytes.toString("utf8")).id).toBe("small-1");
  });

  it("a REST write's answer goes as it is, however long (one resource; the routes skip the hooks), and /graphql's is compressed", async () => {
    const body = "A long comment. ".repeat(150);
    const identity = await t.identity("long-writer");
    const posted = await send("POST", "/api/v1/discussions/long-1/comments", JSON.stringify({ body }), {
      "x-api-key": t.apiKey,
      "x-service-identity": identity,
      "accept-encoding": "br, gzip",
    });
    expect(posted.status).toBe(201);
    expect(posted.bytes.length).toBeGreaterThan(COMPRESS_THRESHOLD_BYTES);
    expect(posted.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(posted.bytes.toString("utf8")).body).toBe(body);
    const query = JSON.stringify({ query: `{ comments(discussionId: "long-1", first: 5) { edges { node { body } } } }` });
    const listed = await send("POST", "/graphql", query, { "x-api-key": t.apiKey, "accept-encoding": "br, gzip" });
    expect(listed.status).toBe(200);
    expect(listed.headers["content-encoding"]).toBe("br");
    expect(decoded(listed)).toContain("A long comment.");
  });

  it("an event stream is never compressed: the SSE stream and graphql-sse send their first event at once, as text", async () => {
    const sse = await firstBytesOf(
      "/api/v1/stream/small-1",
      { "x-api-key": t.apiKey, accept: "text/event-stream", "accept-encoding": "br, gzip" },
      "event: connected",
    );
    expect(sse.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(sse.headers["content-encoding"]).toBeUndefined();
    expect(sse.text).toContain("event: connected");
    const query = encodeURIComponent('subscription { discussionEvents(discussionId: "small-1") { __typename } }');
    const gql = await firstBytesOf(
      `/graphql?query=${query}`,
      { "x-api-key": t.apiKey, accept: "text/event-stream", "accept-encoding": "br, gzip" },
      "StreamConnected",
    );
    expect(gql.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect([undefined, "none"]).toContain(gql.headers["content-encoding"]); // yoga says "none" itself
    expect(gql.text).toContain("StreamConnected");
  });
});
