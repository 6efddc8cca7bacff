// The embed's scripts as a page's browser fetches them (contract section 14): served to any origin,
// an ETag of their content, a 304 on revalidation, and within their gzip budget.
import { gzipSync } from "node:zlib";
import { expect } from "vitest";

export async function expectServedScript(serviceUrl: string, name: string, element: string, gzipBudget: number): Promise<void> {
  const res = await fetch(`${serviceUrl}/embed/v1/${name}`, { headers: { origin: "https://blog.example" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  expect(res.headers.get("cache-control")).toMatch(/public, max-age=\d+/);
  const etag = res.headers.get("etag");
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  const body = Buffer.from(await res.arrayBuffer());
  expect(body.toString()).toContain(element);
  expect(gzipSync(body).length).toBeLessThanOrEqual(gzipBudget);
  expect((await fetch(`${serviceUrl}/embed/v1/${name}`, { headers: { "if-none-match": etag! } })).status).toBe(304);
}
