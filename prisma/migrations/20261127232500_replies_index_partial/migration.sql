-- A comment's replies are read from an index of replies alone: a first-level comment (a post's most
-- common kind) is written into no index for replies.
DROP INDEX IF EXISTS "comments_tenant_id_discussion_id_parent_id_status_created_a_idx";
CREATE INDEX "comments_replies_idx" ON "comments" ("tenant_id", "discussion_id", "parent_id", "status", "created_at", "id") WHERE "parent_id" IS NOT NULL;
