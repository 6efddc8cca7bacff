// Idempotency-Key records (contract section 11), in the idempotency_keys table. A request that
// carries a key first claims it (claim), or, where its only write is one statement, that statement
// claims it as it records its result (deferred; src/events/statement.ts); while it runs, each of
// its writes records its result in the write's own transaction (src/events/statement.ts,
// src/events/write-tx.ts, through eng_idempotency_record, or an UPDATE in the Prisma transaction);
// its answer is kept when it ends (complete: the answers of requests ending together go out as one
// statement), or the key is let go (release). A repeat of the request finds the answer, or — when
// the first request committed its writes but its answer was lost (a timeout, a crash) — the
// recorded results, which its writes then return instead of running again.
// A key's statements run on its tenant's plain SQL (src/db/tenant-store.ts: the tenant's id is `$1`,
// each text checked by the tenant guard), as the writes that record their results do; only the
// kept answers cross tenants: the answers of every request that ended meanwhile, whatever its
// tenant, are kept by one statement (COMPLETE, on the app's raw SQL).
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { keyedBatcher } from "../lib/batcher.js";
import type { Sql } from "../db/sql.js";
import type { TenantSql } from "../db/tenant-store.js";
import type { SecretBox } from "../lib/secret-box.js";

/** A request running under an Idempotency-Key: its context carries this to every write it makes. */
export interface IdempotencyScope {
  tenantId: string;
  key: string;
  /** this request's random token: its writes record themselves only while it still owns the key */
  owner: string;
  /** results an earlier run of this same request recorded without answering: returned, not redone */
  replay: unknown[];
  /** writes made (or answered from `replay`) so far, in order */
  writes: number;
  /**
   * Set while the key is not yet claimed (a route whose one write is one statement): that statement
   * claims it as it records its result (src/events/statement.ts), so claim, write and record take
   * one round trip. Cleared once a write has tried.
   */
  pending?: PendingClaim | undefined;
  /**
   * The key was claimed by the request's one write, unlocked, with that write's result: the result
   * is the outcome, and a repeat rebuilds the answer from it (no answer is kept for this run).
   */
  outcomeRecorded?: boolean | undefined;
  /** The key turned out to be taken when the write tried to claim it: the request answers this claim instead. */
  superseded?: Exclude<Claim, { kind: "run" }> | undefined;
}

/** What the first write's statement needs to claim the key, and the full claim for when the key was taken. */
export interface PendingClaim {
  fingerprint: string;
  lockedUntil: Date;
  createdAt: Date;
  expiresAt: Date;
  /** the claim made the usual way (a statement of its own): an expired or abandoned key is taken over, a kept answer found */
  claim(): Promise<Claim>;
}

/** The stored answer of a request. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  | { kind: "run"; scope: IdempotencyScope }
  | { kind: "answered"; answer: StoredAnswer }
  | { kind: "reused" }
  | { kind: "in_progress"; retryAfterSeconds: number };

export interface ClaimInput {
  tenantId: string;
  key: string;
  fingerprint: string;
  now: Date;
  ttlHours: number;
}

export interface IdempotencyRecords {
  claim(input: ClaimInput): Promise<Claim>;
  /** A scope whose key its first write claims (see `IdempotencyScope.pending`): no statement yet. */
  deferred(input: ClaimInput): IdempotencyScope;
  /** Keeps the request's answer (sealed: it may hold a secret shown once). */
  complete(scope: IdempotencyScope, answer: StoredAnswer, now: Date): Promise<void>;
  /** Nothing to keep: the key is forgotten when nothing was written, else a retry may take it over at once. */
  release(scope: IdempotencyScope, now: Date): Promise<void>;
  /** What the writes of a transaction (Prisma's) record: the result, sealed. */
  sealResult(result: unknown): unknown;
  /** A result recorded by `sealResult`, as the write returned it. */
  openResult(recorded: unknown): unknown;
}

/**
 * How long a running request holds its key before a repeat may take it over as abandoned (its
 * process died). A request that outlives it is fenced: its writes no longer record, so they roll back.
 */
export const CLAIM_LEASE_MS = 30_000;

/**
 * How long a finished request's answer waits for others' before they are kept together: a few ms of
 * latency on a keyed write, for one statement per several requests under load.
 */
const COMPLETE_GATHER_MS = 3;

/** The waits between tries of a completion or release that failed (the last one repeats). */
const SETTLE_RETRY_MS = [250, 500, 1_000];

