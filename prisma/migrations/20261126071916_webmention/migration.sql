-- CreateEnum
CREATE TYPE "CommentKind" AS ENUM ('comment', 'mention');

-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'webmention';

-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "kind" "CommentKind" NOT NULL DEFAULT 'comment';

-- CreateTable
CREATE TABLE "webmentions" (
    "tenant_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "comment_id" TEXT,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "verified_at" TIMESTAMPTZ(3),

    CONSTRAINT "webmentions_pkey" PRIMARY KEY ("tenant_id","source","target")
);

-- CreateIndex
CREATE INDEX "discussions_url_idx" ON "discussions"("url");

-- AddForeignKey
ALTER TABLE "webmentions" ADD CONSTRAINT "webmentions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
