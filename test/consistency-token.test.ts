// X-Service-Consistency without read replicas (contract section 26): every write's answer still
// carries a token, the one of a position no replica reaches (reads sending it back go to the
// primary, which is where every read goes here); a read's answer carries none. With replicas:
// test/engines/replicas.test.ts and the read-your-writes row of test/request-invariants.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { PRIMARY_TOKEN, decodeConsistencyToken } from "../src/db/replicas/consistency-token.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const TOKEN = "x-service-consistency";

describe("X-Service-Consistency without replicas", () => {
  it("is on every write's answer (REST and a GraphQL mutation), the primary's token, and on no read's", async () => {
    expect(decodeConsistencyToken(PRIMARY_TOKEN)).toBe(0xffffffffffffffffn);
    const put = await t.api.put("/api/v1/discussions/ryw-1", { title: "Read your writes" });
    expect(put.status).toBe(201);
    expect(put.headers.get(TOKEN)).toBe(PRIMARY_TOKEN);
    const post = await t.api.post(
      "/api/v1/discussions/ryw-1/comments",
      { body: "first" },
      { identity: await t.identity("ryw-reader", { name: "Reader" }) },
    );
    expect(post.status).toBe(201);
    expect(post.headers.get(TOKEN)).toBe(PRIMARY_TOKEN);
    const mutation = await t.api.raw("POST", "/graphql", {
      query: 'mutation { upsertDiscussion(id: "ryw-2", input: { title: "Two" }) { created } }',
    });
    expect(mutation.status).toBe(200);
    expect(mutation.body.errors).toBeUndefined();
    expect(mutation.headers.get(TOKEN)).toBe(PRIMARY_TOKEN);

    const query = await t.api.raw("POST", "/graphql", { query: '{ discussion(id: "ryw-1") { id } }' });
    expect(query.status).toBe(200);
    expect(query.headers.get(TOKEN)).toBeNull();
    // a read sending the token back is answered, with the write in it
    const list = await t.api.get("/api/v1/discussions/ryw-1/comments", { headers: { [TOKEN]: PRIMARY_TOKEN } });
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: { body: string }) => c.body)).toEqual(["first"]);
    expect(list.headers.get(TOKEN)).toBeNull();
    // a refused write carries none
    const refused = await t.api.put("/api/v1/discussions/has%20space", { title: "x" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get(TOKEN)).toBeNull();
  });
});
