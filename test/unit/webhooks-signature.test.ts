import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  generateKid,
  generateSecret,
  parseSignatureHeader,
  signPayload,
  verifyWebhook,
  type PlainHeaders,
} from "../../src/outbound/signature.js";

/** Independent reference implementation of the contract's formula. */
function referenceHmac(secret: string, timestampIso: string, body: Buffer): string {
  return createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(timestampIso + ".", "utf8"), body]))
    .digest("hex");
}

const SECRET = "whsec_test-secret-one";
const SECRET_2 = "whsec_test-secret-two";
const KID = "0a1b2c3d";
const KID_2 = "deadbeef";
const at = new Date("2026-11-21T10:00:00.123Z");
const body = JSON.stringify({ id: "evt_1", type: "comment_created", data: { text: "héllo ✓" } });

function headersFor(secret = SECRET, kid = KID, ts = at, raw: string | Buffer = body): PlainHeaders {
  const signed = signPayload({ secret, timestamp: ts, rawBody: raw, kid });
  return { "X-Service-Signature": signed.header, "X-Service-Timestamp": signed.timestampIso };
}

describe("signPayload", () => {
  it("matches an independent HMAC over timestamp + '.' + raw body bytes", () => {
    const signed = signPayload({ secret: SECRET, timestamp: at, rawBody: body, kid: KID });
    expect(signed.timestampIso).toBe("2026-11-21T10:00:00.123Z");
    const expected = referenceHmac(SECRET, "2026-11-21T10:00:00.123Z", Buffer.from(body, "utf8"));
    expect(signed.v1).toBe(expected);
    expect(signed.header).toBe(`t=${Math.floor(at.getTime() / 1000)},v1=${expected},kid=${KID}`);
    expect(signed.header).toMatch(/^t=\d+,v1=[0-9a-f]{64},kid=[0-9a-f]{8}$/);
  });

  it("signs Buffer bodies byte-for-byte like strings", () => {
    const raw = Buffer.from([0xff, 0x00, 0x7b, 0x7d]);
    const signed = signPayload({ secret: SECRET, timestamp: at, rawBody: raw, kid: KID });
    expect(signed.v1).toBe(referenceHmac(SECRET, at.toISOString(), raw));
  });
});

