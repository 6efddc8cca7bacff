-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'email_compose';

-- A reader's pending compose job is found by its key (src/modules/email/engine/mail-queue.ts): the
-- write that queues an item for a reader whose job is pending locks that job instead of queuing
-- another, and the compose takes the key off its job in the transaction that takes the items. On an
-- expression and partial (only compose jobs' messages carry `composeKey`), so Prisma's schema cannot say it.
CREATE UNIQUE INDEX "webhook_deliveries_compose_key" ON "webhook_deliveries" ((message ->> 'composeKey')) WHERE message ? 'composeKey';

-- No pass scans email_items by due time any more: each reader's compose job is due with their first item.
DROP INDEX "email_items_due_at_idx";
