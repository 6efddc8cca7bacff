-- CreateTable
CREATE TABLE "reader_passkeys" (
    "tenant_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "reader_id" TEXT NOT NULL,
    "credential_id" TEXT NOT NULL,
    "public_key" BYTEA NOT NULL,
    "counter" BIGINT NOT NULL DEFAULT 0,
    "transports" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "user_handle" TEXT NOT NULL,
    "device_type" TEXT NOT NULL,
    "backed_up" BOOLEAN NOT NULL,
    "label" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "reader_passkeys_pkey" PRIMARY KEY ("tenant_id","id")
);

-- CreateTable
CREATE TABLE "operator_passkeys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "credential_id" TEXT NOT NULL,
    "public_key" BYTEA NOT NULL,
    "counter" BIGINT NOT NULL DEFAULT 0,
    "transports" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "user_handle" TEXT NOT NULL,
    "device_type" TEXT NOT NULL,
    "backed_up" BOOLEAN NOT NULL,
    "label" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "operator_passkeys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "reader_passkeys_tenant_id_reader_id_idx" ON "reader_passkeys"("tenant_id", "reader_id");

-- CreateIndex
CREATE UNIQUE INDEX "reader_passkeys_tenant_id_credential_id_key" ON "reader_passkeys"("tenant_id", "credential_id");

-- CreateIndex
CREATE UNIQUE INDEX "operator_passkeys_credential_id_key" ON "operator_passkeys"("credential_id");

-- CreateIndex
CREATE INDEX "operator_passkeys_operator_id_idx" ON "operator_passkeys"("operator_id");

-- AddForeignKey
ALTER TABLE "reader_passkeys" ADD CONSTRAINT "reader_passkeys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "operator_passkeys" ADD CONSTRAINT "operator_passkeys_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE CASCADE ON UPDATE CASCADE;
