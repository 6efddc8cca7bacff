-- Who follows a discussion with `all` (contract section 19): the comment's statement asks whether
-- anyone does (one probe of this index, whatever the number of followers), and the follow worker
-- reads them in reader-id order, a batch at a time. Partial: readers who silenced the discussion
-- (`off`) are not in it. Hand-written, as Prisma's schema cannot express a partial index.
CREATE INDEX "discussion_subscriptions_following_idx" ON "discussion_subscriptions" ("tenant_id", "discussion_id", "reader_id") WHERE "mode" = 'all';
