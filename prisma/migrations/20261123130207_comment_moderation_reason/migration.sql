-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "moderation_reason" JSONB;

-- CreateIndex
CREATE INDEX "comments_author_idx" ON "comments"("tenant_id", "author_id", "created_at");
