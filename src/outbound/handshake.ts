/**
 * The verification handshake (API.md §0 "Handshake"): POST
 * `{"type":"verification","challenge":"<64 hex>","timestamp":"<ISO 8601>"}` with
 * `X-Service-Event: verification`, signed like a delivery; the endpoint is verified only when the
 * receiver answers HTTP 200 with JSON `{"challenge": "<same value>"}` within the timeout (30 s).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { DeliveryError, type WebhookHttpClient } from "./http-client.js";
import { signPayload, standardWebhooksHeaders } from "./signature.js";
import type { SigningKey } from "./secrets.js";

export const HANDSHAKE_TIMEOUT_MS = 30_000;

export interface HandshakeResult {
  verified: boolean;
  error?: string;
}

export function newChallenge(): string {
  return randomBytes(32).toString("hex");
}

export async function performHandshake(
  http: WebhookHttpClient,
  opts: {
    url: string;
    challenge: string;
    key: SigningKey;
    /** every secret valid now, the signing one first (the Standard Webhooks signature lists each) */
    secrets: readonly string[];
    now: Date;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<HandshakeResult> {
  const body = JSON.stringify({ type: "verification", challenge: opts.challenge, timestamp: opts.now.toISOString() });
  const signed = signPayload({ secret: opts.key.secret, timestamp: opts.now, rawBody: body, kid: opts.key.kid });
  const deliveryId = randomUUID();
  // a handshake is not an event: its webhook-id names this verification request
  const standard = standardWebhooksHeaders({ id: `verification:${deliveryId}`, timestamp: opts.now, rawBody: body, secrets: opts.secrets });
  let res;
  try {
    res = await http.post({
      url: opts.url,
      body,
      timeoutMs: opts.timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      headers: {
        "content-type": "application/json",
        "x-service-signature": signed.header,
        "x-service-timestamp": signed.timestampIso,
        "x-service-event": "verification",
        "x-service-delivery-id": deliveryId,
        ...standard,
      },
    });
  } catch (err) {
    if (err instanceof DeliveryError) {
      const what = err.kind === "timeout" ? `no answer within ${opts.timeoutMs} ms` : err.message;
      return { verified: false, error: `${err.kind}: ${what}` };
    }
    throw err;
  }
  if (res.statusCode !== 200) return { verified: false, error: `receiver answered HTTP ${res.statusCode}, expected 200` };
  let answer: unknown;
  try {
    answer = JSON.parse(res.body);
  } catch {
    return { verified: false, error: "receiver's answer is not JSON" };
  }
  const echoed = typeof answer === "object" && answer !== null ? (answer as { challenge?: unknown }).challenge : undefined;
  if (echoed !== opts.challenge) return { verified: false, error: "receiver did not echo the challenge" };
  return { verified: true };
}
