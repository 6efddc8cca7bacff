-- AlterTable
ALTER TABLE "events" ALTER COLUMN "payload" SET DATA TYPE JSON;
