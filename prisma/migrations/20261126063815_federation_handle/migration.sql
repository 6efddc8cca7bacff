-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "federation_handle" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "tenants_federation_handle_key" ON "tenants"("federation_handle");
