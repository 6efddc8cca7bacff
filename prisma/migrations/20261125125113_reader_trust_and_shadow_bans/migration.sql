-- CreateEnum
CREATE TYPE "TrustLevel" AS ENUM ('trusted', 'default', 'premoderated');

-- AlterTable
ALTER TABLE "reader_sanctions" ADD COLUMN     "shadow" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "trust_level" "TrustLevel" NOT NULL DEFAULT 'default';

-- A shadow-banned reader's own comments, which their reads of a discussion show them as published
-- (src/modules/comments/read.ts): partial, so Prisma's schema cannot say it (as comments_recent_idx)
CREATE INDEX "comments_shadow_idx" ON "comments" ("tenant_id", "author_id", "discussion_id") WHERE "moderation_reason" ->> 'source' = 'shadow_ban';
