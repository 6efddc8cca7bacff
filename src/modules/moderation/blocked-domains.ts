// Blocking a domain (settings federation.blockedDomains, contract section 24) hides that domain's
// comments already here: every visible or held comment of a fediverse reader (`ap:<actor id>`) or a
// webmention's (`wm:<source origin>`) whose host is a newly blocked domain, or under one, is rejected
// as a moderator would reject it (setCommentStatus: the counts, comment_rejected to moderators, the
// audit entry). Unblocking brings none back: a moderator may approve them one by one. Runs after the
// settings are saved, in the PATCH's request, a comment at a time.
import { store, type RequestContext } from "../../context/request.js";
import { domainOfUrl, isDomainListed } from "../../lib/domain-name.js";
import { setCommentStatus } from "./moderation.js";

const REMOTE_READERS = `SELECT r.id FROM readers r WHERE r.tenant_id = $1 AND (r.id LIKE 'ap:%' OR r.id LIKE 'wm:%')`;
const SHOWN_OR_HELD = `SELECT c.id FROM comments c
  WHERE c.tenant_id = $1 AND c.author_id = ANY($2::text[]) AND c.status <> 'rejected' AND c.deleted_at IS NULL
  ORDER BY c.created_at, c.id`;

/** The domains `after` lists that `before` did not (what a PATCH newly blocked). */
export function newlyBlocked(before: readonly string[], after: readonly string[]): string[] {
  return after.filter((d) => !before.includes(d));
}

/** Rejects the comments of the remote readers of `domains`; answers how many it rejected. */
export async function rejectCommentsOfDomains(ctx: RequestContext, domains: readonly string[]): Promise<number> {
  if (domains.length === 0) return 0;
  const readers = await store(ctx).sql.query<{ id: string }>(REMOTE_READERS, [], "remote_readers");
  const blocked = readers
    .map((r) => r.id)
    .filter((id) => {
      const host = domainOfUrl(id.slice(3));
      return host !== null && isDomainListed(host, domains);
    });
  if (blocked.length === 0) return 0;
  const comments = await store(ctx).sql.query<{ id: string }>(SHOWN_OR_HELD, [blocked], "remote_comments_shown_or_held");
  for (const c of comments) await setCommentStatus(ctx, c.id, "rejected");
  return comments.length;
}
