// Akismet's check of a new comment (contract section 21, docs/safety.md): the Akismet step of
// screening (src/modules/comments/screening.ts), after the tenant's rules and moderation hook, before
// the comment is written: spam → pending, spam with `X-akismet-pro-tip: discard` → rejected, both with
// the reason `{"source":"akismet"}`; ham → the status the comment gets anyway. A slow or failing Akismet
// (AKISMET_CHECK_TIMEOUT_MS, 2 s) delays the post and never fails it: the comment is written as usual.
// The reader's IP address and user agent (ctx.readerClient) go to Akismet and are stored nowhere.
import { store, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { ReaderIdentity } from "../../auth/identity.js";
import { checkComment, type AkismetSettings } from "./client.js";

export const AKISMET_REASON = { source: "akismet" } as const;

export interface AkismetHold {
  status: "pending" | "rejected";
  reason: typeof AKISMET_REASON;
}

export interface AkismetInput {
  discussionId: string;
  body: string;
  reader: ReaderIdentity;
}

// The discussion's url (the permalink), and whether the write will be refused anyway (a ban or
// suspension in force, as eng_assert_not_banned reads it; a locked or archived discussion) or Akismet's
// verdict would not count (a shadow ban rejects it; a trusted reader skips Akismet): such a post costs
// no call, and Akismet is not told of it.
const CONTEXT = `SELECT d.url, d.state::text AS state,
       EXISTS (SELECT 1 FROM reader_sanctions WHERE tenant_id = $1 AND reader_id = $3 AND lifted_at IS NULL
                  AND (until IS NULL OR until > $4::timestamptz)) AS banned,
       EXISTS (SELECT 1 FROM readers WHERE tenant_id = $1 AND id = $3 AND trust_level = 'trusted') AS trusted
  FROM (SELECT 1) one LEFT JOIN discussions d ON d.tenant_id = $1 AND d.id = $2`;

/** Asks Akismet about a new comment: the status it requires, or null (ham, no answer, or a post refused anyway). */
export async function akismetVerdict(ctx: RequestContext, settings: AkismetSettings, input: AkismetInput): Promise<AkismetHold | null> {
  const tenantId = tenantIdOf(ctx);
  const [discussion] = await store(ctx).sql.query<{ url: string | null; state: string | null; banned: boolean; trusted: boolean }>(
    CONTEXT,
    [input.discussionId, input.reader.id, ctx.app.clock.now()],
    "akismet_context",
  );
  if (!discussion || discussion.banned || discussion.trusted || (discussion.state !== null && discussion.state !== "open")) return null;
  const outcome = await checkComment(ctx.app, settings, {
    userIp: ctx.readerClient?.ip ?? null,
    userAgent: ctx.readerClient?.userAgent ?? null,
    author: input.reader.name,
    content: input.body,
    permalink: discussion?.url ?? null,
  });
  if (outcome.kind === "error") {
    ctx.app.log.warn({ tenantId, error: outcome.error }, "Akismet check failed; the comment is written as usual");
    return null;
  }
  if (outcome.verdict === "ham") return null;
  return { status: outcome.verdict === "discard" ? "rejected" : "pending", reason: AKISMET_REASON };
}
