// X-Service-Consistency without read replicas (contract section 26): every write's answer still
// carries a token, the one of a position no replica reaches (reads sending it back go to the
// primary, which is where every read goes here); a read's answer carries none. With replicas (here
// the database itself named as one: never serving, so the token is real and reads stay on the
// primary) the token is opaque: it does not carry the log's position, which every tenant's writes
// move, and it is a token only for the tenant that wrote. More: test/engines/replicas.test.ts and
// the read-your-writes row of test/request-invariants.test.ts.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { PRIMARY_LSN, PRIMARY_TOKEN, parseLsn } from "../src/db/replicas/consistency-token.js";

let server: TestServer;
let replicated: TestServer;
let t: TestTenant;

beforeAll(async () => {
  [server, replicated] = await Promise.all([
    startServer(),
    startServer({ DATABASE_REPLICA_URLS: inject("databaseUrl"), DATABASE_REPLICA_STICKY_MS: "0" }),
  ]);
  t = await createTestTenant(server);
});
afterAll(() => Promise.all([server?.stop(), replicated?.stop()]));

const TOKEN = "x-service-consistency";

describe("X-Service-Consistency without replicas", () => {
  it("is on every write's answer (REST and a GraphQL mutation), the primary's token, and on no read's", async () => {
    expect(server.app.runtime.services.consistencyTokens.decode(PRIMARY_TOKEN, t.tenantId)).toBe(PRIMARY_LSN);
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

describe("X-Service-Consistency with replicas", () => {
  const services = () => replicated.app.runtime.services;
  /** how many reads went to the primary for `reason` (db_read_routes_total) */
  const primaryReads = async (reason: string) =>
    (await services().metrics.databaseReads.get()).values.find((v) => v.labels.target === "primary" && v.labels.reason === reason)?.value ??
    0;

  it("is opaque (not the log's position) and a token only for the tenant that wrote", async () => {
    const [a, b] = await Promise.all([createTestTenant(replicated), createTestTenant(replicated)]);
    const put = await a.api.put("/api/v1/discussions/ryw-opaque", { title: "Opaque" });
    expect(put.status).toBe(201);
    const token = put.headers.get(TOKEN)!;
    expect(token).toMatch(/^c2\.[A-Za-z0-9_-]{48}$/);
    // the position it stands for is the primary's after the write; its bytes are nowhere in the token
    const { lsn } = (await services().sql.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn", []))[0]!;
    const position = services().consistencyTokens.decode(token, a.tenantId) as bigint;
    expect(typeof position).toBe("bigint");
    expect(position <= parseLsn(lsn)!).toBe(true);
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(position);
    expect(Buffer.from(token.slice(3), "base64url").includes(bytes.subarray(2))).toBe(false);
    // two writes at nearly the same position answer tokens that share nothing readable
    const again = (await a.api.put("/api/v1/discussions/ryw-opaque-2", { title: "Again" })).headers.get(TOKEN)!;
    expect(again.slice(0, 16)).not.toBe(token.slice(0, 16));

    // the writer's tenant reads with it (no replica serves here: "no_replica"); another tenant's read
    // sending it is as one without a token it may use ("consistency": the primary), not refused
    expect(services().consistencyTokens.decode(token, b.tenantId)).toBe("invalid");
    const before = await primaryReads("consistency");
    expect((await a.api.get("/api/v1/discussions/ryw-opaque/comments", { headers: { [TOKEN]: token } })).status).toBe(200);
    expect(await primaryReads("consistency")).toBe(before);
    expect((await b.api.put("/api/v1/discussions/ryw-b", {})).status).toBe(201);
    const other = await b.api.get("/api/v1/discussions/ryw-b/comments", { headers: { [TOKEN]: token } });
    expect(other.status).toBe(200);
    expect(await primaryReads("consistency")).toBe(before + 1);
  });
});
