// GraphQL request errors (issue 19, item 1): variable values that fail coercion — wrong types,
// missing or null required values, Ints out of range, unknown or deeply nested input fields — are
// request errors with a specific code (invalid_parameter), 400 under application/graphql-response+json
// and 200 under application/json (GraphQL over HTTP), never internal_error, and nothing is logged at
// error level. A property-based test sends every root Query and Mutation field of the schema with
// arbitrary variables, with and without credentials, over POST (the direct and compiled paths, and
// yoga's with an Origin) and GET. REST's routes, which run the same operations, keep answering bad
// input with 400/422 problem documents. And the mask itself never throws, whatever it is given.
import { Writable } from "node:stream";
import fc from "fast-check";
import { pino } from "pino";
import {
  GraphQLError,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  type GraphQLField,
  type GraphQLInputType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { schema } from "../src/modules/schema.js";
import { restRoutes } from "../src/modules/route-table.js";
import { maskGraphQLError } from "../src/http/graphql/errors.js";
import { testEnv, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";

const logged: { level: number; msg: string; err?: unknown }[] = [];
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) logged.push(JSON.parse(l));
      done();
    },
  });
  const app = await buildApp(loadConfig(testEnv({ LOG_LEVEL: "info" })), { migrate: false, log: pino({ level: "info" }, sink) });
  const url = await app.start();
  server = { url, app, stop: () => app.stop() };
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const errorLines = () => logged.filter((l) => l.level >= 50);

type Mode = { method: "POST" | "GET"; key: boolean; accept: string; origin: boolean };

async function send(mode: Mode, body: Record<string, unknown>) {
  const headers: Record<string, string> = { accept: mode.accept };
  if (mode.key) headers["x-api-key"] = t.apiKey;
  if (mode.origin) headers.origin = "https://not-listed.example";
  let res: Response;
  if (mode.method === "GET") {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) if (v !== undefined) qs.set(k, typeof v === "string" ? v : JSON.stringify(v));
    res = await fetch(`${server.url}/graphql?${qs}`, { headers });
  } else {
    res = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // asserted below
  }
  return { status: res.status, text, json };
}

const SPEC = "application/graphql-response+json";

describe("variable errors", () => {
  const query = "query($id: String!) { comment(id: $id) { id } }";
  const cases: [string, string, Record<string, unknown> | undefined][] = [
    ["a number for a String", query, { id: 123 }],
    ["a missing required variable", query, {}],
    ["null for a required variable", query, { id: null }],
    ["an Int out of range", "query($n: Int) { discussions(first: $n) { edges { node { id } } } }", { n: 2147483648 }],
    ["an unknown input field", "mutation($p: SettingsPatch!) { updateSettings(input: $p) { editWindowSeconds } }", { p: { nope: 1 } }],
    [
      "a deeply nested unknown input field",
      "mutation($p: SettingsPatch!) { updateSettings(input: $p) { editWindowSeconds } }",
      { p: { delivery: { a: { b: { c: { d: { e: [1, { f: 2 }] } } } } } } },
    ],
    ["an object for a list of ids", "query($ids: [String!]!) { discussionCounts(ids: $ids) { comments } }", { ids: [{ a: 1 }] }],
  ];
  const modes: Mode[] = [
    { method: "POST", key: true, accept: SPEC, origin: false }, // the direct path (compiled when valid)
    { method: "POST", key: false, accept: SPEC, origin: false },
    { method: "POST", key: true, accept: SPEC, origin: true }, // yoga's whole path
    { method: "GET", key: true, accept: SPEC, origin: false },
    { method: "GET", key: false, accept: SPEC, origin: false },
  ];

  it.each(cases)("%s: invalid_parameter, 400 (200 as application/json), not logged as an error", async (what, q, variables) => {
    const before = errorLines().length;
    for (const mode of modes) {
      if (mode.method === "GET" && q.startsWith("mutation")) continue; // 405: mutations are POST only
      const r = await send(mode, { query: q, variables });
      expect(r.status, `${what} ${JSON.stringify(mode)}: ${r.text}`).toBe(400);
      expect(r.json.data, r.text).toBeUndefined();
      expect(r.json.errors.length, r.text).toBeGreaterThan(0);
      for (const e of r.json.errors) {
        expect(e.extensions.code, r.text).toBe("invalid_parameter");
        expect(e.message, r.text).toMatch(/^Variable "\$/);
        expect(e.locations, r.text).toEqual([expect.objectContaining({ line: 1 })]);
      }
      const plain = await send({ ...mode, accept: "application/json" }, { query: q, variables });
      expect(plain.status, plain.text).toBe(200);
      expect(plain.json.errors[0].extensions.code, plain.text).toBe("invalid_parameter");
    }
    expect(errorLines().slice(before)).toEqual([]);
  });
});

describe("subscriptions", () => {
  it("a subscription's bad variables are invalid_parameter too (400, and in the event stream)", async () => {
    const body = JSON.stringify({
      query: "subscription($d: String!) { discussionEvents(discussionId: $d) { __typename } }",
      variables: { d: 5 },
    });
    const res = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: SPEC, "x-api-key": t.apiKey },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).errors[0].extensions.code).toBe("invalid_parameter");
    const ac = new AbortController();
    const sse = await fetch(`${server.url}/graphql`, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", accept: "text/event-stream", "x-api-key": t.apiKey },
      body,
    });
    const reader = sse.body!.getReader();
    let text = "";
    while (!text.includes("invalid_parameter") && !text.includes("internal_error")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    ac.abort();
    expect(text).toContain('"code":"invalid_parameter"');
  });
});

