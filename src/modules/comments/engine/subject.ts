// A comment as the jobs that speak of it outside a request read it, as it is now, in one statement on
// the tenant's store: its body, status, reader, discussion and the site. A chat alert and its link's
// page (src/modules/alerts) show it, and its links compare its revision and edit with the alert's;
// Akismet's submit-ham / submit-spam send it (src/modules/akismet).
import type { TenantStore } from "../../../db/tenant-store.js";
import type { CommentStatus } from "../../../generated/prisma/enums.js";

export interface CommentSubject {
  id: string;
  body: string;
  status: CommentStatus;
  moderationReason: unknown;
  /** changes of its status or text since it was written (comments.revision) */
  revision: number;
  editedAt: Date | null;
  readerId: string;
  readerName: string;
  discussionId: string;
  discussionTitle: string | null;
  discussionUrl: string | null;
  site: string;
}

const READ = `SELECT c.id, c.body, c.status::text AS status, c.moderation_reason AS "moderationReason", c.revision,
       c.edited_at AS "editedAt", c.author_id AS "readerId",
       coalesce(c.author_name, r.name, c.author_id) AS "readerName", c.discussion_id AS "discussionId",
       d.title AS "discussionTitle", d.url AS "discussionUrl", t.name AS site
  FROM comments c
  JOIN tenants t ON t.id = $1
  LEFT JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  LEFT JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
 WHERE c.tenant_id = $1 AND c.id = $2`;

/** The comment with its reader, discussion and site; null when there is none. */
export async function readCommentSubject(store: TenantStore, commentId: string): Promise<CommentSubject | null> {
  const [row] = await store.sql.query<CommentSubject>(READ, [commentId], "comment_subject");
  return row ?? null;
}
