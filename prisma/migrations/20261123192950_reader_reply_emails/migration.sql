-- CreateEnum
CREATE TYPE "ReplyEmails" AS ENUM ('immediate', 'daily', 'off');

-- AlterTable
ALTER TABLE "readers" ADD COLUMN     "reply_emails" "ReplyEmails";
