-- Two fewer indexes written by every new comment (the write path at the floor, issue "fidelity"):
-- * the oldest-first list reads comments_list_newest_idx backwards: each list statement reads the
--   pinned and the unpinned comments as two ranges (src/modules/comments/read.ts), and within one
--   of them the newest-first order read backwards is the oldest-first order;
-- * the moderation queue lists only pending or rejected comments (its statements name the status
--   as a literal), so its index holds only those: an approved comment adds nothing to it.
DROP INDEX "comments_list_oldest_idx";
DROP INDEX "comments_queue_idx";
CREATE INDEX "comments_queue_idx" ON "comments" ("tenant_id", "status", "created_at", "id") WHERE "status" IN ('pending', 'rejected');
