// Forged cursors: a cursor a list issued, its values replaced by ones no list issues (times past a
// Date or PostgreSQL, integers past int4, fractions where the column is an integer, a NUL in an id,
// huge numbers), is refused as any other cursor the list did not issue — 400 `invalid_parameter` on
// `cursor` for REST and the fragment, `invalid_parameter`/`validation_failed` in GraphQL — never a 500
// from PostgreSQL (22003, 22008, 22021, 22P02) or an invalid Date.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TestCommentsDocument } from "./generated/operations.js";

let server: TestServer;
let t: TestTenant;
let pk = "";
beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
  expect((await t.api.put("/api/v1/discussions/forged", { title: "Forged" })).status).toBe(201);
  const reader = await t.reader("forger");
  for (let i = 0; i < 3; i++) expect((await reader.post("/api/v1/discussions/forged/comments", { body: `top ${i}` })).status).toBe(201);
});
afterAll(() => server?.stop());

const decode = (c: string) => Buffer.from(c, "base64url").toString("utf8");
const encodeText = (json: string) => Buffer.from(json, "utf8").toString("base64url");

/** what each position of a cursor holds */
type Kind = "tag" | "bool" | "time" | "int4" | "float" | "id";
const SORT_KINDS: Record<string, Kind[]> = {
  newest: ["tag", "bool", "time", "id"],
  oldest: ["tag", "bool", "time", "id"],
  top: ["tag", "bool", "int4", "time", "id"],
  score: ["tag", "bool", "int4", "time", "id"],
  best: ["tag", "bool", "float", "time", "id"],
};

// each as JSON text: 1e400 parses to Infinity, which JSON.stringify cannot write
const HOSTILE: Record<Kind, string[]> = {
  tag: [],
  bool: ['"true"', "1"],
  // past JavaScript's Date (±8.64e15 ms), past year 9999 (PostgreSQL would read +10000 wrongly or refuse), before year 1, a fraction
  time: ["8640000000000001", "-8640000000000001", "1e20", "1e300", "1e400", "253402300800000", "-62135596800001", "1700000000000.5"],
  // past int4 either way, past 2^53, a fraction, infinity
  int4: ["2147483648", "-2147483649", "1180591620717411303424", "1e300", "1e400", "1.5"],
  float: ["1e400", "-1e400"],
  // a NUL (PostgreSQL's text cannot hold it), an id far longer than any issued
  id: ['"cmt_x\\u0000"', '"\\u0000"', JSON.stringify("x".repeat(5000))],
};

/** variants of a real cursor: each position replaced by each hostile value of its kind */
function forgeries(real: string, kinds: Kind[]): string[] {
  const values = JSON.parse(decode(real)) as unknown[];
  expect(values.length).toBe(kinds.length);
  const out: string[] = [];
  kinds.forEach((kind, i) => {
    for (const bad of HOSTILE[kind]) out.push(encodeText(`[${values.map((v, j) => (j === i ? bad : JSON.stringify(v))).join(",")}]`));
  });
  return out;
}

describe("forged cursors", () => {
  it("the REST list refuses every forged cursor of every sort with 400 invalid_parameter on cursor", async () => {
    for (const sort of ["newest", "oldest", "top", "best", "score"]) {
      const first = await t.api.get(`/api/v1/discussions/forged/comments?sort=${sort}&limit=1`);
      expect(first.status).toBe(200);
      const real = first.body.nextCursor as string;
      expect(typeof real).toBe("string");
      expect((await t.api.get(`/api/v1/discussions/forged/comments?sort=${sort}&limit=1&cursor=${real}`)).status).toBe(200);
      for (const cursor of forgeries(real, SORT_KINDS[sort]!)) {
        const r = await t.api.get(`/api/v1/discussions/forged/comments?sort=${sort}&limit=1&cursor=${cursor}`);
        expect([sort, decode(cursor), r.status, r.body.code]).toEqual([sort, decode(cursor), 400, "invalid_parameter"]);
        expect(r.body.errors[0].path).toBe("cursor");
      }
    }
  });

  it("GraphQL comments refuses them with an error naming the cursor, never internal_error", async () => {
    for (const sort of ["newest", "top", "best"] as const) {
      const first = await t.api.gql(TestCommentsDocument, { discussionId: "forged", sort, limit: 1 });
      expect(first.errors).toBeUndefined();
      const real = first.data!.comments.nextCursor!;
      for (const cursor of forgeries(real, SORT_KINDS[sort]!)) {
        const r = await t.api.gql(TestCommentsDocument, { discussionId: "forged", sort, limit: 1, cursor });
        expect(r.status).toBeLessThan(500);
        const codes = (r.errors ?? []).map((e) => e.extensions?.code);
        expect([sort, decode(cursor), codes]).toEqual([
          sort,
          decode(cursor),
          [expect.stringMatching(/^(invalid_parameter|validation_failed)$/)],
        ]);
      }
    }
  });

  it("the fragment refuses them with 400 invalid_parameter, a problem document", async () => {
    // the fragment's pages are the first level's list (topLevel): its cursors are that list's
    for (const sort of ["newest", "top", "best"]) {
      const list = await t.api.get(`/api/v1/discussions/forged/comments?topLevel=true&sort=${sort}&limit=1`);
      const real = list.body.nextCursor as string;
      expect((await fetch(`${server.url}/embed/v1/discussions/forged.html?key=${pk}&sort=${sort}&cursor=${real}`)).status).toBe(200);
      for (const cursor of forgeries(real, SORT_KINDS[sort]!)) {
        const r = await fetch(`${server.url}/embed/v1/discussions/forged.html?key=${pk}&sort=${sort}&cursor=${cursor}`);
        expect([sort, decode(cursor), r.status]).toEqual([sort, decode(cursor), 400]);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(((await r.json()) as { code: string }).code).toBe("invalid_parameter");
      }
    }
  });

  it("every list with a time and id cursor refuses forged ones (keys, discussions, audit)", async () => {
    for (let i = 0; i < 2; i++) expect((await t.admin.post("/api/v1/admin/keys", { label: `k${i}`, capabilities: [] })).status).toBe(201);
    expect((await t.api.put("/api/v1/discussions/forged-2", {})).status).toBe(201);
    for (const [path, client] of [
      ["/api/v1/keys", t.api],
      ["/api/v1/discussions", t.api],
      ["/api/v1/audit", t.admin],
    ] as const) {
      const first = await client.get(`${path}?limit=1`);
      expect([path, first.status]).toEqual([path, 200]);
      const real = first.body.nextCursor as string;
      expect([path, typeof real]).toEqual([path, "string"]);
      for (const cursor of forgeries(real, ["time", "id"])) {
        const r = await client.get(`${path}?limit=1&cursor=${cursor}`);
        expect([path, decode(cursor), r.status, r.body.code]).toEqual([path, decode(cursor), 400, "invalid_parameter"]);
      }
    }
  });
});