const CLAIM = `
INSERT INTO idempotency_keys AS i (tenant_id, key, fingerprint, owner, locked_until, results, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, '[]'::jsonb, $6, $7)
ON CONFLICT (tenant_id, key) DO UPDATE SET
  owner = EXCLUDED.owner,
  locked_until = EXCLUDED.locked_until,
  fingerprint = EXCLUDED.fingerprint,
  results = CASE WHEN i.expires_at <= EXCLUDED.created_at THEN '[]'::jsonb ELSE i.results END,
  status = CASE WHEN i.expires_at <= EXCLUDED.created_at THEN NULL ELSE i.status END,
  response = CASE WHEN i.expires_at <= EXCLUDED.created_at THEN NULL ELSE i.response END,
  created_at = CASE WHEN i.expires_at <= EXCLUDED.created_at THEN EXCLUDED.created_at ELSE i.created_at END,
  expires_at = CASE WHEN i.expires_at <= EXCLUDED.created_at THEN EXCLUDED.expires_at ELSE i.expires_at END
WHERE i.expires_at <= EXCLUDED.created_at
   OR (i.status IS NULL AND i.locked_until <= EXCLUDED.created_at AND i.fingerprint = EXCLUDED.fingerprint)
RETURNING i.results`;

const READ = `SELECT fingerprint, status, response, locked_until FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`;

/**
 * The answers of every request that finished meanwhile, of whichever tenants, kept in one statement
 * (group commit across tenants, so it runs on the app's raw SQL: each row is matched by its own
 * tenant, key and owner; the writes' results, needed only until then, are dropped from the row), whose
 * commit does not wait for the disk (synchronous_commit off for this transaction only): an answer a
 * crash loses is the answer its write recorded durably, in its own transaction, and a retry gets it
 * from there once the claim's lease ends.
 */
const COMPLETE = `
WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
UPDATE idempotency_keys AS i SET status = a.status, response = a.response, locked_until = $6, results = '[]'::jsonb
  FROM async, unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[]) AS a(tenant_id, key, owner, status, response)
  -- the keys named as arrays too: a lookup by the primary key whatever the plan cached for the
  -- statement thinks of the table's size (a join alone became a scan of the whole table, planned
  -- while it was empty)
 WHERE i.tenant_id = ANY($1::text[]) AND i.key = ANY($2::text[])
   AND i.tenant_id = a.tenant_id AND i.key = a.key AND i.owner = a.owner AND i.status IS NULL`;

interface Completion {
  scope: IdempotencyScope;
  status: number;
  sealed: string;
  now: Date;
}

/** The key's row inserted by a write's own statement was there already (src/events/statement.ts). */
export function isKeyTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  return e?.code === "23505" && (e.constraint === "idempotency_keys_pkey" || String(e.message).includes("idempotency_keys_pkey"));
}

const RELEASE = `
WITH gone AS (
  DELETE FROM idempotency_keys
   WHERE tenant_id = $1 AND key = $2 AND owner = $3 AND status IS NULL AND results = '[]'::jsonb
  RETURNING 1)
UPDATE idempotency_keys SET locked_until = $4
 WHERE tenant_id = $1 AND key = $2 AND owner = $3 AND status IS NULL AND NOT EXISTS (SELECT 1 FROM gone)`;

/** A write's result as JSON text that gives back Dates and BigInts (Prisma rows hold both). */
function toJsonText(value: unknown): string {
  return JSON.stringify({ v: value }, function (this: Record<string, unknown>, k: string, v: unknown) {
    const raw = this[k];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (typeof raw === "bigint") return { $bigint: raw.toString() };
    return v;
  });
}

function fromJsonText(text: string): unknown {
  const parsed = JSON.parse(text, (_k, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const o = v as Record<string, unknown>;
      if (keys.length === 1 && typeof o.$date === "string") return new Date(o.$date);
      if (keys.length === 1 && typeof o.$bigint === "string") return BigInt(o.$bigint);
    }
    return v;
  }) as { v?: unknown };
  return parsed.v;
}

