// What every execution path keeps (src/http/request-invariants.ts), run row by row through every
// path over real HTTP against a real server: yoga's pipeline (/graphql with an Origin), the direct
// path (a backend's plain POST /graphql; a one-root-field query runs compiled), the idempotent path
// (a /graphql mutation under Idempotency-Key), REST, the SSE stream served before fastify, and a
// plain route (src/http/plain-route.ts: a discussion's feed; the import routes for a capability and a write).
// Each path is a driver below; each invariant a probe that takes any driver. A path the table says
// does not keep a row (an `exception`) is expected to fail that row's probe; one it does not apply
// to is listed and skipped.
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { testEnv, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import {
  EXECUTION_PATHS,
  REQUEST_INVARIANTS,
  type ExecutionPath,
  type Invariant,
  type InvariantId,
} from "../src/http/request-invariants.js";

const log: any[] = [];
let server: TestServer;
let t: TestTenant;
let other: TestTenant;
let limited: TestTenant;
let bareKey: string;
/** a key of the rate-limited tenant for each path (made before its budget was lowered, which counts the admin's too) */
const limitedKeys = {} as Record<ExecutionPath, string>;

/** the discussions: read and locked by the main tenant; another tenant's; the rate-limited tenant's */
const D = "inv-d";
const WRITTEN = ["inv-w1", "inv-w2"] as const;
const OTHERS = "inv-others";
const LIMITED = "inv-limited";
const MISSING = "inv-missing";
const ALL_CAPABILITIES = ["moderate_content", "manage_settings", "manage_api_keys", "manage_webhooks", "view_analytics"];
const NOT_LISTED = "https://not-listed.example";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) log.push(JSON.parse(l));
      done();
    },
  });
  // a "replica" that is the database itself (not a standby: never serving, so every read stays on the
  // primary) makes every write's answer carry its consistency token (the read-your-writes row)
  const app = await buildApp(loadConfig(testEnv({ LOG_LEVEL: "info", DATABASE_REPLICA_URLS: inject("databaseUrl") })), {
    migrate: false,
    log: pino({ level: "info" }, sink),
  });
  server = { url: await app.start(), app, stop: () => app.stop() };
  [t, other, limited] = await Promise.all([createTestTenant(server), createTestTenant(server), createTestTenant(server)]);
  for (const d of [D, ...WRITTEN]) expect((await t.api.put(`/api/v1/discussions/${d}`, {})).status).toBe(201);
  expect((await other.api.put(`/api/v1/discussions/${OTHERS}`, {})).status).toBe(201);
  expect((await limited.api.put(`/api/v1/discussions/${LIMITED}`, {})).status).toBe(201);
  for (const path of Object.keys(EXECUTION_PATHS) as ExecutionPath[]) limitedKeys[path] = (await keyWith(limited, ALL_CAPABILITIES)).key;
  expect((await limited.admin.patch("/api/v1/settings", { rateLimits: { requestsPerMinute: 3 } })).status).toBe(200);
  bareKey = (await keyWith(t, [])).key;
});
afterAll(() => server?.stop());

// ------------------------------------------------------------------ answers and their families