describe("malformed parameters", () => {
  it("a GET whose variables or extensions are not JSON is a bad_request (400 under either media type)", async () => {
    for (const param of ["variables", "extensions"]) {
      for (const accept of [SPEC, "application/json"]) {
        const before = errorLines().length;
        const qs = new URLSearchParams({ query: "{ __typename }", [param]: "{not json" });
        const res = await fetch(`${server.url}/graphql?${qs}`, { headers: { accept, "x-api-key": t.apiKey } });
        const body = (await res.json()) as any;
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(body.errors[0].extensions.code).toBe("bad_request");
        expect(errorLines().slice(before)).toEqual([]);
      }
    }
  });
});

// ---- every root field with arbitrary variables ---------------------------------------------

const anything = fc.jsonValue({ maxDepth: 3 });
/** an object nested `n` deep: { a: { a: … } } */
const deep = fc.integer({ min: 5, max: 400 }).map((n) => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
});

function scalarValue(name: string): fc.Arbitrary<unknown> {
  switch (name) {
    case "Int":
      return fc.oneof(fc.integer(), fc.constantFrom(2147483648, -2147483649, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER));
    case "Float":
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
    case "Boolean":
      return fc.boolean();
    case "DateTime":
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.constantFrom("2024-13-45T99:99:99Z", "yesterday", ""),
      );
    default:
      return fc.oneof(fc.string(), fc.constantFrom("", "\u0000", "x".repeat(2000), "🙂"));
  }
}

/** Values shaped like the type (so coercion goes deep), mixed with anything at all. */
function valueFor(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const wild = fc.oneof(anything, deep);
  if (depth > 4) return wild;
  if (isNonNullType(type))
    return fc.oneof({ weight: 6, arbitrary: valueFor(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  let shaped: fc.Arbitrary<unknown>;
  if (isListType(type)) {
    const item = valueFor(type.ofType as GraphQLInputType, depth + 1);
    shaped = fc.oneof(fc.array(item, { maxLength: 4 }), item);
  } else if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const known = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueFor(f.type, depth + 1)])), { requiredKeys: [] });
    shaped = fc.oneof(
      { weight: 4, arbitrary: known },
      { weight: 1, arbitrary: fc.tuple(known, fc.string({ minLength: 1 }), wild).map(([o, k, v]) => ({ ...(o as object), [k]: v })) },
    );
  } else if (isEnumType(type)) {
    shaped = fc.oneof(fc.constantFrom(...type.getValues().map((v) => v.name)), fc.string());
  } else {
    shaped = scalarValue(getNamedType(type).name);
  }
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: wild });
}

interface RootField {
  operation: "query" | "mutation";
  field: GraphQLField<unknown, unknown>;
  document: string;
}

function rootFields(): RootField[] {
  const out: RootField[] = [];
  for (const [operation, type] of [
    ["query", schema.getQueryType()],
    ["mutation", schema.getMutationType()],
  ] as const) {
    for (const field of Object.values(type?.getFields() ?? {})) {
      const defs = field.args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
      const args = field.args.map((a) => `${a.name}: $${a.name}`).join(", ");
      const selection = isLeafType(getNamedType(field.type)) ? "" : " { __typename }";
      const document = `${operation} Op${defs ? `(${defs})` : ""} { ${field.name}${args ? `(${args})` : ""}${selection} }`;
      out.push({ operation, field, document });
    }
  }
  return out;
}

const modeArb = fc.record({
  method: fc.constantFrom<"POST" | "GET">("POST", "POST", "GET"),
  key: fc.boolean(),
  accept: fc.constantFrom(SPEC, "application/json"),
  origin: fc.boolean(),
});

const requestArb = fc.constantFrom(...rootFields()).chain((root) =>
  fc.record({
    document: fc.constant(root.document),
    mode: modeArb,
    variables: fc.oneof(
      {
        weight: 12,
        arbitrary: fc.record(Object.fromEntries(root.field.args.map((a) => [a.name, valueFor(a.type)])), { requiredKeys: [] }),
      },
      { weight: 1, arbitrary: anything },
    ),
  }),
);

