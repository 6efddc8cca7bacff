// Black-box helpers for the contract suite (test/contract/*.test.ts): written from the contract alone
// (nothing from src/ is imported): a CLI runner, each file's tenants, keys and readers, an HTTP
// client, problem/shape expectations, an SSE reader and a loopback webhook receiver. The server
// they talk to is the one test/support/contract-server.ts starts for the run.
import { runProcess } from "./process.js";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, inject } from "vitest";
import { ADMIN_JWT_SECRET } from "./contract-server.js";

export { runProcess, type Run } from "./process.js";
export { ADMIN_JWT_SECRET, freePort, startServerProcess, terminate } from "./contract-server.js";
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const COMMENT_FIELDS = [
  "id",
  "discussionId",
  "parentId",
  "author",
  "body",
  "bodyHtml",
  "status",
  "pinned",
  "editedAt",
  "createdAt",
  "reactions",
  "replyCount",
  "score",
  "upvotes",
  "downvotes",
  "kind",
].sort();
export const DEFAULT_KINDS = ["like", "love", "laugh", "wow", "sad", "angry"];

export interface Tenant {
  tenantId: string;
  adminToken: string;
  apiKey: string;
  identitySecret: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns without throwing (or the timeout passes, then rethrows). */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await sleep(intervalMs);
    }
  }
}

export function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject("databaseUrl"), ADMIN_JWT_SECRET };
  for (const k of ["REDIS_URL", "LOG_LEVEL", "DATA_DIR", "SECRET_ENCRYPTION_KEY", "PORT"]) delete env[k];
  return env;
}

export const cli = (...args: string[]) => runProcess(process.execPath, ["bin/engagement.js", ...args], cliEnv());

export async function createTenant(name: string): Promise<Tenant> {
  const r = await cli("tenant", "create", "--name", name, "--json");
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Tenant;
}

export interface ContractRun {
  A: Tenant; // the main tenant
  B: Tenant; // "the other tenant"
  ada: string; // A's readers' identities
  bob: string;
  modKey: string; // A's keys (raw values): moderate_content only
  plainKey: string; // no capabilities
  mgrKey: string; // manage_api_keys only
}

/** A file's two tenants, made with the CLI (A the main one, B "the other tenant"); points `api` at the run's server. */
export async function contractTenants(): Promise<Pick<ContractRun, "A" | "B">> {
  setBase(inject("contractBase"));
  const [A, B] = await Promise.all([createTenant("Acme"), createTenant("Beta")]);
  return { A, B };
}

/** contractTenants, A's readers Ada and Bob, and A's keys made as test/contract/keys.test.ts makes them. */
export async function contractRun(): Promise<ContractRun> {
  const { A, B } = await contractTenants();
  const key = async (res: Promise<Res>) => {
    const r = await res;
    expectStatus(r, 201);
    return r.body.key as string;
  };
  const [modKey, plainKey, mgrKey] = await Promise.all([
    key(
      api.post("/admin/keys", {
        admin: A.adminToken,
        json: { label: "moderation bot", capabilities: ["moderate_content"], expiresAt: null },
      }),
    ),
    key(api.post("/keys", { key: A.apiKey, json: { label: "publisher", capabilities: [], expiresAt: null } })),
    key(api.post("/keys", { key: A.apiKey, json: { label: "key manager", capabilities: ["manage_api_keys"] } })),
  ]);
  const ada = identity(A.identitySecret, "u-ada", "Ada");
  const bob = identity(A.identitySecret, "u-bob", "Bob");
  return { A, B, ada, bob, modKey, plainKey, mgrKey };
}

/** A problem document's `required` (asserted present), as JSON text. */
export function res_required(res: Res): string {
  expect(res.body.required, "problem body names `required`").toBeDefined();
  return JSON.stringify(res.body.required);
}

