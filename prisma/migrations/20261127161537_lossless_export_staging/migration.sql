-- AlterTable
ALTER TABLE "import_staged_comments" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'comment';

-- AlterTable
ALTER TABLE "import_staged_readers" ADD COLUMN     "badge" TEXT,
ADD COLUMN     "trust_level" TEXT;

-- CreateTable
-- Staging of what our own export now carries per reader (votes, page reactions): UNLOGGED like the
-- rest of an import's staging (import-writer.ts), as only an unfinished import's rows live there.
CREATE UNLOGGED TABLE "import_staged_votes" (
    "run" TEXT NOT NULL,
    "ord" INTEGER NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "value" SMALLINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "staged_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "import_staged_votes_pkey" PRIMARY KEY ("run","ord")
);

-- CreateTable
CREATE UNLOGGED TABLE "import_staged_page_reactions" (
    "run" TEXT NOT NULL,
    "ord" INTEGER NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "staged_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "import_staged_page_reactions_pkey" PRIMARY KEY ("run","ord")
);
