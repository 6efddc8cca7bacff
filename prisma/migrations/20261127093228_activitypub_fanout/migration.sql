-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'activitypub_fanout';

-- DropIndex
DROP INDEX "federation_discussions_announced_at_idx";

-- AlterTable
ALTER TABLE "federation_discussions" DROP COLUMN "delivered_seq";
