-- DropIndex
DROP INDEX "comments_tenant_id_discussion_id_status_created_at_id_idx";

-- CreateIndex
CREATE INDEX "comments_list_newest_idx" ON "comments"("tenant_id", "discussion_id", "pinned" DESC, "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "comments_list_oldest_idx" ON "comments"("tenant_id", "discussion_id", "pinned" DESC, "created_at", "id");

-- CreateIndex
CREATE INDEX "comments_list_top_idx" ON "comments"("tenant_id", "discussion_id", "pinned" DESC, "reaction_total" DESC, "created_at" DESC, "id" DESC);
