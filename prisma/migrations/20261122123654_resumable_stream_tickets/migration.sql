-- AlterTable
ALTER TABLE "stream_tickets" ADD COLUMN     "connection_id" TEXT,
ADD COLUMN     "resume_until" TIMESTAMPTZ(3);
