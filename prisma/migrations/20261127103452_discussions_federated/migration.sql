-- AlterTable
ALTER TABLE "discussions" ADD COLUMN     "federated" BOOLEAN NOT NULL DEFAULT false;

-- the discussions federated so far
UPDATE "discussions" d SET "federated" = true
  FROM "federation_discussions" f
 WHERE f.tenant_id = d.tenant_id AND f.discussion_id = d.id;
