// GET /: a newcomer who opens the service's address is pointed at the console, the OpenAPI document,
// GraphQL (and GraphiQL where it is on) and the health checks, as JSON for clients (the page of
// links a browser gets: test/browser/index-page.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";

let plain: TestServer;
let withGraphiql: TestServer;

beforeAll(async () => {
  [plain, withGraphiql] = await Promise.all([startServer(), startServer({ GRAPHIQL: "1" })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), withGraphiql?.stop()]);
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
      graphiql: null,
      health: `${plain.url}/healthz`,
    });
    // the links work
    expect((await fetch(body.links.openapi!)).status).toBe(200);
    expect((await fetch(body.links.console!)).status).toBe(200);
    const on = (await (await fetch(`${withGraphiql.url}/`)).json()) as { links: Record<string, string | null> };
    expect(on.links.graphiql).toBe(`${withGraphiql.url}/graphql`);
  });
});
