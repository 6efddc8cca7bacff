// The floor: a minimal hand-written server doing the same durable work as the service's hot paths
// (issue "hot paths"), to measure the service against in the same run. Fastify + pg + jose +
// ioredis, its own tables in its own database: API-key lookup by sha256 (one SELECT, no cache),
// the identity JWT verified with jose, then ONE SQL statement per write (the discussion upserted
// with its seq bumped, the reader upserted only if it changed, the comment and the event row
// inserted), then PUBLISH. Reads are one SELECT. `synchronous_commit` stays on. Named prepared
// statements, except through a transaction-mode pooler (FLOOR_POOLER=transaction): there each is
// parsed every time, unnamed, as the service's are. The floor sets no statement timeout either way.
// FLOOR_TABLES=service: a POST is written onto the service's own tables instead (its schema migrated
// into this database beforehand by the bench: FLOOR_POST_ON_SERVICE_TABLES), and the two reads read
// them, answering the service's own representation of a comment (FLOOR_LIST/ONE_ON_SERVICE_TABLES:
// its body's HTML, votes, kind, the author's badge); the reaction toggle as before.
// Env: DATABASE_URL (a database of its own), REDIS_URL, PORT, FLOOR_POOLER, FLOOR_TABLES. Prints `ready <json>` when listening.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import Fastify from "fastify";
import pg from "pg";
import { jwtVerify } from "jose";
import { Redis } from "ioredis";
import {
  FLOOR_LIST_ON_SERVICE_TABLES,
  FLOOR_ONE_ON_SERVICE_TABLES,
  FLOOR_POST,
  FLOOR_POST_ON_SERVICE_TABLES,
  FLOOR_SCHEMA,
  floorBodyHtml,
} from "./statements.js";

/** whether the floor writes and reads the service's own tables (FLOOR_TABLES=service) */
const onServiceTables = process.env.FLOOR_TABLES === "service";
// On the service's tables the floor plans its named statements once a connection, as the service
// does (src/db/client.ts): PostgreSQL's `auto` mode re-plans a list statement on every execution once
// its table has grown, and planning over the 14 indexes of `comments` would be most of a read.
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 20,
  ...(onServiceTables ? { options: "-c plan_cache_mode=force_generic_plan" } : {}),
});
/** a statement's name, or none through a transaction-mode pooler (a name lives in one server session) */
const named = (name: string) => (process.env.FLOOR_POOLER === "transaction" ? {} : { name });
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

await pool.query(FLOOR_SCHEMA);
const tenantId = "ten_floor";
const apiKey = `ek_${randomBytes(32).toString("hex")}`;
const identitySecret = randomBytes(24).toString("hex");
await pool.query("INSERT INTO f_tenants VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET identity_secret = EXCLUDED.identity_secret", [
  tenantId,
  identitySecret,
]);
await pool.query("INSERT INTO f_keys VALUES ($1, $2)", [sha256(apiKey), tenantId]);
// the service's discussions need the tenant's row
if (onServiceTables)
  await pool.query("INSERT INTO tenants (id, name, identity_secret_enc) VALUES ($1, 'floor', '-') ON CONFLICT (id) DO NOTHING", [tenantId]);

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

async function auth(headers: Record<string, unknown>): Promise<{ tenantId: string; identitySecret: string }> {
  const key = headers["x-api-key"];
  if (typeof key !== "string") throw new Refusal(401, "unauthenticated");
  const { rows } = await pool.query({
    ...named("f_key"),
    text: "SELECT k.tenant_id, t.identity_secret FROM f_keys k JOIN f_tenants t ON t.id = k.tenant_id WHERE k.hash = $1",
    values: [sha256(key)],
  });
  if (!rows[0]) throw new Refusal(401, "unauthenticated");
  return { tenantId: rows[0].tenant_id, identitySecret: rows[0].identity_secret };
}

async function reader(headers: Record<string, unknown>, secret: string) {
  const token = headers["x-service-identity"];
  if (typeof token !== "string") throw new Refusal(401, "invalid_identity");
  const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
  return { id: String(payload.sub), name: String(payload.name), avatarUrl: (payload.avatarUrl as string | undefined) ?? null };
}

