-- An import's staging (src/modules/portability/import-writer.ts): UNLOGGED, as only an unfinished
-- import's rows live here and running its file again redoes them.
-- CreateTable
CREATE UNLOGGED TABLE "import_staged_comments" (
    "run" TEXT NOT NULL,
    "ord" INTEGER NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "parent_id" TEXT,
    "parent_key" TEXT,
    "author_id" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "pinned" BOOLEAN NOT NULL,
    "edited_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "position" TEXT NOT NULL,
    "staged_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "import_staged_comments_pkey" PRIMARY KEY ("run","ord")
);

-- CreateTable
CREATE UNLOGGED TABLE "import_staged_reactions" (
    "run" TEXT NOT NULL,
    "ord" INTEGER NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "staged_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "import_staged_reactions_pkey" PRIMARY KEY ("run","ord")
);

-- CreateIndex
CREATE INDEX "import_staged_comments_run_bucket_idx" ON "import_staged_comments"("run", "bucket");
