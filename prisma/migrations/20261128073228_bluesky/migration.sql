-- AlterEnum
ALTER TYPE "CommentKind" ADD VALUE 'bluesky';

-- CreateTable
CREATE TABLE "bluesky_links" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "uri" TEXT,
    "cid" TEXT,
    "posted" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "next_poll_at" TIMESTAMPTZ(3) NOT NULL,
    "polled_at" TIMESTAMPTZ(3),
    "changed_at" TIMESTAMPTZ(3),
    "failures" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "bluesky_links_pkey" PRIMARY KEY ("tenant_id","discussion_id")
);

-- CreateTable
CREATE TABLE "bluesky_replies" (
    "tenant_id" TEXT NOT NULL,
    "uri_hash" TEXT NOT NULL,
    "uri" TEXT,
    "discussion_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "reader_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "bluesky_replies_pkey" PRIMARY KEY ("tenant_id","uri_hash")
);

-- CreateTable
CREATE TABLE "bluesky_sessions" (
    "tenant_id" TEXT NOT NULL,
    "handle" TEXT NOT NULL,
    "service" TEXT NOT NULL,
    "did" TEXT NOT NULL,
    "session_enc" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "bluesky_sessions_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateIndex
CREATE INDEX "bluesky_links_next_poll_at_idx" ON "bluesky_links"("next_poll_at");

-- CreateIndex
CREATE INDEX "bluesky_replies_tenant_id_discussion_id_idx" ON "bluesky_replies"("tenant_id", "discussion_id");

-- CreateIndex
CREATE INDEX "bluesky_replies_tenant_id_reader_id_idx" ON "bluesky_replies"("tenant_id", "reader_id");

-- AddForeignKey
ALTER TABLE "bluesky_links" ADD CONSTRAINT "bluesky_links_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bluesky_links" ADD CONSTRAINT "bluesky_links_tenant_id_discussion_id_fkey" FOREIGN KEY ("tenant_id", "discussion_id") REFERENCES "discussions"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bluesky_replies" ADD CONSTRAINT "bluesky_replies_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bluesky_sessions" ADD CONSTRAINT "bluesky_sessions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
