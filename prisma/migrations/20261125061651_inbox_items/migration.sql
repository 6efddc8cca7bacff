-- CreateEnum
CREATE TYPE "InboxItemType" AS ENUM ('reply', 'new_comment');

-- CreateTable
CREATE TABLE "inbox_items" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "type" "InboxItemType" NOT NULL,
    "comment_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "parent_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "read_at" TIMESTAMPTZ(3),

    CONSTRAINT "inbox_items_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "inbox_items_tenant_id_reader_id_created_at_id_idx" ON "inbox_items"("tenant_id", "reader_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inbox_items_created_at_idx" ON "inbox_items"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "inbox_items_tenant_id_reader_id_type_comment_id_key" ON "inbox_items"("tenant_id", "reader_id", "type", "comment_id");

-- AddForeignKey
ALTER TABLE "inbox_items" ADD CONSTRAINT "inbox_items_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
