-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'activitypub_inbound';

-- An inbound activity is stored once per inbox (src/modules/federation/engine/inbound.ts): a replay of
-- its id to the same inbox finds this row and is not stored again. On an expression and partial (only
-- inbound activities' messages carry `inboundKey`), so Prisma's schema cannot say it.
CREATE UNIQUE INDEX "webhook_deliveries_inbound_key" ON "webhook_deliveries" ((message ->> 'inboundKey')) WHERE message ? 'inboundKey';
