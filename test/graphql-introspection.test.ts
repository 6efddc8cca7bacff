// Introspection where it is on (issue 19, item 2): graphql-js's standard introspection query with
// every option passes the document limits (an `ofType` chain inside __schema/__type is one level of
// depth, its own length at most the depth limit: src/http/graphql/limits.ts) and yields our schema;
// graphql-codegen pointed at the URL loads it (GraphiQL's documentation explorer, in headless
// Chromium: test/browser/graphiql.test.ts). Introspection-shaped bombs are still refused, and with
// introspection off nothing changes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClientSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from "graphql";
import { generate } from "@graphql-codegen/cli";
import { schema } from "../src/modules/schema.js";
import { startServer, type TestServer } from "./support/server.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ NODE_ENV: "production", GRAPHQL_INTROSPECTION: "1", GRAPHIQL: "1" });
});
afterAll(() => server?.stop());

const SPEC = "application/graphql-response+json";

async function gql(s: TestServer, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: SPEC, ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const FULL = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
});
const printed = (s: Parameters<typeof lexicographicSortSchema>[0]) => printSchema(lexicographicSortSchema(s));

describe("the standard introspection query", () => {
  it("with every option, without credentials and with a browser's Origin: answers our whole schema", async () => {
    for (const headers of [{}, { origin: "https://not-listed.example" }] as Record<string, string>[]) {
      const r = await gql(server, FULL, headers);
      expect(r.status, JSON.stringify(r.body.errors)).toBe(200);
      expect(r.body.errors).toBeUndefined();
      expect(printed(buildClientSchema(r.body.data as IntrospectionQuery))).toBe(printed(schema));
    }
  });

  it("the shapes other clients send: graphql-js's defaults, the older 7-deep TypeRef, typeDepth up to the depth limit", async () => {
    for (const query of [getIntrospectionQuery(), getIntrospectionQuery({ typeDepth: 7 }), getIntrospectionQuery({ typeDepth: 10 })]) {
      const r = await gql(server, query);
      expect(r.status, JSON.stringify(r.body.errors)).toBe(200);
      expect(r.body.data.__schema.types.length).toBeGreaterThan(10);
    }
  });
});

describe("introspection-shaped bombs are still refused", () => {
  const ofTypes = (n: number) => `${"ofType { kind ".repeat(n)}name${" }".repeat(n)}`;
  it.each([
    [
      "an ofType chain deeper than the depth limit",
      `{ __type(name: "Query") { fields { type { ${ofTypes(11)} } } } }`,
      "query_too_complex",
      /ofType/,
    ],
    [
      "an ofType chain in a fragment",
      `{ __schema { types { ...T } } } fragment T on __Type { ${ofTypes(12)} }`,
      "query_too_complex",
      /ofType/,
    ],
    [
      "thousands of aliases of __schema",
      `{ ${Array.from({ length: 1500 }, (_, i) => `a${i}:__schema{queryType{name}}`).join(" ")} }`,
      "query_too_complex",
      /tokens|aliases/,
    ],
    [
      "31 aliases of __schema",
      `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __schema { queryType { name } }`).join(" ")} }`,
      "query_too_complex",
      /aliases/,
    ],
    [
      "__schema { types { fields { type { fields … recursion",
      "{ __schema { types { fields { type { fields { type { fields { type { name } } } } } } } } }",
      "invalid_query",
      /introspection depth/,
    ],
    [
      "a path deeper than the depth limit, ofType counted once",
      "{ __schema { types { fields { args { type { fields { args { type { ofType { enumValues { name } } } } } } } } } } }",
      "query_too_complex",
      /depth of this operation is 11/,
    ],
  ])("%s", async (_what, query, code, message) => {
    const r = await gql(server, query);
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors[0].extensions.code).toBe(code);
    expect(r.body.errors.map((e: any) => e.message).join(" ")).toMatch(message);
  });
});

describe("with introspection off", () => {
  it("the standard query is refused as before (production without GRAPHQL_INTROSPECTION)", async () => {
    const prod = await startServer({ NODE_ENV: "production" });
    try {
      for (const query of [FULL, getIntrospectionQuery()]) {
        const r = await gql(prod, query);
        expect(r.status).toBe(400);
        expect(r.body.data).toBeUndefined();
        const codes = r.body.errors.map((e: any) => e.extensions.code);
        expect(codes).toContain("invalid_query"); // introspection is not allowed
        expect(codes.every((c: string) => c === "invalid_query" || c === "query_too_complex")).toBe(true);
      }
    } finally {
      await prod.stop();
    }
  });
});

describe("graphql-codegen pointed at the URL", () => {
  it("generates TypeScript types from the running server's schema", async () => {
    const files = await generate(
      {
        schema: `${server.url}/graphql`,
        generates: { "types.ts": { plugins: ["typescript"] } },
        silent: true,
      },
      false,
    );
    const out = files.map((f: { content: string }) => f.content).join("\n");
    expect(out).toContain("export type Query = {");
    expect(out).toContain("export type SettingsPatch = {");
    expect(out).toContain("updateSettings: Settings;");
  });
});
