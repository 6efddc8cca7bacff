-- AlterTable
ALTER TABLE "import_staged_comments" ADD COLUMN     "legacy_id" TEXT;
