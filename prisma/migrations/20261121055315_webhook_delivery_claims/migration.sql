-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "claim_token" UUID,
ADD COLUMN     "locked_by" TEXT;

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "handshake_challenge" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_id_event_id_key" ON "webhook_deliveries"("endpoint_id", "event_id");
