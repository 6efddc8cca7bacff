-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'follow';