export const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** An HS256 JWT signed with `secret` (or an unsigned `alg: none` one). */
export function jwt(secret: string, payload: Record<string, unknown>, alg: "HS256" | "none" = "HS256"): string {
  const head = b64url({ alg, typ: "JWT" });
  const body = b64url(payload);
  if (alg === "none") return `${head}.${body}.`;
  const sig = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${sig}`;
}

export const now = () => Math.floor(Date.now() / 1000);

/** A reader identity assertion (section 3): HS256 with the tenant's identity secret. */
export function identity(secret: string, sub: string, name: string, extra: Record<string, unknown> = {}): string {
  const iat = now();
  return jwt(secret, { sub, name, iat, exp: iat + 600, ...extra });
}

export let BASE = "";
/** The base URL of the server under test (set once it listens). */
export function setBase(url: string): void {
  BASE = url;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface CallOpts {
  key?: string;
  admin?: string;
  identity?: string;
  json?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** One HTTP call to the service; `path` is relative to the origin (e.g. `/api/v1/keys`). */
export async function call(method: string, path: string, o: CallOpts = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.key) headers["x-api-key"] = o.key;
  if (o.admin) headers.authorization = `Bearer ${o.admin}`;
  if (o.identity) headers["x-service-identity"] = o.identity;
  let body: string | undefined;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers["content-type"] = o.contentType ?? "application/json";
  } else if (o.raw !== undefined) {
    body = o.raw;
    headers["content-type"] = o.contentType ?? "application/json";
  }
  const res = await fetch(`${BASE}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: any = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

export const api = {
  get: (p: string, o?: CallOpts) => call("GET", `/api/v1${p}`, o),
  post: (p: string, o?: CallOpts) => call("POST", `/api/v1${p}`, o),
  put: (p: string, o?: CallOpts) => call("PUT", `/api/v1${p}`, o),
  patch: (p: string, o?: CallOpts) => call("PATCH", `/api/v1${p}`, o),
  del: (p: string, o?: CallOpts) => call("DELETE", `/api/v1${p}`, o),
};

/** Asserts an RFC 9457 problem document with the given status and code. */
export function expectProblem(res: Res, status: number, code: string) {
  const where = `${status} ${code} expected; got ${res.status} ${res.text.slice(0, 400)}`;
  expect(res.status, where).toBe(status);
  expect(res.headers.get("content-type") ?? "", where).toMatch(/^application\/problem\+json/);
  expect(typeof res.body, where).toBe("object");
  expect(res.body.code, where).toBe(code);
  expect(res.body.status, where).toBe(status);
  expect(typeof res.body.type, where).toBe("string");
  expect(typeof res.body.title, where).toBe("string");
  expect(typeof res.body.detail, where).toBe("string");
}

export function expectStatus(res: Res, status: number) {
  expect(res.status, `expected ${status}, got ${res.status} ${res.text.slice(0, 400)}`).toBe(status);
}

/** The comment shape of sections 4 and 18: every field with its type (`exact`: and no other field but, with an identity, myVote). */
export function expectComment(c: any, exact = false) {
  if (exact)
    expect(
      Object.keys(c)
        .filter((k) => k !== "myVote")
        .sort(),
      JSON.stringify(c),
    ).toEqual(COMMENT_FIELDS);
  if ("myVote" in c) expect([1, -1, 0]).toContain(c.myVote);
  for (const f of COMMENT_FIELDS) expect(c, JSON.stringify(c)).toHaveProperty(f);
  expect(typeof c.id).toBe("string");
  expect(typeof c.discussionId).toBe("string");
  expect(c.parentId === null || typeof c.parentId === "string").toBe(true);
  // section 4's author, with section 21's badge (null when none)
  expect(Object.keys(c.author).sort()).toEqual(["avatarUrl", "badge", "id", "name"]);
  expect(c.author.badge === null || typeof c.author.badge === "string").toBe(true);
  expect(typeof c.author.id).toBe("string");
  expect(typeof c.author.name).toBe("string");
  expect(c.author.avatarUrl === null || typeof c.author.avatarUrl === "string").toBe(true);
  expect(typeof c.body).toBe("string");
  expect(typeof c.bodyHtml).toBe("string");
  expect(["approved", "pending", "rejected", "deleted"]).toContain(c.status);
  expect(typeof c.pinned).toBe("boolean");
  expect(c.editedAt === null || ISO_MS.test(c.editedAt)).toBe(true);
  expect(c.createdAt).toMatch(ISO_MS);
  expect(typeof c.reactions).toBe("object");
  expect(c.reactions).not.toBeNull();
  for (const v of Object.values(c.reactions)) expect(typeof v).toBe("number");
  expect(typeof c.replyCount).toBe("number");
  for (const n of [c.score, c.upvotes, c.downvotes]) expect(Number.isInteger(n)).toBe(true);
  expect(c.score).toBe(c.upvotes - c.downvotes);
  expect(["comment", "mention"]).toContain(c.kind);
}

/** The event envelope of section 5. */
export function expectEnvelope(e: any, type: string, discussionId: string, tenantId: string) {
  expect(Object.keys(e).sort(), JSON.stringify(e)).toEqual(["data", "discussionId", "id", "occurredAt", "seq", "tenantId", "type"].sort());
  expect(typeof e.id).toBe("string");
  expect(Number.isInteger(e.seq)).toBe(true);
  expect(e.type).toBe(type);
  expect(e.tenantId).toBe(tenantId);
  expect(e.discussionId).toBe(discussionId);
  expect(e.occurredAt).toMatch(ISO_MS);
  expect(typeof e.data).toBe("object");
}

export function expectCollection(res: Res) {
  expectStatus(res, 200);
  expect(Object.keys(res.body).sort()).toEqual(["items", "nextCursor"]);
  expect(Array.isArray(res.body.items)).toBe(true);
  expect(res.body.nextCursor === null || typeof res.body.nextCursor === "string").toBe(true);
}

// ── SSE reader over fetch's body stream ──

export interface Frame {
  id?: string;
  event: string;
  data: any;
  rawData: string;
}

export interface Stream {
  res: Response;
  /** the server closed the stream */
  ended: boolean;
  frames: Frame[];
  comments: string[];
  /** domain frames (everything but the framing events) */
  events(): Frame[];
  waitFor(pred: (frames: Frame[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** `path` is under /api/v1 unless it starts with /graphql; `init` for POST (graphql-sse). */
export async function openStream(
  path: string,
  headers: Record<string, string> = {},
  init: { method?: string; body?: string } = {},
): Promise<Stream> {
  const ctrl = new AbortController();
  const url = path.startsWith("/graphql") ? `${BASE}${path}` : `${BASE}/api/v1${path}`;
  const res = await fetch(url, { ...init, headers: { accept: "text/event-stream", ...headers }, signal: ctrl.signal });
  const frames: Frame[] = [];
  const comments: string[] = [];
  const s: Stream = {
    res,
    ended: false,
    frames,
    comments,
    events: () => frames.filter((f) => f.event !== "connected" && f.event !== "connection-timeout"),
    waitFor: (pred, timeoutMs = 10_000) =>
      eventually(() => {
        if (!pred(frames)) throw new Error(`stream condition not met; frames: ${JSON.stringify(frames.map((f) => [f.event, f.id]))}`);
      }, timeoutMs),
    close: () => ctrl.abort(),
  };
  if (res.ok && res.body) {
    void (async () => {
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let buf = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) {
            s.ended = true;
            break;
          }
          buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
          let idx: number;
          while ((idx = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, idx);
            buf = buf.slice(idx + 2);
            let id: string | undefined;
            let event = "message";
            const data: string[] = [];
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) {
                comments.push(line);
                continue;
              }
              const c = line.indexOf(":");
              const field = c < 0 ? line : line.slice(0, c);
              const value = c < 0 ? "" : line.slice(c + 1).replace(/^ /, "");
              if (field === "id") id = value;
              else if (field === "event") event = value;
              else if (field === "data") data.push(value);
            }
            if (data.length === 0 && id === undefined && event === "message") continue;
            const rawData = data.join("\n");
            let parsed: any = rawData;
            try {
              parsed = JSON.parse(rawData);
            } catch {
              /* keep raw */
            }
            frames.push({ id, event, data: parsed, rawData });
          }
        }
      } catch {
        /* aborted */
      }
    })();
  } else {
    await res.body?.cancel().catch(() => {});
  }
  return s;
}

