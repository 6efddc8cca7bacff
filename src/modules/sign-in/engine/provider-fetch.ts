// The one way hosted sign-in reaches an OIDC or OAuth 2 provider (contract section 20): openid-client's
// `customFetch` made of the webhooks' HTTP client (src/outbound/http-client.ts), so discovery,
// the token exchange, userinfo and the key set all go through the SSRF guard of
// src/outbound/url-guard.ts — the URL's shape, and every address the host resolves to when
// the connection is made (ALLOW_HTTP_WEBHOOKS, WEBHOOK_ALLOWLIST) — with no redirects followed, a
// bounded answer (the client's maxResponseBytes, 64 KiB) and `PROVIDER_TIMEOUT_MS` for the whole call.
// A refused address, a timeout or a network failure rejects with the client's DeliveryError.
import type { CustomFetch } from "openid-client";
import type { WebhookHttpClient } from "../../../outbound/http-client.js";

/** Each call to a provider, from the request to the end of its answer. */
export const PROVIDER_TIMEOUT_MS = 5_000;

const USER_AGENT = "engagement-service-sign-in/1";

/** statuses whose Response must have no body */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function providerFetch(client: WebhookHttpClient, timeoutMs = PROVIDER_TIMEOUT_MS): CustomFetch {
  return async (url, options) => {
    const headers: Record<string, string> = { "user-agent": USER_AGENT, ...options.headers };
    const signal = options.signal ? { signal: options.signal } : {};
    let res;
    if (options.method === "GET") {
      res = await client.get({ url, headers, timeoutMs, ...signal });
    } else if (options.method === "POST") {
      const body = options.body;
      let text: string;
      if (body === undefined || body === null) text = "";
      else if (typeof body === "string") text = body;
      else if (body instanceof URLSearchParams) text = body.toString();
      else if (body instanceof Uint8Array) text = Buffer.from(body).toString("utf8");
      else throw new TypeError("a provider request's body must be a form or a string");
      res = await client.post({ url, headers, body: text, timeoutMs, ...signal });
    } else {
      throw new TypeError(`hosted sign-in sends no ${options.method} requests`);
    }
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (typeof value === "string") out.set(name, value);
      else if (Array.isArray(value)) for (const v of value) out.append(name, v);
    }
    // a status fetch's Response cannot carry (below 200, above 599) is a failure of the call
    if (res.statusCode < 200 || res.statusCode > 599) throw new TypeError(`the provider answered HTTP ${res.statusCode}`);
    return new Response(NULL_BODY.has(res.statusCode) ? null : res.body, { status: res.statusCode, headers: out });
  };
}