const TOGGLE = `
  WITH cm AS (SELECT discussion_id FROM f_comments WHERE tenant_id = $1 AND id = $2),
  d AS (
    UPDATE f_discussions SET seq = seq + 1 WHERE tenant_id = $1 AND id = (SELECT discussion_id FROM cm) RETURNING id, seq
  ), del AS (
    DELETE FROM f_reactions WHERE comment_id = $2 AND reader_id = $3 AND kind = $4 AND EXISTS (SELECT 1 FROM d) RETURNING 1
  ), ins AS (
    INSERT INTO f_reactions SELECT $2, $3, $4 FROM d WHERE NOT EXISTS (SELECT 1 FROM del) ON CONFLICT DO NOTHING RETURNING 1
  ), c AS (
    UPDATE f_comments SET
      reaction_counts = jsonb_set(reaction_counts, ARRAY[$4::text],
        to_jsonb(COALESCE((reaction_counts ->> $4)::int, 0) + CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 ELSE -1 END)),
      reaction_total = reaction_total + CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 ELSE -1 END
    WHERE id = $2 AND EXISTS (SELECT 1 FROM d) RETURNING reaction_counts
  ), e AS (
    INSERT INTO f_events (id, tenant_id, discussion_id, seq, type, payload, occurred_at)
    SELECT $5::uuid, $1, d.id, d.seq, 'reaction_toggled', jsonb_build_object('commentId', $2::text, 'kind', $4::text), now() FROM d
  )
  SELECT d.id AS discussion_id, d.seq, c.reaction_counts, EXISTS (SELECT 1 FROM ins) AS active FROM d, c`;

const COLUMNS = `c.id, c.discussion_id, c.body, c.status, c.created_at, c.reaction_counts, c.reply_count, r.id AS author_id, r.name, r.avatar_url`;
const LIST = `SELECT ${COLUMNS} FROM f_comments c JOIN f_readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.discussion_id = $2 ORDER BY c.created_at DESC, c.id DESC LIMIT $3`;
const ONE = `SELECT ${COLUMNS} FROM f_comments c JOIN f_readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.id = $2`;

const dto = (r: Record<string, unknown>) => ({
  id: r.id,
  discussionId: r.discussion_id,
  parentId: null,
  author: { id: r.author_id, name: r.name, avatarUrl: r.avatar_url },
  body: r.body,
  status: r.status,
  pinned: false,
  editedAt: null,
  createdAt: (r.created_at as Date).toISOString(),
  reactions: r.reaction_counts,
  replyCount: r.reply_count,
});

const app = Fastify({ logger: false });
app.setErrorHandler((err, _req, reply) => {
  const status = err instanceof Refusal ? err.status : 500;
  void reply.status(status).send({ code: err instanceof Refusal ? err.code : "internal_error" });
});

app.post<{ Params: { id: string }; Body: { body?: string } }>("/api/v1/discussions/:id/comments", async (req, reply) => {
  const t = await auth(req.headers);
  const r = await reader(req.headers, t.identitySecret);
  const body = req.body?.body;
  if (typeof body !== "string" || body.trim() === "") throw new Refusal(422, "validation_failed");
  const id = `cmt_${randomBytes(12).toString("base64url")}`;
  const eventId = randomUUID();
  const comment = { id, discussionId: req.params.id, parentId: null, author: r, body, status: "approved", pinned: false };
  const envelope = { id: eventId, type: "comment_created", tenantId: t.tenantId, discussionId: req.params.id, data: { comment } };
  const values = [t.tenantId, req.params.id, id, r.id, r.name, r.avatarUrl, body, eventId, JSON.stringify(envelope)];
  const { rows } = onServiceTables
    ? await pool.query({ ...named("f_post_tables"), text: FLOOR_POST_ON_SERVICE_TABLES, values: [...values, floorBodyHtml(body)] })
    : await pool.query({ ...named("f_post"), text: FLOOR_POST, values });
  const seq = rows[0].seq as number;
  void redis.publish(`f:${t.tenantId}:${req.params.id}`, JSON.stringify({ ...envelope, seq }));
  return reply
    .status(201)
    .send({ ...comment, editedAt: null, createdAt: (rows[0].created_at as Date).toISOString(), reactions: {}, replyCount: 0 });
});

