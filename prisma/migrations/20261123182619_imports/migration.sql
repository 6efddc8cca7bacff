-- CreateEnum
CREATE TYPE "ImportState" AS ENUM ('running', 'succeeded', 'failed');

-- CreateTable
CREATE TABLE "imports" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "state" "ImportState" NOT NULL DEFAULT 'running',
    "options" JSONB NOT NULL DEFAULT '{}',
    "bytes_read" BIGINT NOT NULL DEFAULT 0,
    "bytes_total" BIGINT,
    "threads" INTEGER NOT NULL DEFAULT 0,
    "comments" INTEGER NOT NULL DEFAULT 0,
    "readers" INTEGER NOT NULL DEFAULT 0,
    "reactions" INTEGER NOT NULL DEFAULT 0,
    "unchanged" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "errors" JSONB NOT NULL DEFAULT '[]',
    "failure" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "imports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "imports_tenant_id_created_at_id_idx" ON "imports"("tenant_id", "created_at", "id");
