-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "published_at" TIMESTAMPTZ(3);