describe("verifyWebhook", () => {
  const now = new Date(at.getTime() + 10_000);
  const secrets = [{ kid: KID, secret: SECRET }];

  it("accepts a valid signature (plain object headers, any case)", () => {
    expect(verifyWebhook(headersFor(), body, secrets, { now })).toEqual({ ok: true, kid: KID });
    const lower = Object.fromEntries(Object.entries(headersFor()).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook(lower, Buffer.from(body), secrets, { now }).ok).toBe(true);
  });

  it("accepts a hand-built header (independent computation) and a Headers instance", () => {
    const ts = at.toISOString();
    const v1 = referenceHmac(SECRET, ts, Buffer.from(body));
    const h = new Headers({
      "x-service-signature": `t=${Math.floor(at.getTime() / 1000)},v1=${v1},kid=${KID}`,
      "x-service-timestamp": ts,
    });
    expect(verifyWebhook(h, body, secrets, { now })).toEqual({ ok: true, kid: KID });
  });

  it("rejects a tampered body", () => {
    expect(verifyWebhook(headersFor(), body.replace("héllo", "hello"), secrets, { now })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
  });

  it("rejects the wrong secret", () => {
    expect(verifyWebhook(headersFor(), body, [{ kid: KID, secret: "whsec_other" }], { now })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
    expect(verifyWebhook(headersFor(), body, ["whsec_other"], { now })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
  });

  it("rejects timestamps outside the tolerance, both directions", () => {
    const old = new Date(at.getTime() - 301_000);
    expect(verifyWebhook(headersFor(SECRET, KID, old), body, secrets, { now: at })).toEqual({
      ok: false,
      reason: "timestamp_out_of_tolerance",
    });
    const future = new Date(at.getTime() + 301_000);
    expect(verifyWebhook(headersFor(SECRET, KID, future), body, secrets, { now: at }).ok).toBe(false);
    // Within a custom tolerance.
    expect(verifyWebhook(headersFor(SECRET, KID, old), body, secrets, { now: at, toleranceSeconds: 600 }).ok).toBe(true);
  });

  it("rejects a t= that disagrees with X-Service-Timestamp", () => {
    const h = headersFor();
    const sig = String(h["X-Service-Signature"]).replace(/^t=\d+/, `t=${Math.floor(at.getTime() / 1000) - 1000}`);
    expect(verifyWebhook({ ...h, "X-Service-Signature": sig }, body, secrets, { now })).toEqual({
      ok: false,
      reason: "timestamp_mismatch",
    });
  });

  it("rejects a replayed signature with a swapped timestamp header", () => {
    const h = headersFor();
    const shifted = new Date(at.getTime() + 200).toISOString(); // same second, different string
    expect(verifyWebhook({ ...h, "X-Service-Timestamp": shifted }, body, secrets, { now })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
  });

  it("verifies both kids during rotation", () => {
    const both = [
      { kid: KID, secret: SECRET },
      { kid: KID_2, secret: SECRET_2 },
    ];
    expect(verifyWebhook(headersFor(SECRET, KID), body, both, { now })).toEqual({ ok: true, kid: KID });
    expect(verifyWebhook(headersFor(SECRET_2, KID_2), body, both, { now })).toEqual({ ok: true, kid: KID_2 });
    // kid named in the header is not among the configured ones
    expect(verifyWebhook(headersFor(SECRET_2, KID_2), body, [{ kid: KID, secret: SECRET }], { now })).toEqual({
      ok: false,
      reason: "unknown_kid",
    });
    // a kid pointing at the wrong secret does not verify with the other one
    expect(verifyWebhook(headersFor(SECRET_2, KID), body, both, { now })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
  });

  it("tries every plain-string secret", () => {
    expect(verifyWebhook(headersFor(SECRET_2, KID_2), body, [SECRET, SECRET_2], { now })).toEqual({
      ok: true,
      kid: KID_2,
    });
  });

  it("never throws on malformed input", () => {
    const ts = at.toISOString();
    const good = headersFor();
    const cases: Array<[unknown, string]> = [
      [{}, "missing_signature"],
      [{ "x-service-signature": "garbage", "x-service-timestamp": ts }, "malformed_signature"],
      [{ "x-service-signature": "t=abc,v1=00", "x-service-timestamp": ts }, "malformed_signature"],
      [{ "x-service-signature": `t=1,v1=${"z".repeat(64)}`, "x-service-timestamp": ts }, "malformed_signature"],
      [{ "x-service-signature": `t=1,v1=${"a".repeat(63)}`, "x-service-timestamp": ts }, "malformed_signature"],
      [{ "x-service-signature": "kid=0a1b2c3d", "x-service-timestamp": ts }, "malformed_signature"],
      [{ "x-service-signature": good["X-Service-Signature"] }, "missing_timestamp"],
      [{ "x-service-signature": good["X-Service-Signature"], "x-service-timestamp": "yesterday" }, "malformed_timestamp"],
      [{ "x-service-signature": good["X-Service-Signature"], "x-service-timestamp": "1795255200" }, "malformed_timestamp"],
      [{ "x-service-signature": ["a", "b"], "x-service-timestamp": ts }, "missing_signature"],
      [{ "x-service-signature": 42, "x-service-timestamp": ts }, "missing_signature"],
    ];
    for (const [headers, reason] of cases) {
      expect(verifyWebhook(headers as PlainHeaders, body, [SECRET], { now })).toEqual({ ok: false, reason });
    }
    expect(verifyWebhook(null as unknown as PlainHeaders, body, [SECRET], { now }).ok).toBe(false);
    expect(verifyWebhook(good, 123 as unknown as string, [SECRET], { now }).ok).toBe(false);
    expect(verifyWebhook(good, body, [], { now })).toEqual({ ok: false, reason: "no_secrets" });
    expect(verifyWebhook(good, body, null as unknown as string[], { now })).toEqual({ ok: false, reason: "no_secrets" });
    const throwing = {
      get() {
        throw new Error("boom");
      },
    };
    expect(verifyWebhook(throwing, body, [SECRET], { now }).ok).toBe(false);
  });

  it("parses headers with spaces and unknown fields", () => {
    const v1 = "a".repeat(64);
    expect(parseSignatureHeader(` t=1 , v1=${v1} , v0=x , kid=0a1b2c3d `)).toEqual({ t: 1, v1: [v1], kid: "0a1b2c3d" });
  });
});

describe("secret and kid generation", () => {
  it("produces the documented formats and unique values", () => {
    const s = generateSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateSecret()).not.toBe(s);
    const k = generateKid();
    expect(k).toMatch(/^[0-9a-f]{8}$/);
  });
});