export function createIdempotencyRecords(deps: {
  /** the app's raw SQL: the kept answers only (COMPLETE, across tenants) */
  sql: Sql;
  /** a tenant's plain SQL (its store's): the claims, reads and releases of its keys */
  tenantSql: (tenantId: string) => TenantSql;
  secretBox: SecretBox;
  log: Logger;
}): IdempotencyRecords {
  const { sql, tenantSql, secretBox, log } = deps;

  /**
   * complete/release after the answer: when the database cannot be reached just then (the answer
   * was a 503), tried again in the background every SETTLE_RETRY_MS (at most a second apart) until
   * it is back, for as long as the claim's lease (after it a retry takes the key over anyway), so a
   * retry is kept waiting seconds, not the lease, after the database returns. Both are fenced by the
   * owner token, so a late one changes nothing it should not.
   */
  function settle(what: string, run: () => Promise<unknown>): Promise<void> {
    const giveUpAt = Date.now() + CLAIM_LEASE_MS;
    const attempt = (n: number): Promise<void> =>
      run().then(
        () => undefined,
        (err: unknown) => {
          if (Date.now() >= giveUpAt) {
            log.warn({ err }, `idempotency key ${what} failed; the lease lets a retry take it over`);
            return;
          }
          setTimeout(() => void attempt(n + 1), SETTLE_RETRY_MS[Math.min(n, SETTLE_RETRY_MS.length - 1)]).unref();
        },
      );
    return attempt(0);
  }

  const completeBatch = keyedBatcher<Completion, void>(async (_k, items) => {
    const now = new Date(Math.max(...items.map((i) => i.value.now.getTime())));
    const col = <T>(f: (c: Completion) => T) => items.map((i) => f(i.value));
    await sql.query(
      COMPLETE,
      [col((c) => c.scope.tenantId), col((c) => c.scope.key), col((c) => c.scope.owner), col((c) => c.status), col((c) => c.sealed), now],
      "eng_idempotency_complete",
    );
    for (const i of items) i.resolve();
  }, COMPLETE_GATHER_MS);

  async function claim({ tenantId, key, fingerprint, now, ttlHours }: ClaimInput): Promise<Claim> {
    for (let tries = 0; ; tries++) {
      const owner = randomUUID();
      const lockedUntil = new Date(now.getTime() + CLAIM_LEASE_MS);
      const expiresAt = new Date(now.getTime() + ttlHours * 3_600_000);
      const claimed = await tenantSql(tenantId).query<{ results: unknown[] }>(
        CLAIM,
        [key, fingerprint, owner, lockedUntil, now, expiresAt],
        "eng_idempotency_claim",
      );
      if (claimed[0]) return { kind: "run", scope: { tenantId, key, owner, replay: claimed[0].results, writes: 0 } };
      const [row] = await tenantSql(tenantId).query<{
        fingerprint: string;
        status: number | null;
        response: string | null;
        locked_until: Date | string;
      }>(READ, [key], "eng_idempotency_read");
      if (!row) {
        if (tries < 3) continue; // let go between the two statements: claim it again
        return { kind: "in_progress", retryAfterSeconds: 1 };
      }
      if (row.fingerprint !== fingerprint) return { kind: "reused" };
      if (row.status !== null && row.response !== null) {
        return { kind: "answered", answer: JSON.parse(secretBox.open(row.response, { remember: false })) as StoredAnswer };
      }
      const left = new Date(row.locked_until).getTime() - now.getTime();
      return { kind: "in_progress", retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
    }
  }

  return {
    claim,
    deferred(input) {
      const { tenantId, key, fingerprint, now, ttlHours } = input;
      return {
        tenantId,
        key,
        owner: randomUUID(),
        replay: [],
        writes: 0,
        pending: {
          fingerprint,
          createdAt: now,
          lockedUntil: new Date(now.getTime() + CLAIM_LEASE_MS),
          expiresAt: new Date(now.getTime() + ttlHours * 3_600_000),
          claim: () => claim(input),
        },
      };
    },
    complete(scope, answer, now) {
      const sealed = secretBox.seal(JSON.stringify(answer));
      return settle("completion", () => completeBatch("complete", { scope, status: answer.status, sealed, now }));
    },
    release(scope, now) {
      return settle("release", () => tenantSql(scope.tenantId).query(RELEASE, [scope.key, scope.owner, now], "eng_idempotency_release"));
    },
    sealResult: (result) => ({ sealed: secretBox.seal(toJsonText(result)) }),
    openResult(recorded) {
      const sealed = (recorded as { sealed?: unknown } | null)?.sealed;
      if (typeof sealed !== "string") throw new Error("not a sealed idempotency result");
      return fromJsonText(secretBox.open(sealed, { remember: false }));
    },
  };
}
