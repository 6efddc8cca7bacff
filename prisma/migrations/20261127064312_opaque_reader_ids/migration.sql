-- CreateTable
CREATE TABLE "reader_id_keys" (
    "tenant_id" TEXT NOT NULL,
    "key_enc" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reader_id_keys_pkey" PRIMARY KEY ("tenant_id")
);

-- AddForeignKey
ALTER TABLE "reader_id_keys" ADD CONSTRAINT "reader_id_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
