-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "body_html" TEXT;

-- AlterTable
ALTER TABLE "import_staged_comments" ADD COLUMN     "body_html" TEXT;

-- The comments the start-up backfill still has to render (src/modules/comments/engine/render-backfill.ts):
-- partial, so empty once they are done, and Prisma's schema cannot say it (as comments_queue_idx)
CREATE INDEX "comments_body_unrendered_idx" ON "comments" ("id") WHERE "body_html" IS NULL;
