// What the tenant guard (src/db/tenant-guard.ts) knows of the schema: the tables whose rows are a
// tenant's, those tied through a parent row, the server's own, and our database functions that take
// no tenant's id first or work across tenants. A new table or function is named here.
/** Tables whose every row belongs to one tenant (their `tenant_id`). */
export const TENANT_TABLES = new Set([
  "operators",
  "console_sessions",
  "console_links",
  "operator_passkeys",
  "audit_log",
  "api_keys",
  "readers",
  "discussions",
  "comments",
  "comment_search",
  "comment_render_backlog",
  "search_positions",
  "reactions",
  "page_reactions",
  "votes",
  "events",
  "stream_tickets",
  "webhook_endpoints",
  "webhook_deliveries",
  "webhook_attempts",
  "idempotency_keys",
  "comment_reports",
  "reader_sanctions",
  "reader_sessions",
  "reader_passkeys",
  "sign_in_tokens",
  "imports",
  "import_staged_comments",
  "import_staged_discussions",
  "import_staged_readers",
  "import_staged_reactions",
  "import_staged_votes",
  "import_staged_page_reactions",
  "email_items",
  "email_messages",
  "inbox_items",
  "inbox_counters",
  "discussion_subscriptions",
  "federation_actors",
  "reader_id_keys",
  "federation_followers",
  "federation_discussions",
  "federation_objects",
  "webmentions",
  "bluesky_links",
  "bluesky_replies",
  "bluesky_sessions",
]);
/** Tables tied through a parent row instead: table → [its column, the parent table] (the parent's `id`). */
export const CHILD_TABLES: Record<string, [string, string]> = { webhook_secrets: ["endpoint_id", "webhook_endpoints"] };

/**
 * Our database functions (`eng_*`) take the tenant's id first, or a row (`eng_comment_json(c)`), except
 * these, which take a value and read no table.
 */
export const SCALAR_FIRST = new Set([
  "eng_has_links",
  "eng_iso",
  "eng_next_digest",
  "eng_refuse",
  "eng_refuse_banned",
  "eng_screening_applies",
  "eng_search_vector",
  "eng_unaccent",
  "eng_wilson_lower_bound",
]);

/** Functions PostgreSQL runs on a row's insert (triggers): the row is their argument, its tenant's id among its columns. */
export const ROW_TRIGGERS = new Set([
  // a reader's row given the sanction in force as it is inserted (prisma/sql/10-readers.sql)
  "eng_reader_sanctioned_until",
]);

/**
 * Functions a background job runs over every tenant at once (never through a tenant's store: there the
 * guard refuses them, as they take no tenant's id first): auto-close (src/modules/discussions/engine/auto-close.ts, through `writeAcrossTenants` in src/events/statement.ts).
 */
export const ACROSS_TENANTS = new Set([
  "eng_auto_lock_discussions",
  // the event log's partitions, kept by retention (src/modules/retention/engine/retention.ts)
  "eng_event_partition_range",
  "eng_partition_event_log",
  "eng_create_event_log",
  "eng_event_partitions_ahead",
  "eng_drop_event_partition",
  // the search projector's step over the discussions of every tenant (src/modules/comments/engine/search-projector.ts)
  "eng_search_project",
]);

/**
 * Tables of no tenant, which the guard refuses to any tenant's statement: the fediverse's state per
 * remote domain (its breaker and inbox budget) and Fedify's cache of remote documents
 * (src/modules/federation/engine/), and each SMTP server's breaker, shared by the tenants that send
 * through it (src/modules/email/engine/sender.ts): the server's own, read and written only by engine code.
 */
const SERVER_TABLES = ["federation_domains", "federation_kv", "smtp_servers"];

/** The tables the guard knows (and those it keeps from every tenant), for a test that compares them with the schema. */
export const GUARDED_TABLES = { tenant: [...TENANT_TABLES], child: Object.keys(CHILD_TABLES), root: ["tenants"], server: SERVER_TABLES };
