// The console's "Send test" of a chat alert (POST /api/v1/settings/alerts/{index}/test, GraphQL
// testAlert): a sample message in the alert's chat format, marked as a test and made of test data only
// (no Approve or Reject links: there is no comment to act on), sent at once to the saved alert's URL
// through the webhooks' client (the same SSRF guard, timeout and response limits as every alert). The
// answer says what the chat answered, or why it answered nothing. Nothing is queued or retried.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { DeliveryError } from "../../outbound/http-client.js";
import { renderAlert, type AlertMessage } from "./engine/messages.js";
import { alertUrl } from "./settings.js";

export interface AlertTestResult {
  /** the chat accepted the message (2xx) */
  ok: boolean;
  /** the HTTP status of its answer; null when none came */
  status: number | null;
  latencyMs: number;
  /** why it was not accepted: a timeout, a refused address, the network, or the HTTP status with the start of its answer */
  error: string | null;
}

/** The sample: clearly test data (ids, names and body say so). */
export function sampleAlert(site: string, now: Date): AlertMessage {
  return {
    site,
    trigger: "pending",
    test: true,
    comment: { id: "cmt_test", body: "This is a test alert from the console's Send test. No comment was posted." },
    reader: { id: "test-reader", name: "Test Reader" },
    discussion: { id: "test-discussion", title: "Test discussion", url: null },
    reason: "A test: real alerts name the comment's reason and carry Approve and Reject links",
    links: null,
    at: now,
  };
}

export async function testAlert(ctx: RequestContext, index: number): Promise<AlertTestResult> {
  const tenant = await loadTenant(ctx);
  const settings = resolveSettings(tenant.settings);
  const alert = Number.isInteger(index) && index >= 0 ? settings.alerts[index] : undefined;
  if (!alert) throw errors.alertNotConfigured(index);
  const timeoutMs = settings.delivery.attemptTimeoutMs;
  try {
    const res = await ctx.app.webhooks.http.post({
      url: alertUrl(ctx.app.secretBox, alert),
      headers: { "content-type": "application/json" },
      body: renderAlert(alert.kind, sampleAlert(tenant.name, ctx.app.clock.now())),
      timeoutMs,
    });
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const said = res.body.trim().slice(0, 200);
    return {
      ok,
      status: res.statusCode,
      latencyMs: Math.round(res.durationMs),
      error: ok ? null : `HTTP ${res.statusCode}${said ? `: ${said}` : ""}`,
    };
  } catch (err) {
    if (!(err instanceof DeliveryError)) throw err;
    const what = err.kind === "timeout" ? `no response within ${timeoutMs} ms` : err.message;
    return {
      ok: false,
      status: err.statusCode ?? null,
      latencyMs: Math.round(err.durationMs),
      error: `${err.kind}: ${what}`.slice(0, 500),
    };
  }
}
