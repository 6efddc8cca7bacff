-- AlterTable
ALTER TABLE "discussions" ADD COLUMN     "followed" BOOLEAN NOT NULL DEFAULT false;

-- the discussions someone follows with `all` already
UPDATE "discussions" d SET "followed" = true
 WHERE EXISTS (SELECT 1 FROM "discussion_subscriptions" s
                WHERE s."tenant_id" = d."tenant_id" AND s."discussion_id" = d."id" AND s."mode" = 'all');
