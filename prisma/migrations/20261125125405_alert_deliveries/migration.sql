-- CreateEnum
CREATE TYPE "DeliveryKind" AS ENUM ('webhook', 'alert');

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "alert" JSONB,
ADD COLUMN     "kind" "DeliveryKind" NOT NULL DEFAULT 'webhook',
ALTER COLUMN "endpoint_id" DROP NOT NULL,
ALTER COLUMN "event_id" DROP NOT NULL;

-- CreateIndex
CREATE INDEX "webhook_deliveries_kind_status_next_attempt_at_idx" ON "webhook_deliveries"("kind", "status", "next_attempt_at");

-- A webhook row names its endpoint and event; an alert row carries its message.
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_kind_shape" CHECK (
  ("kind" = 'webhook' AND "endpoint_id" IS NOT NULL AND "event_id" IS NOT NULL AND "alert" IS NULL)
  OR ("kind" = 'alert' AND "endpoint_id" IS NULL AND "event_id" IS NULL AND "alert" IS NOT NULL));
