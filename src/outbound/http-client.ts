/**
 * Outbound HTTP for webhook deliveries and handshakes.
 *
 * One POST, no retries (the delivery queue owns retrying), no redirects (a 3xx is returned as
 * a status, which the caller counts as a failure), non-2xx returned rather than thrown.
 *
 * SSRF / DNS rebinding: the URL policy of url-guard is enforced again at send time. IP-literal
 * hosts are checked before any connection; hostnames go through a custom `dnsLookup` that
 * resolves and refuses the connection if ANY resolved address is refused by `checkAddress`,
 * so the address actually connected to is the one that was checked. Plain http is only allowed
 * under the development flag and only to loopback addresses.
 *
 * The response body is read as a stream and the download is aborted once it exceeds
 * `maxResponseBytes` (nothing unbounded is buffered). Decompressed bytes are counted.
 *
 * Errors: `post` resolves for every HTTP response (any status) and rejects only with a
 * `DeliveryError` whose `kind` is:
 *   - "timeout"            — no complete response within `timeoutMs`;
 *   - "network"            — connection/DNS/TLS/protocol failure, or aborted via `signal`;
 *   - "blocked_address"    — the URL or a resolved address is refused by the policy
 *                            (nothing was sent);
 *   - "response_too_large" — the body exceeded `maxResponseBytes`; `statusCode` and `headers`
 *                            of the response are on the error, so a caller may still treat a
 *                            2xx as delivered.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import got, { type Got } from "got";
import { checkAddress, checkUrlShape, classifyAddress, type AddressPolicy } from "./url-guard.js";

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const DEFAULT_USER_AGENT = "engagement-service-webhooks/1";

export type DeliveryErrorKind = "timeout" | "network" | "blocked_address" | "response_too_large";

export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  readonly kind: DeliveryErrorKind;
  /** Time from the start of `post` until the failure. */
  readonly durationMs: number;
  /** Only for "response_too_large": the status line and headers that did arrive. */
  readonly statusCode?: number;
  readonly headers?: IncomingHttpHeaders;

  constructor(
    kind: DeliveryErrorKind,
    message: string,
    extra: { durationMs?: number; statusCode?: number; headers?: IncomingHttpHeaders; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.kind = kind;
    this.durationMs = extra.durationMs ?? 0;
    if (extra.statusCode !== undefined) this.statusCode = extra.statusCode;
    if (extra.headers !== undefined) this.headers = extra.headers;
  }
}

/** Resolves a hostname to all its addresses (injectable for tests / custom DNS). */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface WebhookHttpClientOptions extends AddressPolicy {
  /** Response bodies above this many bytes abort the request. Default 64 KiB. */
  maxResponseBytes?: number;
  /** Defaults to dns.lookup(hostname, { all: true }). */
  lookup?: HostLookup;
  /** Keep-alive sockets per origin. Default 16. */
  maxSocketsPerHost?: number;
}

export interface WebhookRequest {
  url: string | URL;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WebhookResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text (at most maxResponseBytes bytes). */
  body: string;
  durationMs: number;
}

export interface WebhookHttpClient {
  post(request: WebhookRequest): Promise<WebhookResponse>;
  /** A GET under the same rules (identity providers' discovery documents and key sets). */
  get(request: Omit<WebhookRequest, "body">): Promise<WebhookResponse>;
  /** Destroys the keep-alive sockets. */
  close(): void;
}

const BLOCKED_CODE = "ERR_WEBHOOK_BLOCKED_ADDRESS";
const TOO_LARGE_CODE = "ERR_WEBHOOK_RESPONSE_TOO_LARGE";

class CodedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function defaultHostLookup(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses);
    });
  });
}

/**
 * A net `lookup` that resolves, then refuses the connection unless every address passes the
 * policy (and, for plain http, is loopback).
 */
function guardedLookup(policy: AddressPolicy, requireLoopback: boolean, resolveHost: HostLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = wanted === 0 ? all : all.filter((a) => a.family === wanted);
        if (addresses.length === 0) {
          const err = new CodedError("ENOTFOUND", `no addresses for ${hostname}`);
          callback(err as NodeJS.ErrnoException, "", 0);
          return;
        }
        for (const { address } of addresses) {
          const verdict = checkAddress(address, { ...policy, hostname });
          if (!verdict.allowed || (requireLoopback && verdict.category !== "loopback")) {
            const err = new CodedError(BLOCKED_CODE, `${hostname} resolves to ${address} (${verdict.category}), which is not allowed`);
            callback(err as NodeJS.ErrnoException, "", 0);
            return;
          }
        }
        if (options.all) {
          callback(null, addresses);
        } else {
          const first = addresses[0] as LookupAddress;
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => {
        callback((err instanceof Error ? err : new Error(String(err))) as NodeJS.ErrnoException, "", 0);
      },
    );
  };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

function findInChain(err: unknown, code: string): Error | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (errorCode(current) === code) return current;
    current = current.cause;
  }
  return undefined;
}

