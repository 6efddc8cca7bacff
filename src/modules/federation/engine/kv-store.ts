// Fedify's key-value store (its KvStore interface) over the service's own database: one row a key in
// federation_kv, PostgreSQL and the embedded PGlite alike (Redis is optional here, so it is not the
// store). Fedify keeps in it the remote documents its loader caches (actors and their keys: a
// remote actor's profile is fetched once and re-read from here) and the ids of inbound activities it
// has handled (a redelivered activity is not applied twice). Values expire by `ttl`; an expired row is
// never answered and is deleted when next written or by the sweep of `sweepExpired`; `list` answers the
// live entries under a key prefix (the prefix itself included), in key order.
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import type { Sql } from "../../../db/sql.js";
import type { Clock } from "../../../lib/clock.js";

/** A key's text: its parts joined by a separator no part holds unescaped. */
const keyText = (key: KvKey): string => key.map((p) => p.replaceAll("\\", "\\\\").replaceAll("\u001f", "\\u")).join("\u001f");

/** The key a key's text is (keyText's inverse). */
const keyOf = (text: string): KvKey =>
  text.split("\u001f").map((p) => p.replace(/\\(\\|u)/g, (_, c: string) => (c === "u" ? "\u001f" : "\\"))) as unknown as KvKey;

export function createKvStore(deps: { sql: Sql; clock: Clock }): KvStore & { sweepExpired(): Promise<number> } {
  const now = () => deps.clock.now();
  return {
    async get<T = unknown>(key: KvKey): Promise<T | undefined> {
      const [row] = await deps.sql.query<{ value: T }>(
        `SELECT value FROM federation_kv WHERE key = $1 AND (expires_at IS NULL OR expires_at > $2::timestamptz)`,
        [keyText(key), now()],
        "eng_federation_kv_get",
      );
      return row?.value;
    },
    async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
      const ttlMs = options?.ttl ? options.ttl.total("millisecond") : null;
      const expires = ttlMs === null ? null : new Date(now().getTime() + ttlMs);
      await deps.sql.query(
        `INSERT INTO federation_kv (key, value, expires_at) VALUES ($1, $2::jsonb, $3::timestamptz)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
        [keyText(key), JSON.stringify(value ?? null), expires],
        "eng_federation_kv_set",
      );
    },
    async delete(key: KvKey): Promise<void> {
      await deps.sql.query(`DELETE FROM federation_kv WHERE key = $1`, [keyText(key)], "eng_federation_kv_delete");
    },
    async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
      const head = prefix ? keyText(prefix) : null;
      const rows = await deps.sql.query<{ key: string; value: unknown }>(
        `SELECT key, value FROM federation_kv
          WHERE ($1::text IS NULL OR key = $1 OR starts_with(key, $1 || chr(31))) AND (expires_at IS NULL OR expires_at > $2::timestamptz)
          ORDER BY key COLLATE "C"`,
        [head, now()],
      );
      for (const row of rows) yield { key: keyOf(row.key), value: row.value };
    },
    async sweepExpired() {
      const rows = await deps.sql.query<{ key: string }>(
        `DELETE FROM federation_kv WHERE key IN (SELECT key FROM federation_kv WHERE expires_at <= $1::timestamptz LIMIT 1000) RETURNING key`,
        [now()],
      );
      return rows.length;
    },
  };
}

/** Fedify's prefixes that keep documents by URL (its defaults, which federation.ts keeps). */
const URL_KEYED = [
  ["_fedify", "remoteDocument"],
  ["_fedify", "publicKey"],
] as const;

/**
 * Forgets what Fedify cached of a remote actor, across the server (an erasure of its reader:
 * ../erasure.ts): the documents at its id or under it (`<id>#…`, `<id>/…`, `<id>?…`: its key, its
 * statuses) and its public key. Answers how many entries went.
 */
export async function forgetCachedActor(app: { sql: Sql }, actorId: string): Promise<number> {
  const keys = URL_KEYED.map((prefix) => keyText([...prefix, actorId]));
  const rows = await app.sql.query(
    `DELETE FROM federation_kv k USING unnest($1::text[]) AS p(key)
      WHERE k.key = p.key OR starts_with(k.key, p.key || '#') OR starts_with(k.key, p.key || '/') OR starts_with(k.key, p.key || '?')
      RETURNING k.key`,
    [keys],
  );
  return rows.length;
}
