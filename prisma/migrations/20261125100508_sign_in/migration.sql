-- CreateTable
CREATE TABLE "reader_sessions" (
    "tenant_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "provider" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reader_sessions_pkey" PRIMARY KEY ("tenant_id","token_hash")
);

-- CreateTable
CREATE TABLE "sign_in_tokens" (
    "tenant_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "subject" TEXT,
    "data" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "sign_in_tokens_pkey" PRIMARY KEY ("tenant_id","kind","token_hash")
);

-- CreateIndex
CREATE INDEX "reader_sessions_tenant_id_reader_id_created_at_idx" ON "reader_sessions"("tenant_id", "reader_id", "created_at");

-- CreateIndex
CREATE INDEX "sign_in_tokens_tenant_id_kind_subject_created_at_idx" ON "sign_in_tokens"("tenant_id", "kind", "subject", "created_at");

-- CreateIndex
CREATE INDEX "sign_in_tokens_expires_at_idx" ON "sign_in_tokens"("expires_at");

-- AddForeignKey
ALTER TABLE "reader_sessions" ADD CONSTRAINT "reader_sessions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sign_in_tokens" ADD CONSTRAINT "sign_in_tokens_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
