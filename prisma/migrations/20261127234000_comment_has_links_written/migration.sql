-- has_links is written with body_html by the statements that write it (eng_has_links), no longer a
-- generated column: a generated column's expression is set up by the executor for every insert
-- (npm run bench:pg-cost). The values stay as they are.
ALTER TABLE "comments" ALTER COLUMN "has_links" DROP EXPRESSION;
ALTER TABLE "comments" ALTER COLUMN "has_links" SET NOT NULL,
ALTER COLUMN "has_links" SET DEFAULT false;
