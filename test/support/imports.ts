// Imports through the real server as a tenant's backend makes them: the file posted, the run polled
// until it ends.
import { expect } from "vitest";
import type { TestServer } from "./server.js";
import type { TestTenant } from "./fixtures.js";

/** Posts a file to `POST /api/v1/imports?format=…` (202 expected): the import's id. */
export async function postImport(
  server: TestServer,
  t: TestTenant,
  format: string,
  body: string | Uint8Array,
  query = "",
): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/imports?format=${format}${siteQuery(format, query)}`, {
    method: "POST",
    headers: { "x-api-key": t.apiKey, "content-type": "application/octet-stream" },
    body: typeof body === "string" ? body : new Blob([new Uint8Array(body)]),
  });
  const accepted = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(accepted)).toBe(202);
  return accepted.id;
}

/** The import once it no longer runs (its GET answer); throws after `ms`. */
export async function importFinished(t: TestTenant, id: string, ms = 60_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const r = await t.api.get(`/api/v1/imports/${id}`);
    expect(r.status).toBe(200);
    if (r.body.state !== "running") return r.body;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`import ${id} did not finish`);
}

/** The site's origin an isso import needs (docs/import.md), where a test's query does not give one. */
export const TEST_SITE = "https://radio-t.com";
export const siteQuery = (format: string, query = "") =>
  format === "isso" && !/(^|&)site=/.test(query) ? `${query}&site=${encodeURIComponent(TEST_SITE)}` : query;
