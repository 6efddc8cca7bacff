-- CreateEnum
CREATE TYPE "ReportReason" AS ENUM ('spam', 'abuse', 'off_topic', 'other');

-- CreateEnum
CREATE TYPE "ReportStatus" AS ENUM ('open', 'dismissed');

-- CreateTable
CREATE TABLE "comment_reports" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "reason" "ReportReason" NOT NULL,
    "note" TEXT,
    "status" "ReportStatus" NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "dismissed_at" TIMESTAMPTZ(3),
    "dismissed_by" TEXT,

    CONSTRAINT "comment_reports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reader_sanctions" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "until" TIMESTAMPTZ(3),
    "reason" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "lifted_at" TIMESTAMPTZ(3),
    "lifted_by" TEXT,

    CONSTRAINT "reader_sanctions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "comment_reports_tenant_id_status_created_at_idx" ON "comment_reports"("tenant_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "comment_reports_tenant_id_reader_id_idx" ON "comment_reports"("tenant_id", "reader_id");

-- CreateIndex
CREATE UNIQUE INDEX "comment_reports_tenant_id_comment_id_reader_id_key" ON "comment_reports"("tenant_id", "comment_id", "reader_id");

-- CreateIndex
CREATE INDEX "reader_sanctions_tenant_id_reader_id_created_at_idx" ON "reader_sanctions"("tenant_id", "reader_id", "created_at");

-- AddForeignKey
ALTER TABLE "comment_reports" ADD CONSTRAINT "comment_reports_comment_id_fkey" FOREIGN KEY ("comment_id") REFERENCES "comments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
