-- Every queued message is a job of the outbound queue (kind `email`, the job's id the message's):
-- the messages still queued get theirs, due when they were, with the attempts they have had.
INSERT INTO "webhook_deliveries" (id, tenant_id, kind, message, attempts, next_attempt_at, last_error, created_at, updated_at)
SELECT m.id, m.tenant_id, 'email', '{}'::jsonb, m.attempts, m.next_attempt_at, m.last_error, m.created_at, m.created_at
  FROM "email_messages" m
 WHERE m.state = 'queued'
ON CONFLICT DO NOTHING;

-- DropIndex
DROP INDEX "email_messages_state_next_attempt_at_idx";

-- AlterTable
ALTER TABLE "email_messages" DROP COLUMN "locked_by",
DROP COLUMN "locked_until",
DROP COLUMN "next_attempt_at";

-- CreateTable
CREATE TABLE "smtp_servers" (
    "server" TEXT NOT NULL,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "circuit_open_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "smtp_servers_pkey" PRIMARY KEY ("server")
);
