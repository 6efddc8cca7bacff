-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "previous_identity_secret_enc" TEXT,
ADD COLUMN     "previous_identity_secret_expires_at" TIMESTAMPTZ(3);
