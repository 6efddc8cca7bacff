// The moderation hook's step of screening (src/modules/comments/screening.ts, where it stands in the
// list and how its decision combines with the others'): asks the tenant's hook (`safety.hook`,
// docs/safety.md) about a new or edited comment (src/modules/moderation-hook/caller.ts: signed,
// SSRF-guarded, within timeoutMs, behind a breaker) and answers its decision and the reason to record.
//
// The hook's decisions: `reject` → rejected, `hold` → pending, `approve` → no objection. A timeout, a
// failure or an open breaker applies `onTimeout` the same way, with a `fallback` reason. A comment
// whose write will be refused anyway, or whose verdict would not count, costs no call (buildCheck).
import type { RequestContext } from "../../context/request.js";
import type { ReaderIdentity } from "../../auth/identity.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import type { ScreeningSubject } from "../comments/screening-subject.js";
import { moderationHookOf, type HookDecision, type HookOutcome } from "./caller.js";
import { tenantIdOf, store } from "../../context/request.js";

export type HookReason =
  | { source: "hook"; decision: HookDecision; reason?: string }
  | { source: "hook"; fallback: "timeout" | "error" | "breaker_open"; decision: HookDecision; error: string };

/** The hook's decision on a comment and the reason to record with it. */
export interface HookJudgement {
  decision: HookDecision;
  reason: HookReason;
}

/** The body of a `comment.check` request (docs/safety.md). */
export interface CommentCheck {
  type: "comment.check";
  /** the wire's word for screening's action: a `post` is asked about as `create` (buildCheck, the one place that maps it) */
  action: "create" | "edit";
  /** only in the console's "Send test" */
  test?: true;
  comment: {
    id: string;
    discussionId: string;
    parentId: string | null;
    body: string;
    bodyHtml: string;
    createdAt: string;
    editedAt?: string;
  };
  reader: { id: string; name: string; avatarUrl: string | null; approvedCount: number; rejectedCount: number };
  discussion: { id: string; title: string | null; url: string | null };
}

interface ContextRow {
  approved: number;
  rejected: number;
  /** a sanction in force (eng_assert_not_banned will refuse the write; a shadow ban will reject it) */
  banned: boolean;
  /** a trusted reader (contract section 21): the hook is not asked */
  trusted: boolean;
  title: string | null;
  url: string | null;
  state: string | null;
}

interface EditRow extends ContextRow {
  discussion_id: string | null;
  parent_id: string | null;
  created_at: Date | null;
  author_id: string | null;
  status: string | null;
}

// One statement each: the reader's counts (comments_author_idx), whether a sanction is in force (as
// eng_assert_not_banned reads it), and the discussion (and, for an edit, the comment) beside them.
const COUNTS = `(SELECT count(*) FILTER (WHERE status = 'approved')::int AS approved,
                        count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
                        EXISTS (SELECT 1 FROM reader_sanctions WHERE tenant_id = $1 AND reader_id = $2 AND lifted_at IS NULL
                                   AND (until IS NULL OR until > $4::timestamptz)) AS banned,
                        EXISTS (SELECT 1 FROM readers WHERE tenant_id = $1 AND id = $2 AND trust_level = 'trusted') AS trusted
                   FROM comments WHERE tenant_id = $1 AND author_id = $2) r`;
const CREATE_CONTEXT = `SELECT r.approved, r.rejected, r.banned, r.trusted, d.title, d.url, d.state::text AS state FROM ${COUNTS}
  LEFT JOIN discussions d ON d.tenant_id = $1 AND d.id = $3`;
const EDIT_CONTEXT = `SELECT r.approved, r.rejected, r.banned, r.trusted, d.title, d.url, d.state::text AS state,
       c.discussion_id, c.parent_id, c.created_at, c.author_id, c.status::text AS status FROM ${COUNTS}
  LEFT JOIN comments c ON c.tenant_id = $1 AND c.id = $3
  LEFT JOIN discussions d ON d.tenant_id = $1 AND d.id = c.discussion_id`;

const readerOf = (reader: ReaderIdentity, row: ContextRow): CommentCheck["reader"] => ({
  id: reader.id,
  name: reader.name,
  avatarUrl: reader.avatarUrl,
  approvedCount: row.approved,
  rejectedCount: row.rejected,
});