describe("every root field with arbitrary variables", () => {
  it("covers every root Query and Mutation field", () => {
    const names = rootFields().map((r) => r.field.name);
    expect(names).toEqual(expect.arrayContaining(["comment", "comments", "updateSettings", "postComment", "createWebhook", "nodes"]));
    expect(names.length).toBe(
      Object.keys(schema.getQueryType()!.getFields()).length + Object.keys(schema.getMutationType()!.getFields()).length,
    );
  });

  // 600 requests: a loaded 2-core machine needs more than the default 30 s for them
  it(
    "never answers internal_error or a 5xx; request errors are 4xx under graphql-response+json; nothing logged as an error",
    { timeout: 120_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(requestArb, async ({ document, mode, variables }) => {
          const before = errorLines().length;
          const r = await send(mode, { query: document, variables });
          const what = `${JSON.stringify(mode)} ${document} ${JSON.stringify(variables)?.slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`;
          expect(r.status, what).toBeLessThan(500);
          expect(r.json, what).not.toBeNull();
          for (const e of r.json.errors ?? []) {
            expect(typeof e.extensions?.code, what).toBe("string");
            expect(e.extensions.code, what).not.toBe("internal_error");
          }
          // no data: a request error, which GraphQL over HTTP answers 4xx under its own media type
          if (r.json.errors?.length && !("data" in r.json) && mode.accept === SPEC) expect(r.status, what).toBeGreaterThanOrEqual(400);
          expect(errorLines().slice(before), what).toEqual([]);
        }),
        { numRuns: 600 },
      );
    },
  );
});

// ---- REST runs the same operations ------------------------------------------------------------

describe("REST with the same bad input", () => {
  it("answers 400/422 problem documents, never a 5xx", async () => {
    const cases: [string, string, unknown, number, string][] = [
      ["GET", "/api/v1/discussions?limit=2147483648", undefined, 400, "invalid_parameter"],
      ["GET", "/api/v1/discussions?limit=abc", undefined, 400, "invalid_parameter"],
      ["PATCH", "/api/v1/settings", { nope: 1 }, 422, "validation_failed"],
      ["PATCH", "/api/v1/settings", { delivery: { a: { b: { c: { d: [1, { e: 2 }] } } } } }, 422, "validation_failed"],
      ["PATCH", "/api/v1/settings", { editWindowSeconds: 2147483648 }, 422, "validation_failed"],
      ["PATCH", "/api/v1/settings", { editWindowSeconds: "x" }, 422, "validation_failed"],
      ["POST", "/api/v1/keys", { label: 5, capabilities: "all" }, 422, "validation_failed"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await t.api.raw(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((res.body as any).code).toBe(code);
    }
  });

  it("every route of the table with arbitrary bodies and parameters: no 5xx, errors are problem documents", async () => {
    const routes = restRoutes.filter((r) => !r.adminOnly);
    const before = errorLines().length;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.dictionary(fc.constantFrom("limit", "first", "after", "cursor", "sort", "status", "since"), fc.string(), { maxKeys: 3 }),
        fc.oneof(anything, deep, fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(anything, deep), { maxKeys: 4 })),
        async (route, id, query, body) => {
          const path = `/api/v1${route.path.replace(/:[a-zA-Z]+/g, encodeURIComponent(id))}`;
          const qs = new URLSearchParams(query).toString();
          const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ""}`, {
            method: route.method,
            headers: { "content-type": "application/json", "x-api-key": t.apiKey },
            ...(route.method === "GET" || route.method === "DELETE" ? {} : { body: JSON.stringify(body) }),
          });
          const text = await res.text();
          const what = `${route.method} ${path}?${qs} ${JSON.stringify(body)?.slice(0, 200)} → ${res.status} ${text.slice(0, 200)}`;
          expect(res.status, what).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.headers.get("content-type"), what).toMatch(/^application\/problem\+json/);
            expect(JSON.parse(text).code, what).not.toBe("internal_error");
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(errorLines().slice(before)).toEqual([]);
  });
});

// ---- the mask ---------------------------------------------------------------------------------

describe("maskGraphQLError", () => {
  const lines: { level: number }[] = [];
  const log = pino(
    { level: "debug" },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  const mask = maskGraphQLError(log);

  it("never throws, whatever it is given; an error without extensions is answered with a code", () => {
    // graphql-jit's errors: GraphQLError's prototype, no extensions at all
    const jitLike = Object.create(GraphQLError.prototype, { message: { value: 'Variable "$id" got invalid value 1' } });
    const noExtensions = Object.assign(new GraphQLError("x"), { extensions: undefined });
    const values: unknown[] = [jitLike, noExtensions, new Error("boom"), "a string", null, undefined, 42, {}, { extensions: null }];
    for (const v of values) {
      const out = mask(v, "Unexpected error.");
      expect(out).toBeInstanceOf(GraphQLError);
      expect(typeof (out as GraphQLError).extensions.code).toBe("string");
    }
    expect((mask(jitLike, "m") as GraphQLError).extensions.code).toBe("invalid_parameter");
    expect((mask(new Error("boom"), "m") as GraphQLError).extensions.code).toBe("internal_error");
  });
});
