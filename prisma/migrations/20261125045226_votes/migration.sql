-- AlterTable
ALTER TABLE "comments" ADD COLUMN     "downvotes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "score" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "upvotes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "vote_best" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "votes" (
    "tenant_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "value" SMALLINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "votes_pkey" PRIMARY KEY ("comment_id","reader_id")
);

-- CreateIndex
CREATE INDEX "votes_tenant_id_reader_id_idx" ON "votes"("tenant_id", "reader_id");

-- CreateIndex
CREATE INDEX "comments_list_score_idx" ON "comments"("tenant_id", "discussion_id", "pinned" DESC, "score" DESC, "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "comments_list_best_idx" ON "comments"("tenant_id", "discussion_id", "pinned" DESC, "vote_best" DESC, "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "votes" ADD CONSTRAINT "votes_comment_id_fkey" FOREIGN KEY ("comment_id") REFERENCES "comments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
