// GET /: a newcomer who opens the service's address is pointed at the console, the OpenAPI document,
// GraphQL (and GraphiQL where it is on: outside production, or with GRAPHIQL=1) and the health
// checks, as JSON for clients (the page of links a browser gets: test/browser/index-page.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";

let plain: TestServer;
let production: TestServer;

beforeAll(async () => {
  [plain, production] = await Promise.all([startServer(), startServer({ NODE_ENV: "production" })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), production?.stop()]);
});

describe("GET /", () => {
  it("answers JSON links to the console, OpenAPI, GraphQL and health checks", async () => {
    const res = await fetch(`${plain.url}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { links: Record<string, string | null> };
    expect(body.links).toMatchObject({
      console: `${plain.url}/console/`,
      openapi: `${plain.url}/api/v1/openapi.json`,
      graphql: `${plain.url}/graphql`,
      graphiql: `${plain.url}/graphql`,
      health: `${plain.url}/healthz`,
    });
    // the links work
    expect((await fetch(body.links.openapi!)).status).toBe(200);
    expect((await fetch(body.links.console!)).status).toBe(200);
    // GraphiQL is off in production (unless GRAPHIQL=1)
    const off = (await (await fetch(`${production.url}/`)).json()) as { links: Record<string, string | null> };
    expect(off.links.graphiql).toBeNull();
  });
});
