// The console's "Send test" (POST /api/v1/settings/safety/hook/test, GraphQL testSafetyHook): a sample
// `comment.check`, marked `"test": true` and made of test data only, sent to the configured hook the
// way a real check is (signed, SSRF-guarded, within timeoutMs) but past its breaker, which it leaves as
// it is, and not counted in the metrics. The answer says what the hook said, or why it said nothing.
import { renderBody } from "../../lib/markdown.js";
import { loadTenant, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { moderationHookOf, type HookDecision } from "./caller.js";
import type { CommentCheck } from "./check.js";

export interface HookTestResult {
  /** the hook answered a decision */
  ok: boolean;
  /** the HTTP status of its answer; null when none came */
  status: number | null;
  decision: HookDecision | null;
  reason: string | null;
  latencyMs: number;
  /** why there is no decision: timeout, network or address refusal, HTTP status, malformed answer */
  error: string | null;
}

const SAMPLE_BODY = "This is a **test comment** sent by the moderation hook's Send test. It was not posted anywhere.";

/** The sample check: clearly test data (ids, names and body say so). */
export function sampleCheck(now: Date): CommentCheck {
  return {
    type: "comment.check",
    action: "create",
    test: true,
    comment: {
      id: "cmt_test",
      discussionId: "test-discussion",
      parentId: null,
      body: SAMPLE_BODY,
      bodyHtml: renderBody(SAMPLE_BODY, { markdown: true, images: false }).html,
      createdAt: now.toISOString(),
    },
    reader: { id: "test-reader", name: "Test Reader", avatarUrl: null, approvedCount: 0, rejectedCount: 0 },
    discussion: { id: "test-discussion", title: "Test discussion", url: null },
  };
}

export async function testSafetyHook(ctx: RequestContext): Promise<HookTestResult> {
  const hook = resolveSettings((await loadTenant(ctx)).settings).safety.hook;
  if (!hook) throw errors.hookNotConfigured();
  let secret: string | null = null;
  try {
    secret = hook.secretEnc ? ctx.app.secretBox.open(hook.secretEnc) : null;
  } catch {
    secret = null;
  }
  if (secret === null) {
    return {
      ok: false,
      status: null,
      decision: null,
      reason: null,
      latencyMs: 0,
      error: "the hook has no usable secret: set its url again to get one",
    };
  }
  const outcome = await moderationHookOf(ctx.app).send({
    url: hook.url,
    secret,
    timeoutMs: hook.timeoutMs,
    body: JSON.stringify(sampleCheck(ctx.app.clock.now())),
  });
  if (outcome.kind === "decision") {
    const { decision, reason, status, latencyMs } = outcome;
    return { ok: true, status, decision, reason, latencyMs, error: null };
  }
  return { ok: false, status: outcome.status, decision: null, reason: null, latencyMs: outcome.latencyMs, error: outcome.error };
}
