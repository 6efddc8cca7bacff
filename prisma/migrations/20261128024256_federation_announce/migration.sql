-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'activitypub_announce';
