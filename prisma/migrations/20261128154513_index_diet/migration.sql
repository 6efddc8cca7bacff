-- The index diet (docs/scaling.md, "What a post writes"): a post writes two indexes of `comments` and
-- the event log's index by tenant and time no more, and prepares the predicates of two partial ones fewer.
--
-- Comment search walks the tenant's comments newest first on its own documents (comment_search), no
-- longer on comments_tenant_newest_idx; comments with links on the documents that say so
-- (comment_search.has_links, comment_search_links_idx), no longer on comments_links_idx; the statuses
-- that have no document (pending, rejected, deleted) on comments_queue_idx, which now holds deleted
-- comments too. An erased reader's comment kept for its replies has a document without words.
DROP INDEX "comments_tenant_newest_idx";
DROP INDEX IF EXISTS "comments_links_idx";

ALTER TABLE "comment_search" ADD COLUMN     "has_links" BOOLEAN NOT NULL DEFAULT false;
UPDATE "comment_search" s SET "has_links" = true
  FROM "comments" c WHERE c."tenant_id" = s."tenant_id" AND c."id" = s."comment_id" AND c."has_links";
INSERT INTO "comment_search" ("tenant_id", "discussion_id", "comment_id", "author_id", "created_at", "vector", "has_links")
SELECT c."tenant_id", c."discussion_id", c."id", c."author_id", c."created_at", ''::tsvector, c."has_links"
  FROM "comments" c WHERE c."author_id" = '' AND c."status" <> 'deleted'
ON CONFLICT DO NOTHING;
CREATE INDEX "comment_search_links_idx" ON "comment_search" ("tenant_id", "created_at" DESC, "comment_id" DESC) WHERE "has_links";

DROP INDEX IF EXISTS "comments_queue_idx";
CREATE INDEX "comments_queue_idx" ON "comments" ("tenant_id", "status", "created_at", "id") WHERE "status" IN ('pending', 'rejected', 'deleted');

-- a shadow-banned reader's own comments (src/modules/comments/read.ts, OWN_SHADOWED) among their rejected
-- ones: a predicate on the status, which every insert tests for less than one on moderation_reason's JSON
DROP INDEX IF EXISTS "comments_shadow_idx";
CREATE INDEX "comments_shadow_idx" ON "comments" ("tenant_id", "author_id", "discussion_id") WHERE "status" = 'rejected';

-- The comments written before bodies were stored rendered are listed once, here, for the start-up
-- render (src/modules/comments/engine/render-backfill.ts), which no longer finds them by a partial index
-- every insert prepared (no write leaves a body unrendered)
CREATE TABLE "comment_render_backlog" (
    "tenant_id" TEXT NOT NULL,
    "comment_id" TEXT NOT NULL,

    CONSTRAINT "comment_render_backlog_pkey" PRIMARY KEY ("tenant_id","comment_id")
);
INSERT INTO "comment_render_backlog" ("tenant_id", "comment_id") SELECT "tenant_id", "id" FROM "comments" WHERE "body_html" IS NULL;
DROP INDEX IF EXISTS "comments_body_unrendered_idx";

-- The event log has no index by tenant and time (a post wrote it into every event): a read of a
-- tenant's events over a time reads the days' partitions its range names, each by the tenant's prefix
-- of events_tenant_id_discussion_id_seq_idx. Dropping the partitioned index drops its partitions'.
DROP INDEX IF EXISTS "events_tenant_id_occurred_at_idx";