// ── loopback webhook receiver ──

export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  raw: string;
  json: any;
  event: string | undefined;
  path: string;
  method: string;
}

export interface Receiver {
  url: string;
  requests: Received[];
  handshakes(): Received[];
  deliveries(): Received[];
  close(): Promise<void>;
}

/**
 * `answerHandshake: false` answers the handshake with a wrong challenge (endpoint stays unverified);
 * `deliveryStatus(n)` picks the status of the n-th attempt of one event (counted per
 * X-Service-Idempotency-Key, 1-based; default 200).
 */
export async function startReceiver(answerHandshake = true, deliveryStatus: (n: number) => number = () => 200): Promise<Receiver> {
  const requests: Received[] = [];
  const attempts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let json: any;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      const event = req.headers["x-service-event"] as string | undefined;
      requests.push({ at: Date.now(), headers: req.headers, raw, json, event, path: req.url ?? "", method: req.method ?? "" });
      res.setHeader("content-type", "application/json");
      if (event === "verification") {
        res.statusCode = 200;
        res.end(JSON.stringify({ challenge: answerHandshake ? json?.challenge : "0".repeat(64) }));
      } else {
        const ik = String(req.headers["x-service-idempotency-key"]);
        attempts.set(ik, (attempts.get(ik) ?? 0) + 1);
        res.statusCode = deliveryStatus(attempts.get(ik)!);
        res.end(JSON.stringify({ ok: res.statusCode < 300 }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    handshakes: () => requests.filter((r) => r.event === "verification"),
    deliveries: () => requests.filter((r) => r.event !== "verification"),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
