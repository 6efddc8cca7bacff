-- Comment search as a projection of the event log (src/modules/comments/engine/search-projector.ts):
-- a comment's search document leaves `comments` (its generated column search_vector and the GIN index
-- comments_search_idx, computed inside every post's INSERT) for a table of its own, comment_search,
-- which the projector writes off the write path; search_positions says how far it has followed each
-- discussion's events.
-- The existing documents are copied from the column, which already holds them (no text is parsed
-- again), and each discussion's position is its head: the documents hold every event so far. The
-- whole script is one transaction, so no write falls between the copy and the drop.

-- CreateTable
CREATE TABLE "comment_search" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "author_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "vector" tsvector,

    CONSTRAINT "comment_search_pkey" PRIMARY KEY ("tenant_id","discussion_id","comment_id")
);

-- CreateTable
CREATE TABLE "search_positions" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,

    CONSTRAINT "search_positions_pkey" PRIMARY KEY ("tenant_id","discussion_id")
);

-- the documents of the comments that have one: neither deleted nor by an erased reader (author '')
INSERT INTO "comment_search" ("tenant_id", "discussion_id", "comment_id", "author_id", "created_at", "vector")
SELECT "tenant_id", "discussion_id", "id", "author_id", "created_at", "search_vector" FROM "comments"
 WHERE "status" <> 'deleted' AND "author_id" <> '';

INSERT INTO "search_positions" ("tenant_id", "discussion_id", "seq")
SELECT "tenant_id", "id", "seq" FROM "discussions";

-- CreateIndex (after the copy: one build each instead of an entry at a time)
CREATE INDEX "comment_search_vector_idx" ON "comment_search" USING GIN ("vector");

-- CreateIndex
CREATE INDEX "comment_search_newest_idx" ON "comment_search"("tenant_id", "created_at" DESC, "comment_id" DESC);

-- CreateIndex
CREATE INDEX "comment_search_discussion_idx" ON "comment_search"("tenant_id", "discussion_id", "created_at" DESC, "comment_id" DESC);

-- CreateIndex
CREATE INDEX "comment_search_author_idx" ON "comment_search"("tenant_id", "author_id", "created_at" DESC, "comment_id" DESC);

-- DropIndex
DROP INDEX "comments_search_idx";

-- AlterTable
ALTER TABLE "comments" DROP COLUMN "search_vector";
