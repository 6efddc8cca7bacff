-- AlterEnum
ALTER TYPE "DeliveryKind" ADD VALUE 'activitypub';

-- CreateTable
CREATE TABLE "federation_actors" (
    "tenant_id" TEXT NOT NULL,
    "rsa_public_jwk" JSONB NOT NULL,
    "rsa_private_enc" TEXT NOT NULL,
    "ed_public_jwk" JSONB NOT NULL,
    "ed_private_enc" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "federation_actors_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "federation_followers" (
    "tenant_id" TEXT NOT NULL,
    "actor_id" TEXT NOT NULL,
    "inbox" TEXT NOT NULL,
    "follow_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "federation_followers_pkey" PRIMARY KEY ("tenant_id","actor_id")
);

-- CreateTable
CREATE TABLE "federation_discussions" (
    "tenant_id" TEXT NOT NULL,
    "discussion_id" TEXT NOT NULL,
    "delivered_seq" INTEGER NOT NULL DEFAULT 0,
    "announced_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "federation_discussions_pkey" PRIMARY KEY ("tenant_id","discussion_id")
);

-- CreateTable
CREATE TABLE "federation_objects" (
    "tenant_id" TEXT NOT NULL,
    "object_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,
    "reader_id" TEXT,
    "actor_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "federation_objects_pkey" PRIMARY KEY ("tenant_id","object_id")
);

-- CreateTable
CREATE TABLE "federation_domains" (
    "domain" TEXT NOT NULL,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "circuit_open_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "federation_domains_pkey" PRIMARY KEY ("domain")
);

-- CreateTable
CREATE TABLE "federation_kv" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "federation_kv_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "federation_discussions_announced_at_idx" ON "federation_discussions"("announced_at");

-- CreateIndex
CREATE INDEX "federation_objects_tenant_id_comment_id_idx" ON "federation_objects"("tenant_id", "comment_id");

-- CreateIndex
CREATE INDEX "federation_kv_expires_at_idx" ON "federation_kv"("expires_at");

-- AddForeignKey
ALTER TABLE "federation_actors" ADD CONSTRAINT "federation_actors_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "federation_followers" ADD CONSTRAINT "federation_followers_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "federation_discussions" ADD CONSTRAINT "federation_discussions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "federation_objects" ADD CONSTRAINT "federation_objects_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
