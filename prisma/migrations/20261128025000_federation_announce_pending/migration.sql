-- One pending announcement job per tenant (POST /api/v1/federation/announce answers the pending one):
-- partial, on the jobs of one kind and state, so Prisma's schema cannot say it.
CREATE UNIQUE INDEX "webhook_deliveries_announce_pending" ON "webhook_deliveries" ("tenant_id") WHERE kind = 'activitypub_announce' AND status = 'pending';
