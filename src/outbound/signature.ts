/**
 * Webhook signatures (API.md §0 "Delivery" / "Signature").
 *
 * Wire format, sent on every delivery and handshake:
 *
 *   X-Service-Timestamp: 2026-11-21T10:00:00.123Z            (Date.toISOString(), ms precision)
 *   X-Service-Signature: t=1795255200,v1=<64 hex>,kid=<8 hex>
 *
 *   v1 = hex(HMAC-SHA256(key = secret, X-Service-Timestamp + "." + raw body bytes))
 *
 * The HMAC key is the secret string exactly as handed out (including its `whsec_` prefix),
 * taken as UTF-8 bytes. `t` is the same instant in whole unix seconds; it is not part of the
 * signed bytes, so receivers must check that it agrees with X-Service-Timestamp (verifyWebhook
 * does). During secret rotation the service signs with the newest secret and `kid` names it;
 * receivers keep both secrets for the 24 h overlap.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-service-signature";
export const TIMESTAMP_HEADER = "x-service-timestamp";
export const SECRET_PREFIX = "whsec_";
export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-f]{64}$/i;
const UNIX_SECONDS = /^\d{1,15}$/;
/** Strict ISO 8601 UTC as produced by Date.toISOString() (fraction optional, offsets allowed). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export interface SignPayloadInput {
  secret: string;
  timestamp: Date;
  rawBody: string | Uint8Array;
  kid: string;
}

export interface SignedPayload {
  /** Value for the X-Service-Signature header. */
  header: string;
  /** Value for the X-Service-Timestamp header (the signed timestamp string). */
  timestampIso: string;
  /** The hex HMAC. */
  v1: string;
}

function toBytes(body: string | Uint8Array): Buffer {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** hex(HMAC-SHA256(secret, timestampIso + "." + rawBody)). */
export function computeV1(secret: string, timestampIso: string, rawBody: string | Uint8Array): string {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(Buffer.from(`${timestampIso}.`, "utf8"))
    .update(toBytes(rawBody))
    .digest("hex");
}

/** Signs one outgoing request. The same instant feeds X-Service-Timestamp and `t`. */
export function signPayload({ secret, timestamp, rawBody, kid }: SignPayloadInput): SignedPayload {
  const timestampIso = timestamp.toISOString();
  const t = Math.floor(timestamp.getTime() / 1000);
  const v1 = computeV1(secret, timestampIso, rawBody);
  return { header: `t=${t},v1=${v1},kid=${kid}`, timestampIso, v1 };
}

// ---------------------------------------------------------------------------------------------
// Standard Webhooks (API.md §8, https://www.standardwebhooks.com): the same secret, other headers
// ---------------------------------------------------------------------------------------------

/**
 * The Standard Webhooks form of an endpoint secret: `whsec_` + base64 of the HMAC key bytes. The key
 * bytes are the same as for X-Service-Signature (the UTF-8 bytes of the secret string), so one secret
 * serves both schemes, and the `standardwebhooks`/`svix` libraries take this value as it is.
 */
export function standardWebhooksSecret(secret: string): string {
  return SECRET_PREFIX + Buffer.from(secret, "utf8").toString("base64");
}

/**
 * `webhook-id`, `webhook-timestamp` (unix seconds of the same instant as X-Service-Timestamp) and
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one space-separated
 * entry per secret valid now (the newest first; the previous one during its 24 h rotation overlap).
 */
export function standardWebhooksHeaders(opts: { id: string; timestamp: Date; rawBody: string | Uint8Array; secrets: readonly string[] }): {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
} {
  const ts = String(Math.floor(opts.timestamp.getTime() / 1000));
  const signed = Buffer.concat([Buffer.from(`${opts.id}.${ts}.`, "utf8"), toBytes(opts.rawBody)]);
  const signature = opts.secrets
    .map((secret) => `v1,${createHmac("sha256", Buffer.from(secret, "utf8")).update(signed).digest("base64")}`)
    .join(" ");
  return { "webhook-id": opts.id, "webhook-timestamp": ts, "webhook-signature": signature };
}

/** A fresh endpoint secret: `whsec_` + base64url of 32 CSPRNG bytes (43 chars). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/** A fresh key id: 8 lowercase hex chars. */
export function generateKid(): string {
  return randomBytes(4).toString("hex");
}

// ---------------------------------------------------------------------------------------------
// Receiver side
// ---------------------------------------------------------------------------------------------

/** Anything with a case-insensitive `get`, e.g. the WHATWG `Headers` class. */
export interface HeadersLike {
  get(name: string): string | null | undefined;
}

/** Node's IncomingHttpHeaders, fastify's request.headers, or any plain object. */
export type PlainHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookSecret = string | { kid: string; secret: string };

export interface VerifyOptions {
  /** Maximum |now − X-Service-Timestamp|, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Current time; defaults to `new Date()`. */
  now?: Date;
}

export type VerifyFailureReason =
  | "no_secrets"
  | "missing_signature"
  | "malformed_signature"
  | "missing_timestamp"
  | "malformed_timestamp"
  | "timestamp_mismatch"
  | "timestamp_out_of_tolerance"
  | "unknown_kid"
  | "signature_mismatch";

export type VerifyResult =
  | { ok: true; /** kid of the secret that matched; null if a kid-less secret matched a kid-less header */ kid: string | null }
  | { ok: false; reason: VerifyFailureReason };

interface ParsedSignature {
  t: number;
  v1: string[];
  kid: string | null;
}

function isHeadersLike(h: unknown): h is HeadersLike {
  return typeof h === "object" && h !== null && typeof (h as { get?: unknown }).get === "function";
}

function readHeader(headers: HeadersLike | PlainHeaders | null | undefined, name: string): string | null {
  if (headers === null || typeof headers !== "object") return null;
  let value: unknown;
  if (isHeadersLike(headers)) {
    try {
      value = headers.get(name);
    } catch {
      return null;
    }
  } else {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (Array.isArray(value)) value = value.length === 1 ? value[0] : undefined;
  return typeof value === "string" ? value : null;
}

/** Parses `t=..,v1=..,kid=..`. Several v1 entries are accepted; unknown keys are ignored. */
export function parseSignatureHeader(header: string): ParsedSignature | null {
  let t: number | null = null;
  let kid: string | null = null;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (t !== null || !UNIX_SECONDS.test(value)) return null;
      t = Number(value);
    } else if (key === "v1") {
      if (!HEX_SHA256.test(value)) return null;
      v1.push(value.toLowerCase());
    } else if (key === "kid") {
      if (kid !== null || value === "") return null;
      kid = value;
    }
  }
  if (t === null || v1.length === 0) return null;
  return { t, v1, kid };
}

