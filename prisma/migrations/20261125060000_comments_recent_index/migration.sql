-- The tenant's latest visible comments (src/modules/comments/recent.ts: recent comments and the feeds),
-- newest published first: partial (approved only), so Prisma's schema cannot say it (as comments_queue_idx)
CREATE INDEX "comments_recent_idx" ON "comments" ("tenant_id", "published_at" DESC, "id" DESC) WHERE "status" = 'approved';
