-- AlterTable
ALTER TABLE "federation_discussions" ADD COLUMN     "activity_id" TEXT;
