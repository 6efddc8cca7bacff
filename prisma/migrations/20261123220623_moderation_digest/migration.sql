-- AlterTable
ALTER TABLE "operators" ADD COLUMN     "moderation_digest" TEXT NOT NULL DEFAULT 'off',
ADD COLUMN     "moderation_digest_due_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "operators_moderation_digest_due_at_idx" ON "operators"("moderation_digest_due_at");