function safeEqualHex(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, "hex");
  const b = Buffer.from(bHex, "hex");
  if (a.length !== b.length || a.length === 0) return false;
  return timingSafeEqual(a, b);
}

/**
 * Verifies an incoming webhook request. Never throws: any malformed input yields
 * `{ ok: false, reason }`.
 *
 * - `headers`: plain object (keys matched case-insensitively) or Headers-like (`get`).
 * - `rawBody`: the exact bytes received, before any JSON parsing.
 * - `secrets`: `{ kid, secret }` entries (keep both during rotation) or plain secret strings.
 *   If the header names a kid, only secrets with that kid are tried, plus any plain strings;
 *   without a kid in the header every secret is tried.
 * - The timestamp check uses X-Service-Timestamp (the signed value); `t` must name the same second.
 */
export function verifyWebhook(
  headers: HeadersLike | PlainHeaders,
  rawBody: string | Uint8Array,
  secrets: readonly WebhookSecret[],
  options: VerifyOptions = {},
): VerifyResult {
  try {
    return verifyUnsafe(headers, rawBody, secrets, options);
  } catch {
    return { ok: false, reason: "malformed_signature" };
  }
}

function verifyUnsafe(
  headers: HeadersLike | PlainHeaders,
  rawBody: string | Uint8Array,
  secrets: readonly WebhookSecret[],
  options: VerifyOptions,
): VerifyResult {
  if (!Array.isArray(secrets) || secrets.length === 0) return { ok: false, reason: "no_secrets" };
  if (typeof rawBody !== "string" && !(rawBody instanceof Uint8Array)) {
    return { ok: false, reason: "signature_mismatch" };
  }

  const sigHeader = readHeader(headers, SIGNATURE_HEADER);
  if (sigHeader === null || sigHeader.trim() === "") return { ok: false, reason: "missing_signature" };
  const parsed = parseSignatureHeader(sigHeader);
  if (parsed === null) return { ok: false, reason: "malformed_signature" };

  const timestampIso = readHeader(headers, TIMESTAMP_HEADER);
  if (timestampIso === null || timestampIso === "") return { ok: false, reason: "missing_timestamp" };
  const tsMs = ISO_8601.test(timestampIso) ? Date.parse(timestampIso) : Number.NaN;
  if (!Number.isFinite(tsMs)) return { ok: false, reason: "malformed_timestamp" };
  if (Math.floor(tsMs / 1000) !== parsed.t) return { ok: false, reason: "timestamp_mismatch" };

  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowMs = (options.now ?? new Date()).getTime();
  if (!Number.isFinite(nowMs) || !(Math.abs(nowMs - tsMs) <= tolerance * 1000)) {
    return { ok: false, reason: "timestamp_out_of_tolerance" };
  }

  const entries = secrets
    .map((s) => (typeof s === "string" ? { kid: null, secret: s } : { kid: s.kid, secret: s.secret }))
    .filter((s): s is { kid: string | null; secret: string } => typeof s.secret === "string" && s.secret !== "");
  const candidates = parsed.kid === null ? entries : entries.filter((s) => s.kid === null || s.kid === parsed.kid);
  if (candidates.length === 0) {
    return { ok: false, reason: entries.length === 0 ? "no_secrets" : "unknown_kid" };
  }

  let matchedKid: string | null | undefined;
  // Check every candidate (no early exit) so timing does not reveal which one matched.
  for (const candidate of candidates) {
    const expected = computeV1(candidate.secret, timestampIso, rawBody);
    let hit = false;
    for (const given of parsed.v1) hit = safeEqualHex(expected, given) || hit;
    if (hit && matchedKid === undefined) matchedKid = candidate.kid ?? parsed.kid;
  }
  if (matchedKid === undefined) return { ok: false, reason: "signature_mismatch" };
  return { ok: true, kid: matchedKid };
}
