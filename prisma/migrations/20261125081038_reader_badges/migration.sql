-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "badge" TEXT,
ADD COLUMN     "badge_source" TEXT;
