-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "revision" INTEGER NOT NULL DEFAULT 0;
