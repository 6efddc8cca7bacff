-- CreateEnum
CREATE TYPE "ApiKeyKind" AS ENUM ('secret', 'publishable');

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "kind" "ApiKeyKind" NOT NULL DEFAULT 'secret';
