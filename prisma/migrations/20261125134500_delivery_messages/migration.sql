-- The delivery queue's third kind: a moderator's verdict told to Akismet (submit-ham / submit-spam);
-- the column with the other kinds' own data is named for what it holds, whatever the kind.
ALTER TYPE "DeliveryKind" ADD VALUE 'akismet';

ALTER TABLE "webhook_deliveries" RENAME COLUMN "alert" TO "message";

-- A webhook row names its endpoint and event; a row of another kind carries its message.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_kind_shape";
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_kind_shape" CHECK (
  ("kind" = 'webhook' AND "endpoint_id" IS NOT NULL AND "event_id" IS NOT NULL AND "message" IS NULL)
  OR ("kind" <> 'webhook' AND "endpoint_id" IS NULL AND "event_id" IS NULL AND "message" IS NOT NULL));
