-- AlterTable
ALTER TABLE "discussions" ADD COLUMN     "reaction_counts" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "page_reactions" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "page_reactions_pkey" PRIMARY KEY ("tenant_id","discussion_id","reader_id","kind")
);

-- CreateIndex
CREATE INDEX "page_reactions_tenant_id_reader_id_idx" ON "page_reactions"("tenant_id", "reader_id");

-- CreateIndex
CREATE INDEX "page_reactions_tenant_id_created_at_idx" ON "page_reactions"("tenant_id", "created_at");
