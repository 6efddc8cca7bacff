-- Follow jobs not yet done become jobs of the outbound queue, where they resume after their last reader
INSERT INTO "webhook_deliveries" (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
SELECT id, tenant_id, 'follow',
       jsonb_build_object('discussionId', discussion_id, 'commentId', comment_id, 'authorId', author_id, 'after', "after"),
       next_attempt_at, created_at, created_at
  FROM "follow_jobs";

-- DropForeignKey
ALTER TABLE "follow_jobs" DROP CONSTRAINT "follow_jobs_tenant_id_fkey";

-- DropTable
DROP TABLE "follow_jobs";
