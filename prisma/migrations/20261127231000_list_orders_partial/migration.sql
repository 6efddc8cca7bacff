-- The orders by a count read their comments with a count from partial indexes, the rest (most
-- comments, and every new one) from comments_list_newest_idx (src/modules/comments/read.ts, PARTS):
-- a post writes one list index instead of four.
DROP INDEX IF EXISTS "comments_list_top_idx";
DROP INDEX IF EXISTS "comments_list_score_idx";
DROP INDEX IF EXISTS "comments_list_best_idx";
CREATE INDEX "comments_list_top_idx" ON "comments" ("tenant_id", "discussion_id", "pinned" DESC, "reaction_total" DESC, "created_at" DESC, "id" DESC) WHERE "reaction_total" > 0;
CREATE INDEX "comments_list_best_idx" ON "comments" ("tenant_id", "discussion_id", "pinned" DESC, "vote_best" DESC, "created_at" DESC, "id" DESC) WHERE "vote_best" > 0;
CREATE INDEX "comments_list_score_idx" ON "comments" ("tenant_id", "discussion_id", "pinned" DESC, "score" DESC, "created_at" DESC, "id" DESC) WHERE "score" <> 0;