type Headers_ = Record<string, string>;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function send(method: string, path: string, headers: Headers_, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Opens the stream and lets it go once its head is read (the request is answered and recorded then). */
async function openStream(d: string, headers: Headers_, search = ""): Promise<Answer> {
  const res = await fetch(`${server.url}/api/v1/stream/${d}${search}`, { headers });
  if (res.status === 200) {
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await res.body?.cancel();
    return { status: 200, headers: res.headers, body: undefined };
  }
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const keyOf = (key: string): Headers_ => ({ "x-api-key": key });
const main = (): Headers_ => keyOf(t.apiKey);
const newKey = () => `inv-${randomUUID()}`;

// ------------------------------------------------------------------ the paths

interface Driver {
  /** how its answers refuse: a problem document, or GraphQL errors */
  family: "problem" | "graphql";
  /** http_requests_total's labels for `request` */
  route: string;
  method: string;
  /** graphql_operations_total's operation for `request`; graphql_requests_total's path */
  operation?: string;
  servedAs?: string;
  /** whether each root field of an operation is a unit of the rate limit */
  unitPerRootField: boolean;
  /** the path's usual request: reads (or, on the idempotent path, locks) discussion `d` */
  request(auth: Headers_, d: string, opts?: { headers?: Headers_; rootFields?: 1 | 2 }): Promise<Answer>;
  /** a request needing the capability `required`, which the all-capability key holds */
  privileged?: { required: string; send(auth: Headers_, d: string): Promise<Answer> };
  /** a write of discussion `d` under Idempotency-Key `key` */
  write?(auth: Headers_, d: string, key: string): Promise<Answer>;
  /** a write of discussion `d` as this path serves it (the idempotent path's carries a new key) */
  plainWrite?(auth: Headers_, d: string): Promise<Answer>;
  /** plainWrite's status when it is not 200 (an import's upload is accepted: 202) */
  plainWriteStatus?: number;
  /** the caller's mistake in the request itself, and the code it gets */
  malformed: { code: string; status: number; send(auth: Headers_, requestId: string): Promise<Answer> };
}

const READ = "query InvRead($d: String!) { discussion(id: $d) { id } }";
const READ_TWO = "query InvRead($d: String!) { a: discussion(id: $d) { id } b: discussion(id: $d) { id } }";
const KEYS = "query InvKeys { apiKeys(first: 1) { edges { node { id } } } }";
const LOCK = "mutation InvLock($d: String!) { lockDiscussion(id: $d) { id state } }";
const LOCK_TWO = "mutation InvLock($d: String!) { a: lockDiscussion(id: $d) { id } b: unlockDiscussion(id: $d) { id } }";

const graphql = (headers: Headers_, query: string, variables?: Record<string, unknown>) =>
  send("POST", "/graphql", headers, variables ? { query, variables } : { query });

/** yoga's pipeline (`browser`: with an Origin, which the direct path leaves to yoga) or the direct path */
function graphqlDriver(browser: boolean): Driver {
  const shape = (h: Headers_ = {}): Headers_ => (browser ? { origin: NOT_LISTED, ...h } : h);
  return {
    family: "graphql",
    route: "/graphql",
    method: "POST",
    operation: "InvRead",
    servedAs: browser ? "yoga" : "compiled",
    unitPerRootField: true,
    request: (auth, d, opts = {}) => graphql(shape({ ...auth, ...opts.headers }), opts.rootFields === 2 ? READ_TWO : READ, { d }),
    privileged: { required: "manage_api_keys", send: (auth) => graphql(shape(auth), KEYS) },
    // a keyed mutation of this path's shape (src/app.ts hands it to the idempotent path)
    write: (auth, d, key) => graphql(shape({ ...auth, "idempotency-key": key }), LOCK, { d }),
    plainWrite: (auth, d) => graphql(shape(auth), LOCK, { d }),
    malformed: {
      code: "syntax_error",
      status: 400,
      send: (auth, requestId) =>
        graphql(shape({ ...auth, accept: "application/graphql-response+json", "x-request-id": requestId }), "{ discussion(id: "),
    },
  };
}

/** a file the import takes and finds nothing in: the export's header line */
const EMPTY_EXPORT = '{"type":"export","version":1}\n';

const feed = (d: string, headers: Headers_, search = "") => send("GET", `/api/v1/feeds/discussions/${d}.atom${search}`, headers);

const DRIVERS: Record<ExecutionPath, Driver> = {
  yoga: graphqlDriver(true),
  direct: graphqlDriver(false),
  idempotent: {
    family: "graphql",
    route: "/graphql",
    method: "POST",
    operation: "InvLock",
    servedAs: "idempotent",
    unitPerRootField: true,
    request: (auth, d, opts = {}) =>
      graphql({ ...auth, "idempotency-key": newKey(), ...opts.headers }, opts.rootFields === 2 ? LOCK_TWO : LOCK, { d }),
    privileged: {
      required: "moderate_content",
      send: (auth, d) => graphql({ ...auth, "idempotency-key": newKey() }, LOCK, { d }),
    },
    write: (auth, d, key) => graphql({ ...auth, "idempotency-key": key }, LOCK, { d }),
    plainWrite: (auth, d) => graphql({ ...auth, "idempotency-key": newKey() }, LOCK, { d }),
    malformed: {
      code: "invalid_parameter",
      status: 400,
      send: (auth, requestId) => graphql({ ...auth, "idempotency-key": "two words", "x-request-id": requestId }, LOCK, { d: D }),
    },
  },
  rest: {
    family: "problem",
    route: "/api/v1/discussions/:id",
    method: "GET",
    operation: "RestGetDiscussion",
    unitPerRootField: false,
    request: (auth, d, opts = {}) => send("GET", `/api/v1/discussions/${d}`, { ...auth, ...opts.headers }),
    privileged: { required: "manage_settings", send: (auth) => send("GET", "/api/v1/settings", auth) },
    write: (auth, d, key) => send("POST", `/api/v1/discussions/${d}/lock`, { ...auth, "idempotency-key": key }),
    plainWrite: (auth, d) => send("POST", `/api/v1/discussions/${d}/lock`, auth),
    malformed: {
      code: "invalid_parameter",
      status: 400,
      send: (auth, requestId) => send("GET", "/api/v1/discussions?limit=abc", { ...auth, "x-request-id": requestId }),
    },
  },
  sse: {
    family: "problem",
    route: "/api/v1/stream/:discussionId",
    method: "GET",
    unitPerRootField: false,
    request: (auth, d, opts = {}) => openStream(d, { ...auth, ...opts.headers }),
    malformed: {
      code: "invalid_parameter",
      status: 400,
      send: (auth, requestId) => openStream(D, { ...auth, "x-request-id": requestId }, "?lastEventId=abc"),
    },
  },
  plain: {
    family: "problem",
    route: "/api/v1/feeds/discussions/:file",
    method: "GET",
    unitPerRootField: false,
    request: (auth, d, opts = {}) => feed(d, { ...auth, ...opts.headers }),
    privileged: { required: "manage_settings", send: (auth) => send("GET", "/api/v1/imports", auth) },
    // not of discussion `d`: no plain route writes a discussion; an import's upload is its write
    plainWrite: (auth) => send("POST", "/api/v1/imports?format=ndjson", auth, EMPTY_EXPORT),
    plainWriteStatus: 202,
    malformed: {
      code: "invalid_parameter",
      status: 400,
      send: (auth, requestId) => feed(D, { ...auth, "x-request-id": requestId }, "?key=sk_not_publishable"),
    },
  },
};

function need<T>(value: T | undefined, what: string, path: ExecutionPath): T {
  if (value === undefined) throw new Error(`the ${path} driver has no ${what}: give it one to probe this row`);
  return value;
}

/** The path's refusal: a problem document (REST, the stream) or GraphQL errors, with `code`. */
function expectRefusal(drv: Driver, a: Answer, status: { problem: number; graphql: number }, code: string): void {
  const requestId = a.headers.get("x-request-id");
  if (drv.family === "problem") {
    expect(a.status).toBe(status.problem);
    expect(a.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(a.body).toMatchObject({
      type: expect.stringMatching(/^https:\/\//),
      title: expect.any(String),
      status: status.problem,
      code,
      detail: expect.any(String),
      requestId,
    });
  } else {
    expect(a.status).toBe(status.graphql);
    expect(a.headers.get("content-type")).toMatch(/^application\/(graphql-response\+)?json/);
    expect(a.body.errors?.[0]).toMatchObject({ message: expect.any(String), extensions: { code } });
    expect(a.body.data ?? null).toBeNull();
  }
}

const codeOf = (a: Answer): unknown => a.body?.code ?? a.body?.errors?.[0]?.extensions?.code;
const requiredOf = (a: Answer): unknown => a.body?.required ?? a.body?.errors?.[0]?.extensions?.required;

// ------------------------------------------------------------------ metrics and the access log

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) total += Number(m[3]);
  }
  return total;
}

// ------------------------------------------------------------------ the probes, one per row

type Probe = (path: ExecutionPath, drv: Driver) => Promise<void>;

const PROBES: Record<InvariantId, Probe> = {
  async "request-id"(path, drv) {
    const own = `inv-${path}-${randomUUID()}`;
    const a = await drv.request(main(), D, { headers: { "x-request-id": own } });
    expect(a.status).toBe(200);
    expect(a.headers.get("x-request-id")).toBe(own);
    const unsafe = await drv.request(main(), D, { headers: { "x-request-id": "not\tsafe" } });
    expect(unsafe.headers.get("x-request-id")).toMatch(UUID);
    const none = await drv.request(main(), D);
    expect(none.headers.get("x-request-id")).toMatch(UUID);
    const refused = await drv.request(main(), MISSING, { headers: { "x-request-id": `${own}-e` } });
    expect(refused.headers.get("x-request-id")).toBe(`${own}-e`);
    if (drv.family === "problem") expect(refused.body.requestId).toBe(`${own}-e`);
  },

  async authentication(path, drv) {
    for (const auth of [{}, keyOf(`ek_${"0".repeat(64)}`)])
      expectRefusal(drv, await drv.request(auth, D), { problem: 401, graphql: 401 }, "unauthenticated");
    // credentials come first: a malformed Idempotency-Key does not change the answer
    if (drv.write) expectRefusal(drv, await drv.write({}, D, "two words"), { problem: 401, graphql: 401 }, "unauthenticated");
  },

  async tenant(path, drv) {
    expectRefusal(drv, await drv.request(main(), OTHERS), { problem: 404, graphql: 200 }, "not_found");
    if (drv.write) expectRefusal(drv, await drv.write(main(), OTHERS, newKey()), { problem: 404, graphql: 200 }, "not_found");
    const theirs = await other.api.get(`/api/v1/discussions/${OTHERS}`);
    expect([theirs.status, theirs.body.state]).toEqual([200, "open"]);
  },

  async capability(path, drv) {
    const privileged = need(drv.privileged, "privileged request", path);
    const refused = await privileged.send(keyOf(bareKey), D);
    expectRefusal(drv, refused, { problem: 403, graphql: 200 }, "missing_capability");
    expect(requiredOf(refused)).toBe(privileged.required);
    const allowed = await privileged.send(main(), D);
    expect([allowed.status, codeOf(allowed)]).toEqual([200, undefined]);
  },

  async "rate-limit-units"(path, drv) {
    // a key of its own of the tenant allowed 3 units a minute: a refused read (1), then 2 root
    // fields (GraphQL: 2 units) or 2 requests, and the next request is over the budget
    const auth = keyOf(limitedKeys[path]);
    expect(codeOf(await drv.request(auth, MISSING))).toBe("not_found");
    const spent = [await drv.request(auth, LIMITED, { rootFields: 2 })];
    if (!drv.unitPerRootField) spent.push(await drv.request(auth, LIMITED));
    expect(spent.map((a) => [a.status, codeOf(a)])).toEqual(spent.map(() => [200, undefined]));
    const refusals = await metric("rate_limit_refusals_total", {});
    const over = await drv.request(auth, LIMITED);
    expectRefusal(drv, over, { problem: 429, graphql: 429 }, "rate_limited");
    expect(await metric("rate_limit_refusals_total", {})).toBe(refusals + 1);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect([over.headers.get("ratelimit-limit"), over.headers.get("ratelimit-remaining")]).toEqual(["3", "0"]);
  },

  async "rate-limit-headers"(path, drv) {
    const auth = keyOf((await keyWith(t, ALL_CAPABILITIES)).key);
    const one = await drv.request(auth, D);
    const two = await drv.request(auth, D, { rootFields: 2 });
    for (const a of [one, two]) {
      expect(a.status).toBe(200);
      expect(a.headers.get("ratelimit-limit")).toBe("6000");
      expect(a.headers.get("ratelimit-reset")).toMatch(/^\d+$/);
    }
    const spent = Number(one.headers.get("ratelimit-remaining")) - Number(two.headers.get("ratelimit-remaining"));
    expect(spent).toBe(drv.unitPerRootField ? 2 : 1);
  },

  async idempotency(path, drv) {
    const write = need(drv.write, "write", path);
    const key = newKey();
    const first = await write(main(), WRITTEN[0], key);
    expect([first.status, codeOf(first), first.headers.get("idempotent-replayed")]).toEqual([200, undefined, null]);
    const again = await write(main(), WRITTEN[0], key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect([again.status, again.body]).toEqual([first.status, first.body]);
    expectRefusal(drv, await write(main(), WRITTEN[1], key), { problem: 422, graphql: 422 }, "idempotency_key_reused");
  },

  async "read-your-writes"(path, drv) {
    const written = await need(drv.plainWrite, "plainWrite", path)(main(), WRITTEN[0]);
    expect([written.status, codeOf(written)]).toEqual([drv.plainWriteStatus ?? 200, undefined]);
    expect(written.headers.get("x-service-consistency")).toMatch(/^c2\.[A-Za-z0-9_-]{48}$/);
    // the idempotent path's request is a write; the others' a read, which carries none
    if (path === "idempotent") return;
    const read = await drv.request(main(), D);
    expect(read.status).toBe(200);
    expect(read.headers.get("x-service-consistency")).toBeNull();
  },

  async errors(path, drv) {
    const id = `inv-err-${path}-${randomUUID()}`;
    const missing = await drv.request(main(), MISSING, { headers: { "x-request-id": id } });
    expectRefusal(drv, missing, { problem: 404, graphql: 200 }, "not_found");
    const malformed = await drv.malformed.send(main(), `${id}-m`);
    expect(malformed.headers.get("x-request-id")).toBe(`${id}-m`);
    const { status, code } = drv.malformed;
    expectRefusal(drv, malformed, { problem: status, graphql: status }, code);
  },

  async "access-record"(path, drv) {
    const id = `inv-log-${path}-${randomUUID()}`;
    const labels = { route: drv.route, method: drv.method };
    const [count, observed] = [
      await metric("http_requests_total", { ...labels, status: "200" }),
      await metric("http_request_duration_seconds_count", labels),
    ];
    expect((await drv.request(main(), D, { headers: { "x-request-id": id } })).status).toBe(200);
    await expect.poll(() => log.filter((l) => l.reqId === id)).toHaveLength(1);
    expect(log.find((l) => l.reqId === id)).toMatchObject({ msg: "request", level: 30, ...labels, status: 200 });
    expect(await metric("http_requests_total", { ...labels, status: "200" })).toBe(count + 1);
    expect(await metric("http_request_duration_seconds_count", labels)).toBe(observed + 1);
  },

  async "operation-count"(path, drv) {
    const operation = need(drv.operation, "operation name", path);
    const of = async () => [
      await metric("graphql_operations_total", { operation, outcome: "ok" }),
      await metric("graphql_operations_total", { operation, outcome: "error" }),
    ];
    const [ok, error] = await of();
    expect((await drv.request(main(), D)).status).toBe(200);
    expect(await of()).toEqual([ok! + 1, error]);
    // an answer with errors (the direct path runs it again through yoga's pipeline) counts once
    expect(codeOf(await drv.request(main(), MISSING))).toBe("not_found");
    expect(await of()).toEqual([ok! + 1, error! + 1]);
  },

  async "served-by"(path, drv) {
    const servedAs = need(drv.servedAs, "graphql_requests_total path", path);
    const [mine, all] = [await metric("graphql_requests_total", { path: servedAs }), await metric("graphql_requests_total", {})];
    expect((await drv.request(main(), D)).status).toBe(200);
    expect([await metric("graphql_requests_total", { path: servedAs }), await metric("graphql_requests_total", {})]).toEqual([
      mine + 1,
      all + 1,
    ]);
  },
};

// ------------------------------------------------------------------ every row through every path

describe("the table", () => {
  it("names every path in every row, and a kept invariant's shared steps", () => {
    for (const [id, inv] of Object.entries(REQUEST_INVARIANTS) as [string, Invariant][]) {
      expect(Object.keys(inv.paths).sort(), id).toEqual(Object.keys(EXECUTION_PATHS).sort());
      for (const cell of Object.values(inv.paths)) {
        if ("kept" in cell) expect(cell.by.length, id).toBeGreaterThan(0);
        if ("kept" in cell) for (const step of cell.by) expect(typeof step, id).toBe("function");
      }
    }
  });
});

for (const [id, inv] of Object.entries(REQUEST_INVARIANTS) as [InvariantId, Invariant][]) {
  describe(`${id}: ${inv.holds}`, () => {
    for (const path of Object.keys(EXECUTION_PATHS) as ExecutionPath[]) {
      const cell = inv.paths[path];
      const probe = () => PROBES[id](path, DRIVERS[path]);
      // a cell that does not apply names why in the table (a GET has no Idempotency-Key to keep, a
      // stream runs no GraphQL operation): there is nothing on that path to probe
      if ("notApplicable" in cell) continue;
      if ("exception" in cell) it.fails(`${path}: a known exception (${cell.exception})`, probe);
      else it(`${path}: ${cell.kept}`, probe);
    }
  });
}
