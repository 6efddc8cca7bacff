-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'email';
