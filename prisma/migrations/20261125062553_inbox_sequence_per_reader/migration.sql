-- AlterTable
ALTER TABLE "inbox_items" ALTER COLUMN "seq" DROP DEFAULT,
ALTER COLUMN "seq" SET DATA TYPE INTEGER;
DROP SEQUENCE "inbox_items_seq_seq";

-- CreateTable
CREATE TABLE "inbox_counters" (
    "tenant_id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,

    CONSTRAINT "inbox_counters_pkey" PRIMARY KEY ("tenant_id","reader_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "inbox_items_tenant_id_reader_id_seq_key" ON "inbox_items"("tenant_id", "reader_id", "seq");

-- AddForeignKey
ALTER TABLE "inbox_counters" ADD CONSTRAINT "inbox_counters_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