app.post<{ Params: { id: string }; Body: { kind?: string } }>("/api/v1/comments/:id/reactions", async (req) => {
  const t = await auth(req.headers);
  const r = await reader(req.headers, t.identitySecret);
  const kind = req.body?.kind;
  if (typeof kind !== "string") throw new Refusal(422, "validation_failed");
  const { rows } = await pool.query({ ...named("f_toggle"), text: TOGGLE, values: [t.tenantId, req.params.id, r.id, kind, randomUUID()] });
  if (!rows[0]) throw new Refusal(404, "not_found");
  const result = { commentId: req.params.id, readerId: r.id, kind, active: rows[0].active, counts: rows[0].reaction_counts };
  void redis.publish(
    `f:${t.tenantId}:${rows[0].discussion_id}`,
    JSON.stringify({ seq: rows[0].seq, type: "reaction_toggled", data: result }),
  );
  return result;
});

/** a comment as the service answers it, from a row of the service's own tables */
const serviceDto = (r: Record<string, unknown>) => ({
  id: r.id,
  discussionId: r.discussion_id,
  parentId: r.parent_id,
  author: { id: r.author_id, name: r.name, avatarUrl: r.avatar_url, badge: r.badge },
  body: r.body,
  bodyHtml: r.body_html,
  status: r.status,
  pinned: r.pinned,
  editedAt: r.edited_at === null ? null : (r.edited_at as Date).toISOString(),
  createdAt: (r.created_at as Date).toISOString(),
  reactions: r.reaction_counts,
  replyCount: r.reply_count,
  score: r.score,
  upvotes: r.upvotes,
  downvotes: r.downvotes,
  kind: r.kind,
});

app.get<{ Params: { id: string }; Querystring: { limit?: string } }>("/api/v1/discussions/:id/comments", async (req) => {
  const t = await auth(req.headers);
  const limit = Math.min(100, Number(req.query.limit ?? 20));
  const values = [t.tenantId, req.params.id, limit + 1];
  if (onServiceTables) {
    const { rows } = await pool.query({ ...named("f_list_tables"), text: FLOOR_LIST_ON_SERVICE_TABLES, values });
    const items = rows.slice(0, limit).map(serviceDto);
    const last = items.at(-1);
    const cursor =
      rows.length > limit && last ? Buffer.from(JSON.stringify([last.pinned, last.createdAt, last.id])).toString("base64url") : null;
    return { items, nextCursor: cursor };
  }
  const { rows } = await pool.query({ ...named("f_list"), text: LIST, values });
  const items = rows.slice(0, limit).map(dto);
  return { items, nextCursor: rows.length > limit ? Buffer.from(JSON.stringify([items.at(-1)?.id])).toString("base64url") : null };
});

app.get<{ Params: { id: string } }>("/api/v1/comments/:id", async (req) => {
  const t = await auth(req.headers);
  const { rows } = onServiceTables
    ? await pool.query({ ...named("f_one_tables"), text: FLOOR_ONE_ON_SERVICE_TABLES, values: [t.tenantId, req.params.id] })
    : await pool.query({ ...named("f_one"), text: ONE, values: [t.tenantId, req.params.id] });
  if (!rows[0]) throw new Refusal(404, "not_found");
  return onServiceTables ? serviceDto(rows[0]) : dto(rows[0]);
});

const { rows: sc } = await pool.query("SHOW synchronous_commit");
await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
const address = app.server.address() as { port: number };
console.log(`ready ${JSON.stringify({ port: address.port, apiKey, identitySecret, synchronousCommit: sc[0].synchronous_commit })}`);
// a normal exit on SIGTERM, so that a V8 CPU profile (BENCH_CPU_PROFILE) is written
process.once("SIGTERM", () => process.exit(0));
