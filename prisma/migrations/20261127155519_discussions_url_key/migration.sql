-- AlterTable
ALTER TABLE "discussions" ADD COLUMN     "url_key" TEXT;

-- AlterTable
ALTER TABLE "import_staged_discussions" ADD COLUMN     "url_key" TEXT;

-- The discussions already stored get the key of their url (src/modules/discussions/url-key.ts, here
-- for URLs as the parser writes them: scheme and host lower-cased, userinfo, default port and
-- fragment dropped, an empty path "/", trailing slashes past the root ignored, the query kept; a url
-- that is no http(s) URL gets none). Where two discussions of a tenant have the same key, the oldest
-- (then the smaller id) keeps it and the others keep their url without a key (docs/api.md, "A page's discussion, found by its URL").
WITH parts AS (
  SELECT tenant_id, id, created_at,
         regexp_match(btrim(url), '^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^/?#@]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?') AS m
    FROM "discussions" WHERE url IS NOT NULL
), keyed AS (
  SELECT tenant_id, id, created_at,
         lower(m[1]) || '://'
         || regexp_replace(lower(m[2]), CASE lower(m[1]) WHEN 'http' THEN ':(80)?$' ELSE ':(443)?$' END, '')
         || CASE WHEN m[3] ~ '^/*$' THEN '/' ELSE regexp_replace(m[3], '/+$', '') END
         || CASE WHEN m[4] IS NULL OR m[4] = '?' THEN '' ELSE m[4] END AS k
    FROM parts
   WHERE m IS NOT NULL AND lower(m[1]) IN ('http', 'https') AND m[2] <> ''
), ranked AS (
  SELECT tenant_id, id, k, row_number() OVER (PARTITION BY tenant_id, k ORDER BY created_at, id) AS n FROM keyed
)
UPDATE "discussions" d SET url_key = r.k
  FROM ranked r
 WHERE r.n = 1 AND d.tenant_id = r.tenant_id AND d.id = r.id;

-- CreateIndex
CREATE UNIQUE INDEX "discussions_tenant_url_key_key" ON "discussions"("tenant_id", "url_key");