function hasHeader(headers: Readonly<Record<string, string>>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

export function createWebhookHttpClient(options: WebhookHttpClientOptions): WebhookHttpClient {
  const policy: AddressPolicy = { allowHttpLoopback: options.allowHttpLoopback, allowList: [...options.allowList] };
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const resolveHost = options.lookup ?? defaultHostLookup;
  const maxSockets = options.maxSocketsPerHost ?? 16;
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets }),
    https: new https.Agent({ keepAlive: true, maxSockets }),
  };

  const client: Got = got.extend({
    agent: agents,
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    http2: false,
    cache: false,
  });

  /**
   * The caller's signal is not handed to got: got keeps its abort listener on the signal after a
   * request has finished (aborting it later destroys the finished stream with an error nobody
   * listens to, an uncaught exception), and its signal handling cost about a fifth of a delivery's
   * client CPU. Instead, while the request runs, an abort destroys its stream.
   */
  async function send(
    method: "POST" | "GET",
    request: Omit<WebhookRequest, "body"> & { body?: string | Buffer },
  ): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const signal = request.signal;
    if (signal?.aborted) throw new DeliveryError("network", "request aborted", { durationMs: 0 });
    const blocked = (message: string) => new DeliveryError("blocked_address", message, { durationMs: elapsed() });
    // the same URL rules as at registration (url-guard.ts), then the address at connect time
    const shape = checkUrlShape(request.url, policy);
    if (!shape.ok) throw blocked(shape.message);
    const { url, isHttp } = shape;
    // IP literals never reach dnsLookup, so check them here.
    const literal = url.hostname.replace(/^\[|\]$/g, "");
    if (classifyAddress(literal) !== "invalid") {
      const verdict = checkAddress(literal, policy);
      if (!verdict.allowed || (isHttp && verdict.category !== "loopback")) {
        throw blocked(`address ${literal} (${verdict.category}) is not allowed`);
      }
    }

    const headers: Record<string, string> = { ...request.headers };
    if (!hasHeader(headers, "user-agent")) headers["user-agent"] = DEFAULT_USER_AGENT;

    const stream = client.stream(url, {
      method,
      ...(request.body === undefined ? {} : { body: request.body }),
      headers,
      timeout: { request: request.timeoutMs },
      dnsLookup: guardedLookup(policy, isHttp, resolveHost),
    });
    const onAbort = () => stream.destroy(new CodedError("ABORT_ERR", "request aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });

    let statusCode: number | undefined;
    let responseHeaders: IncomingHttpHeaders = {};
    stream.once("response", (res: http.IncomingMessage) => {
      statusCode = res.statusCode;
      responseHeaders = res.headers;
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) {
        stream.destroy(new CodedError(TOO_LARGE_CODE, `response declares ${declared} bytes`));
      }
    });

    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          tooLarge = true;
          break; // leaving the loop destroys the stream and its socket
        }
        chunks.push(chunk);
      }
    } catch (err) {
      if (findInChain(err, TOO_LARGE_CODE)) {
        tooLarge = true;
      } else {
        throw toDeliveryError(err, elapsed(), signal);
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (tooLarge) {
      stream.destroy();
      throw new DeliveryError("response_too_large", `response body exceeds ${maxBytes} bytes`, {
        durationMs: elapsed(),
        ...(statusCode === undefined ? {} : { statusCode }),
        headers: responseHeaders,
      });
    }
    if (statusCode === undefined) {
      throw new DeliveryError("network", "no response", { durationMs: elapsed() });
    }
    return {
      statusCode,
      headers: responseHeaders,
      body: Buffer.concat(chunks).toString("utf8"),
      durationMs: elapsed(),
    };
  }

  return {
    post: (request) => send("POST", request),
    get: (request) => send("GET", request),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function toDeliveryError(err: unknown, durationMs: number, signal: AbortSignal | undefined): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const blockedErr = findInChain(err, BLOCKED_CODE);
  if (blockedErr) return new DeliveryError("blocked_address", blockedErr.message, { durationMs, cause: err });
  const name = err instanceof Error ? err.name : "";
  const message = err instanceof Error ? err.message : String(err);
  if (name === "TimeoutError" || errorCode(err) === "ETIMEDOUT") {
    return new DeliveryError("timeout", message, { durationMs, cause: err });
  }
  if (signal?.aborted || name === "AbortError") {
    return new DeliveryError("network", "request aborted", { durationMs, cause: err });
  }
  const code = errorCode(err);
  return new DeliveryError("network", code && !message.includes(code) ? `${code}: ${message}` : message, {
    durationMs,
    cause: err,
  });
}

/**
 * The client as a `fetch` for GETs and POSTs (jose's remote JWKS and OIDC discovery, Fedify's
 * document loader, the AT Protocol's XRPC calls take one): the same SSRF guard, no redirects, the answer bounded; the caller's signal aborts, `timeoutMs` bounds the whole.
 * Every failure rejects, as fetch does.
 */
export function guardedFetch(
  client: WebhookHttpClient,
  timeoutMs: number,
): (
  url: string,
  init: { method?: string; headers?: Headers; body?: string | Uint8Array | null; signal?: AbortSignal },
) => Promise<Response> {
  return async (url, init) => {
    const headers: Record<string, string> = {};
    init.headers?.forEach((value, name) => (headers[name] = value));
    const request = { url, headers, timeoutMs, ...(init.signal ? { signal: init.signal } : {}) };
    const method = (init.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST") throw new TypeError(`${method} is not sent through the guarded client`);
    const res =
      method === "POST"
        ? await client.post({ ...request, body: typeof init.body === "string" ? init.body : Buffer.from(init.body ?? new Uint8Array()) })
        : await client.get(request);
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (typeof value === "string") out.set(name, value);
      else if (Array.isArray(value)) for (const v of value) out.append(name, v);
    }
    return new Response(res.body, { status: res.statusCode, headers: out });
  };
}