/**
 * The check to send, or null when the write will be refused anyway (a banned or suspended reader, a
 * locked or archived discussion; for an edit: a missing or deleted comment, another author's, a
 * closed edit window) or its verdict would not count (a shadow-banned or a trusted reader): such a
 * request costs no hook call, and the hook is not told of it.
 */
async function buildCheck(ctx: RequestContext, settings: Settings, input: ScreeningSubject): Promise<CommentCheck | null> {
  const now = ctx.app.clock.now();
  if (input.action === "post") {
    const [row] = await store(ctx).sql.query<ContextRow>(CREATE_CONTEXT, [input.reader.id, input.discussionId, now], "hook_create_context");
    if (!row || row.banned || row.trusted || (row.state !== null && row.state !== "open")) return null;
    return {
      type: "comment.check",
      action: "create",
      comment: {
        id: input.commentId,
        discussionId: input.discussionId,
        parentId: input.parentId,
        body: input.body,
        bodyHtml: input.rendered.html,
        createdAt: now.toISOString(),
      },
      reader: readerOf(input.reader, row),
      discussion: { id: input.discussionId, title: row.title, url: row.url },
    };
  }
  const [row] = await store(ctx).sql.query<EditRow>(EDIT_CONTEXT, [input.reader.id, input.commentId, now], "hook_edit_context");
  if (
    !row ||
    row.banned ||
    row.trusted ||
    !row.discussion_id ||
    !row.created_at ||
    row.author_id !== input.reader.id ||
    row.status === "deleted"
  )
    return null;
  if (row.state !== "open") return null;
  const window = settings.editWindowSeconds;
  if (window > 0 && now.getTime() - new Date(row.created_at).getTime() > window * 1000) return null;
  return {
    type: "comment.check",
    action: "edit",
    comment: {
      id: input.commentId,
      discussionId: row.discussion_id,
      parentId: row.parent_id,
      body: input.body,
      bodyHtml: input.rendered.html,
      createdAt: new Date(row.created_at).toISOString(),
      editedAt: now.toISOString(),
    },
    reader: readerOf(input.reader, row),
    discussion: { id: row.discussion_id, title: row.title, url: row.url },
  };
}

/** The hook's outcome as a decision and the reason to record. */
export function decisionOf(outcome: HookOutcome, onTimeout: HookDecision): HookJudgement {
  if (outcome.kind === "decision") {
    return {
      decision: outcome.decision,
      reason: { source: "hook", decision: outcome.decision, ...(outcome.reason === null ? {} : { reason: outcome.reason }) },
    };
  }
  return { decision: onTimeout, reason: { source: "hook", fallback: outcome.kind, decision: onTimeout, error: outcome.error } };
}

/** Asks the tenant's hook about the comment screened (its body as written and as rendered); null when there is no hook or nothing to ask. */
export async function askHook(ctx: RequestContext, settings: Settings, input: ScreeningSubject): Promise<HookJudgement | null> {
  const hook = settings.safety.hook;
  if (!hook) return null;
  const check = await buildCheck(ctx, settings, input);
  if (!check) return null;
  const tenantId = tenantIdOf(ctx);
  let secret: string | null = null;
  try {
    secret = hook.secretEnc ? ctx.app.secretBox.open(hook.secretEnc) : null;
  } catch {
    secret = null; // sealed under another key: reported by the secret box, answered as a failure here
  }
  let outcome: HookOutcome;
  if (secret === null) {
    ctx.app.metrics.moderationHookCalls.inc({ outcome: "error" });
    outcome = { kind: "error", error: "the hook has no usable secret: set its url again to get one", status: null, latencyMs: 0 };
  } else {
    outcome = await moderationHookOf(ctx.app).check({
      tenantId,
      url: hook.url,
      secret,
      timeoutMs: hook.timeoutMs,
      body: JSON.stringify(check),
      breaker: settings.delivery,
    });
  }
  if (outcome.kind === "timeout" || outcome.kind === "error") {
    ctx.app.log.warn(
      { tenantId, outcome: outcome.kind, status: outcome.status, error: outcome.error },
      "moderation hook failed; onTimeout applies",
    );
  }
  return decisionOf(outcome, hook.onTimeout);
}
