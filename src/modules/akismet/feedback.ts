// Akismet learns from the moderators (contract section 21, docs/safety.md): approving a comment Akismet
// held (its reason `{"source":"akismet"}`) sends `submit-ham`; rejecting a published comment while the
// tenant has Akismet sends `submit-spam` (it was checked and passed, unless it was written before
// Akismet was set or while Akismet did not answer). Sent after the moderator's change is committed,
// best effort, off the request path: a failure is logged, never retried, never fails the moderation.
// The reader's IP address and user agent were never stored, so these calls go without them.
import { store, tenantIdOf, type RequestContext } from "../../context/request.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { loadTenant } from "../../context/request.js";
import { submitComment, type AkismetComment } from "./client.js";

interface Before {
  status: string;
  source: string | null;
  body: string;
  author: string;
  url: string | null;
}

const BEFORE = `SELECT c.status::text AS status, c.moderation_reason ->> 'source' AS source, c.body,
       COALESCE(c.author_name, r.name, '') AS author, d.url
  FROM comments c
  LEFT JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  LEFT JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
 WHERE c.tenant_id = $1 AND c.id = $2`;

/** What a moderator's status change will tell Akismet, read before the change: a function to call after it, or null. */
export async function akismetFeedback(ctx: RequestContext, id: string, to: "approved" | "rejected"): Promise<(() => void) | null> {
  const akismet = resolveSettings((await loadTenant(ctx)).settings).safety.akismet;
  if (!akismet) return null;
  const [row] = await store(ctx).sql.query<Before>(BEFORE, [id], "akismet_feedback");
  if (!row) return null;
  const call =
    to === "approved" && row.status !== "approved" && row.source === "akismet"
      ? "submit-ham"
      : to === "rejected" && row.status === "approved"
        ? "submit-spam"
        : null;
  if (!call) return null;
  const comment: AkismetComment = { userIp: null, userAgent: null, author: row.author, content: row.body, permalink: row.url };
  const tenantId = tenantIdOf(ctx);
  return () => {
    void submitComment(ctx.app, akismet, call, comment).then((r) => {
      if (!r.ok) ctx.app.log.warn({ tenantId, commentId: id, call, error: r.error }, "Akismet feedback failed");
    });
  };
}
