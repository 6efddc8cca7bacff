// The floor's tables and its one statement a POST (bench/floor/server.ts), shared with
// bench/pg-cost.ts, which counts the PostgreSQL work of that statement against the service's.

/** The floor's tables: one index besides each primary key (the list order), none for anything else. */
export const FLOOR_SCHEMA = `
  CREATE TABLE IF NOT EXISTS f_tenants (id text PRIMARY KEY, identity_secret text NOT NULL);
  CREATE TABLE IF NOT EXISTS f_keys (hash text PRIMARY KEY, tenant_id text NOT NULL REFERENCES f_tenants);
  CREATE TABLE IF NOT EXISTS f_discussions (tenant_id text, id text, seq int NOT NULL DEFAULT 0,
    comment_count int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, id));
  CREATE TABLE IF NOT EXISTS f_readers (tenant_id text, id text, name text NOT NULL, avatar_url text, PRIMARY KEY (tenant_id, id));
  CREATE TABLE IF NOT EXISTS f_comments (id text PRIMARY KEY, tenant_id text NOT NULL, discussion_id text NOT NULL,
    author_id text NOT NULL, body text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
    reaction_counts jsonb NOT NULL DEFAULT '{}', reaction_total int NOT NULL DEFAULT 0, reply_count int NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS f_comments_list ON f_comments (tenant_id, discussion_id, created_at DESC, id DESC);
  CREATE TABLE IF NOT EXISTS f_reactions (comment_id text, reader_id text, kind text, PRIMARY KEY (comment_id, reader_id, kind));
  CREATE TABLE IF NOT EXISTS f_events (id uuid PRIMARY KEY, tenant_id text NOT NULL, discussion_id text NOT NULL, seq int NOT NULL,
    type text NOT NULL, payload jsonb NOT NULL, occurred_at timestamptz NOT NULL, UNIQUE (tenant_id, discussion_id, seq));
`;

/**
 * A POST, one statement: the discussion upserted with its seq bumped, the reader upserted only if it
 * changed, the comment and the event row inserted. $1 tenant, $2 discussion, $3 comment id, $4 reader,
 * $5 name, $6 avatar URL, $7 body, $8 event id, $9 the event's envelope (JSON; the seq is added).
 */
export const FLOOR_POST = `
  WITH d AS (
    INSERT INTO f_discussions AS x (tenant_id, id, seq, comment_count) VALUES ($1, $2, 1, 1)
    ON CONFLICT (tenant_id, id) DO UPDATE SET seq = x.seq + 1, comment_count = x.comment_count + 1
    RETURNING seq
  ), r AS (
    INSERT INTO f_readers AS x (tenant_id, id, name, avatar_url) VALUES ($1, $4, $5, $6)
    ON CONFLICT (tenant_id, id) DO UPDATE SET name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url
      WHERE x.name IS DISTINCT FROM EXCLUDED.name OR x.avatar_url IS DISTINCT FROM EXCLUDED.avatar_url
  ), c AS (
    INSERT INTO f_comments (id, tenant_id, discussion_id, author_id, body, status, created_at)
    VALUES ($3, $1, $2, $4, $7, 'approved', now()) RETURNING created_at
  ), e AS (
    INSERT INTO f_events (id, tenant_id, discussion_id, seq, type, payload, occurred_at)
    SELECT $8::uuid, $1, $2, d.seq, 'comment_created', $9::jsonb || jsonb_build_object('seq', d.seq), now() FROM d
  )
  SELECT d.seq, c.created_at FROM d, c`;

/**
 * The same POST written onto the service's own tables (its schema, migrated into the floor's
 * database: `comments` with all its indexes and generated columns, `discussions`, `readers`, the
 * partitioned `events`), still ONE statement and nothing else: no rules, no sanction or trust read,
 * no follow or webhook probe, no JSON built in SQL. What the service stores, without what the service
 * decides: read against the plain floor, the cost of the storage; against the service, the cost of
 * its code. $1…$9 as FLOOR_POST, $10 the body's HTML (the floor's: the body escaped in a paragraph).
 */
export const FLOOR_POST_ON_SERVICE_TABLES = `
  WITH d AS (
    INSERT INTO discussions AS x (tenant_id, id, seq, comment_count, created_at, updated_at) VALUES ($1, $2, 1, 1, now(), now())
    ON CONFLICT (tenant_id, id) DO UPDATE SET seq = x.seq + 1, comment_count = x.comment_count + 1, updated_at = now()
    RETURNING seq
  ), r AS (
    INSERT INTO readers AS x (tenant_id, id, name, avatar_url) VALUES ($1, $4, $5, $6)
    ON CONFLICT (tenant_id, id) DO UPDATE SET name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url, updated_at = now()
      WHERE x.name IS DISTINCT FROM EXCLUDED.name OR x.avatar_url IS DISTINCT FROM EXCLUDED.avatar_url
  ), c AS (
    INSERT INTO comments (id, tenant_id, discussion_id, author_id, body, body_html, status, created_at, published_at)
    VALUES ($3, $1, $2, $4, $7, $10, 'approved', now(), now()) RETURNING created_at
  ), e AS (
    INSERT INTO events (id, tenant_id, discussion_id, seq, type, audience, payload, occurred_at)
    SELECT $8::uuid, $1, $2, d.seq, 'comment_created', 'all', $9::jsonb || jsonb_build_object('seq', d.seq), now() FROM d
  )
  SELECT d.seq, c.created_at FROM d, c`;

/** The floor's HTML of a body ($10 of FLOOR_POST_ON_SERVICE_TABLES): the body escaped, in one paragraph. */
export const floorBodyHtml = (body: string): string => `<p>${body.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)}</p>`;

/**
 * The reads written onto the service's own tables: the columns of the comment the service answers
 * (its body's HTML, votes, kind, the author's badge), the list in the service's order (pinned first,
 * then newest) and visibility (approved, and tombstones with replies) through its newest-first index,
 * still one statement each. $1 tenant, $2 discussion, $3 the page's size + 1 (LIST); $2 the comment's id (ONE).
 */
const COLUMNS_ON_SERVICE_TABLES = `c.id, c.discussion_id, c.parent_id, c.author_id, r.name, r.avatar_url, r.badge, c.body, c.body_html,
  c.status::text AS status, c.pinned, c.edited_at, c.created_at, c.reaction_counts, c.reply_count, c.score, c.upvotes,
  c.downvotes, c.kind::text AS kind`;
export const FLOOR_LIST_ON_SERVICE_TABLES = `SELECT ${COLUMNS_ON_SERVICE_TABLES}
  FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.discussion_id = $2 AND (c.status = 'approved' OR (c.status = 'deleted' AND c.reply_count > 0))
  ORDER BY c.pinned DESC, c.created_at DESC, c.id DESC LIMIT $3`;
export const FLOOR_ONE_ON_SERVICE_TABLES = `SELECT ${COLUMNS_ON_SERVICE_TABLES}
  FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.id = $2`;
