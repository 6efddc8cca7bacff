-- CreateEnum
CREATE TYPE "FollowMode" AS ENUM ('all', 'off');

-- AlterTable
ALTER TABLE "email_items" ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'reply',
ALTER COLUMN "event_id" DROP NOT NULL;

-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "subscription_emails" "ReplyEmails" NOT NULL DEFAULT 'off';

-- CreateTable
CREATE TABLE "discussion_subscriptions" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "mode" "FollowMode" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "discussion_subscriptions_pkey" PRIMARY KEY ("tenant_id","discussion_id","reader_id")
);

-- CreateTable
CREATE TABLE "follow_jobs" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "author_id" TEXT NOT NULL,
    "after" TEXT NOT NULL DEFAULT '',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "locked_by" TEXT,
    "claim_token" UUID,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "follow_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "discussion_subscriptions_tenant_id_reader_id_idx" ON "discussion_subscriptions"("tenant_id", "reader_id");

-- CreateIndex
CREATE INDEX "follow_jobs_next_attempt_at_idx" ON "follow_jobs"("next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "follow_jobs_tenant_id_comment_id_key" ON "follow_jobs"("tenant_id", "comment_id");

-- AddForeignKey
ALTER TABLE "discussion_subscriptions" ADD CONSTRAINT "discussion_subscriptions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "follow_jobs" ADD CONSTRAINT "follow_jobs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
