-- What a comment's search document costs PostgreSQL, measured inside the database, beside the comment
-- row's own insert: single-row INSERTs of a typical formatted comment (354 characters: emphasis, a
-- quote, a link, inline code) into the service's `comments` table, 1,000 discussions, in a PL/pgSQL
-- loop (no client, no commit), and the same comments' documents inserted into comment_search as the
-- search projector writes them (eng_search_vector(body), its GIN entries and the three walks'
-- b-tree entries: work done after the commit, off the write path), each variant in a transaction rolled back; then the document's expression
-- alone, and the same lexemes built from words a client would pass (array_to_tsvector: no text-search
-- parser).
-- Run on a scratch database the service's migrations made (never the service's own):
--   createdb -h 127.0.0.1 -U postgres scratch
--   DATABASE_URL=postgres://postgres@127.0.0.1:5432/scratch ADMIN_JWT_SECRET=$(openssl rand -hex 32) npm run migrate
--   psql -h 127.0.0.1 -U postgres -d scratch -q -f bench/search-column.sql
\set QUIET on
\pset footer off
CREATE TEMP TABLE search_cost (n serial, variant text, us numeric);

CREATE FUNCTION pg_temp.typical(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'Quick thought on **section ' || i || '**: the café argument holds > I read it twice; see https://example.com/a/'
    || i || ' and `code()` ~~not~~ everything. ' || repeat('words matter here and there ', 8) $$;

CREATE FUNCTION pg_temp.inserts(n int, tag text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); b text;
BEGIN
  FOR i IN 1..n LOOP
    b := pg_temp.typical(i);
    INSERT INTO comments (id, tenant_id, discussion_id, author_id, body, body_html, status, published_at)
    VALUES (tag || i, 'bench', 'd' || (i % 1000), 'r' || (i % 100), b, '<p>' || b || '</p>', 'approved', now());
  END LOOP;
  RETURN round((extract(epoch FROM clock_timestamp() - t0) * 1e6 / n)::numeric, 1);
END $$;

CREATE FUNCTION pg_temp.documents(n int, tag text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO comment_search (tenant_id, discussion_id, comment_id, author_id, created_at, vector)
    VALUES ('bench', 'd' || (i % 1000), tag || i, 'r' || (i % 100), now(), eng_search_vector(pg_temp.typical(i)));
  END LOOP;
  RETURN round((extract(epoch FROM clock_timestamp() - t0) * 1e6 / n)::numeric, 1);
END $$;

CREATE FUNCTION pg_temp.expression(n int, which text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); v tsvector;
  words text[] := string_to_array('quick thought on section 5 the cafe argument holds i read it twice see https example com a 5 and code not everything'
    || repeat(' words matter here and there', 8), ' ');
BEGIN
  FOR i IN 1..n LOOP
    IF which = 'document' THEN v := eng_search_vector(pg_temp.typical(i));
    ELSE v := array_to_tsvector(words || ('w' || i)); END IF;
  END LOOP;
  RETURN round((extract(epoch FROM clock_timestamp() - t0) * 1e6 / n)::numeric, 1);
END $$;

-- warm the caches once (20,000 rows of each), kept out of every figure
BEGIN;
SELECT pg_temp.inserts(20000, 'warm') AS us \gset
SELECT pg_temp.documents(20000, 'warm') AS us \gset
ROLLBACK;

-- each variant twice, alternating (ABCABC), each in a transaction rolled back: the table is the same for all
\ir search-column-round.sql
\ir search-column-round.sql
INSERT INTO search_cost (variant, us) SELECT 'eng_search_vector(body) alone (to_tsvector(''simple'', eng_unaccent(body)))', pg_temp.expression(20000, 'document');
INSERT INTO search_cost (variant, us) SELECT 'array_to_tsvector(the words) alone', pg_temp.expression(20000, 'words');
SELECT variant, string_agg(us::text, ' / ' ORDER BY n) AS "µs a comment (each run)" FROM search_cost GROUP BY variant ORDER BY min(n);
