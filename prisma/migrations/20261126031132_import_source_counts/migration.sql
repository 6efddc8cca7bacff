-- AlterTable
ALTER TABLE "import_staged_comments" ADD COLUMN     "downvotes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "reaction_counts" JSONB,
ADD COLUMN     "upvotes" INTEGER NOT NULL DEFAULT 0;
