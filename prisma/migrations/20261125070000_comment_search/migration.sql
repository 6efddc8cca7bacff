-- Comment search for moderators (contract section 21, src/modules/comments/search.ts).
-- * search_vector: the body's words, lower-cased (text search configuration 'simple': no stemming and
--   no stop words, the same for every language) and without accents (the unaccent extension, through
--   the IMMUTABLE wrapper eng_unaccent: unaccent() itself is only STABLE, since its dictionary could
--   change, and a generated column needs an immutable expression). GIN-indexed; a query's words go
--   through the same eng_unaccent and 'simple' configuration.
-- * has_links: whether the rendered body shows a link (an <a> with an href, what safety.maxLinks
--   counts), indexed for the newest-first walk of the comments with links only.
-- * comments_tenant_newest_idx: the tenant's comments newest first across discussions, what a search
--   without words (or with common ones) walks.
-- Adding the two generated columns rewrites the comments table once (minutes at millions of rows).
-- The embedded database (PGlite) loads the unaccent extension at start (src/db/pglite-extensions.ts).
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE OR REPLACE FUNCTION public.eng_unaccent(p_text text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT public.unaccent('public.unaccent'::regdictionary, p_text)
$function$;

ALTER TABLE "comments"
  ADD COLUMN "search_vector" tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, eng_unaccent("body"))) STORED,
  ADD COLUMN "has_links" boolean GENERATED ALWAYS AS (COALESCE("body_html", '') ~ '<a [^>]*href=') STORED;

CREATE INDEX "comments_search_idx" ON "comments" USING GIN ("search_vector");
CREATE INDEX "comments_links_idx" ON "comments" ("tenant_id", "created_at" DESC, "id" DESC) WHERE "has_links";
CREATE INDEX "comments_tenant_newest_idx" ON "comments" ("tenant_id", "created_at" DESC, "id" DESC);
