// Opaque reader ids (contract section 20 as amended, section 27's first line):
//  - an email reader's id is `email:` + 32 hex that a plain hash of the address does not give, and one
//    address has unrelated ids on two tenants; after a reader signs in, comments, reacts, votes,
//    follows and is replied to, the plain hash is nowhere in the database (so in no answer, event,
//    feed, fragment or export the service makes from it), and not in the answers read here;
//  - ids of the plain-hash form (and a provider's subject that is an address) are migrated in place at
//    start-up: the reader keeps every comment, reaction, vote, follow, inbox item and session, and the
//    old form is left in no table; an unsubscribe link mailed before still works;
//  - every column that names a reader is one the migration rewrites.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";
import { client, type Creds } from "./support/client.js";
import { REWRITTEN_COLUMNS } from "../src/modules/sign-in/engine/opaque-reader-ids.js";
import { signUnsubscribeToken } from "../src/modules/email/engine/unsubscribe.js";

const ORIGIN = "https://blog.example";
const ADDRESS = "Ada.Lovelace@Readers.example";
const clock = manualClock(new Date());
let smtp: TestSmtp;
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const env = () => ({ ...own.env, SMTP_URL: smtp.url, EMAIL_FROM: "Comments <comments@service.example>", RETENTION_INTERVAL_MS: "0" });

beforeAll(async () => {
  smtp = await startSmtp();
  own = await isolatedDatabase("readerids");
  server = await startServer(env(), { clock });
});
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await own?.drop();
});

/** A client of the server running now (the migration test starts another). */
const as = (creds: Creds) => client(server.url, creds);
const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const plainHash = (address: string) => createHash("sha256").update(address.toLowerCase()).digest("hex").slice(0, 32);

/** Every text and JSON column of every table (partitions read through their parent), with the rows holding `needle`. */
async function whereIs(needle: string): Promise<string[]> {
  const columns = await sql<{ table: string; column: string }>(
    `SELECT c.table_name AS "table", c.column_name AS "column" FROM information_schema.columns c
       JOIN pg_class k ON k.relname = c.table_name AND k.relnamespace = 'public'::regnamespace
      WHERE c.table_schema = 'public' AND k.relkind IN ('r', 'p') AND NOT k.relispartition
        AND c.data_type IN ('text', 'character varying', 'json', 'jsonb')`,
  );
  const found: string[] = [];
  for (const { table, column } of columns) {
    const [row] = await sql<{ n: string }>(`SELECT count(*) AS n FROM "${table}" WHERE "${column}"::text LIKE $1`, [`%${needle}%`]);
    if (Number(row!.n) > 0) found.push(`${table}.${column} (${row!.n})`);
  }
  return found;
}

async function tenantWith(): Promise<TestTenant> {
  const t = await createTestTenant(server, "The Daily");
  const r = await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN], signIn: { methods: ["email"] }, votes: "updown" });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return t;
}

/** Signs `address` in by email link on the tenant: the session token. */
async function signIn(t: TestTenant, address: string): Promise<string> {
  const before = smtp.received.length;
  const asked = await fetch(`${server.url}/auth/v1/${t.tenantId}/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: address, origin: ORIGIN }),
  });
  expect(asked.status).toBe(202);
  await server.app.email.runOnce();
  const mail = smtp.received
    .slice(before)
    .find((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address?.toLowerCase() === address.toLowerCase());
  const link = /(http:\/\/[^\s]+\/auth\/v1\/[^/\s]+\/email\/[A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")?.[1];
  expect(link).toBeTruthy();
  const done = await fetch(link!, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ name: "Ada" }).toString(),
  });
  expect(done.status).toBe(200);
  const token = /"token":"(rs_[A-Za-z0-9_-]{43,})"/.exec(await done.text())?.[1];
  expect(token).toBeTruthy();
  return token!;
}

describe("opaque reader ids", () => {
  let t: TestTenant;
  let session: string;
  let readerId: string;
  let commentId: string;

  it("gives an email reader an id no plain hash gives, unrelated across tenants, and leaves the hash nowhere", async () => {
    t = await tenantWith();
    const other = await tenantWith();
    session = await signIn(t, ADDRESS);
    const otherSession = await signIn(other, ADDRESS);
    const ada = t.as({ key: t.apiKey, identity: session });
    readerId = (await ada.get("/api/v1/me")).body.id;
    const elsewhere = (await other.as({ key: other.apiKey, identity: otherSession }).get("/api/v1/me")).body.id;
    expect(readerId).toMatch(/^email:[0-9a-f]{32}$/);
    expect(elsewhere).toMatch(/^email:[0-9a-f]{32}$/);
    expect(readerId).not.toBe(elsewhere);
    expect(readerId).not.toBe(`email:${plainHash(ADDRESS)}`);

    // the reader takes part: a comment, a reaction, a vote, a page reaction, a follow; another reader replies
    const posted = await ada.post("/api/v1/discussions/d1/comments", { body: "Hello from Ada" });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    commentId = posted.body.id;
    expect(posted.body.author.id).toBe(readerId);
    const bob = await t.reader("bob", { name: "Bob" });
    const reply = await bob.post("/api/v1/discussions/d1/comments", { body: "Hi Ada", parentId: commentId });
    expect(reply.status).toBe(201);
    expect((await ada.post(`/api/v1/comments/${reply.body.id}/reactions`, { kind: "like" })).status).toBeLessThan(300);
    expect((await ada.put(`/api/v1/comments/${reply.body.id}/vote`, { value: 1 })).status).toBeLessThan(300);
    expect((await ada.put("/api/v1/discussions/d1/subscription", { mode: "all" })).status).toBeLessThan(300);
    expect((await ada.get("/api/v1/me/inbox")).body.items ?? (await ada.get("/api/v1/me/inbox")).body.data).toHaveLength(1);

    // the answers a page, a backend and the reader read carry the opaque id, never the hash
    const hash = plainHash(ADDRESS);
    const answers = [
      await t.api.get("/api/v1/discussions/d1/comments"),
      await t.api.get(`/api/v1/comments/${commentId}`),
      await ada.get("/api/v1/me/export"),
      await t.api.get(`/api/v1/readers/${encodeURIComponent(readerId)}/export`),
    ];
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(JSON.stringify(a.body)).not.toContain(hash);
    }
    expect(JSON.stringify(answers[0]!.body)).toContain(readerId);
    const exported = await fetch(`${server.url}/api/v1/export`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    expect(exported.status).toBe(200);
    const ndjson = await exported.text();
    expect(ndjson).toContain(readerId);
    expect(ndjson).not.toContain(hash);
    // and the database, from which every event, feed, fragment and export is made, holds it nowhere
    expect(await whereIs(hash)).toEqual([]);
  });

  it("migrates ids of the plain-hash form in place at start-up: the reader keeps everything, the old form is left nowhere", async () => {
    const oldId = `email:${plainHash(ADDRESS)}`;
    const oidcOld = "corp:ann@corp.example";
    // a provider's subject that was an address, as it stood in the id before
    await sql(
      `UPDATE tenants SET settings = jsonb_set(settings, '{signIn,oidc}', '[{"id":"corp","label":"Corp","issuer":"https://id.corp.example","clientId":"c","clientSecretEnc":"sealed"}]'::jsonb) WHERE id = $1`,
      [t.tenantId],
    );
    server.app.runtime.services.authCache.invalidateTenant(t.tenantId);
    const ann = await t.reader(oidcOld, { name: "Ann" });
    expect((await ann.post("/api/v1/discussions/d1/comments", { body: "Ann here" })).status).toBe(201);

    // the tenant as the service before this change left it: the plain-hash id everywhere the opaque
    // one is now (every text and JSON column of every table), and no key
    const columns = await sql<{ table: string; column: string; type: string }>(
      `SELECT c.table_name AS "table", c.column_name AS "column", c.data_type AS type FROM information_schema.columns c
         JOIN pg_class k ON k.relname = c.table_name AND k.relnamespace = 'public'::regnamespace
        WHERE c.table_schema = 'public' AND k.relkind IN ('r', 'p') AND NOT k.relispartition
          AND c.data_type IN ('text', 'json', 'jsonb')`,
    );
    for (const { table, column, type } of columns) {
      await sql(`UPDATE "${table}" SET "${column}" = replace("${column}"::text, $1, $2)::${type} WHERE "${column}"::text LIKE $3`, [
        readerId,
        oldId,
        `%${readerId}%`,
      ]);
    }
    await sql("DELETE FROM reader_id_keys WHERE tenant_id = $1", [t.tenantId]);
    expect((await whereIs(oldId)).length).toBeGreaterThan(5);
    expect(await whereIs(readerId)).toEqual([]);

    // an unsubscribe link mailed before the migration, naming the old id
    const unsubscribe = signUnsubscribeToken(server.app.runtime.services, { tenantId: t.tenantId, subjectId: oldId, kind: "replies" });

    // the next start migrates (a new instance on the same database)
    await server.stop();
    server = await startServer(env(), { clock });
    expect(await whereIs(oldId)).toEqual([]);
    expect(await whereIs(oidcOld)).toEqual([]);
    const [{ n: keys } = { n: "0" }] = await sql<{ n: string }>("SELECT count(*) AS n FROM reader_id_keys WHERE tenant_id = $1", [
      t.tenantId,
    ]);
    expect(Number(keys)).toBe(1);

    // the session goes on, as the same reader under the new id, with all that was theirs
    const ada = as({ key: t.apiKey, identity: session });
    const me = await ada.get("/api/v1/me");
    expect(me.status).toBe(200);
    const newId = me.body.id as string;
    expect(newId).toMatch(/^email:[0-9a-f]{32}$/);
    expect(newId).not.toBe(oldId);
    expect((await as({ key: t.apiKey }).get(`/api/v1/comments/${commentId}`)).body.author.id).toBe(newId);
    const exported = (await ada.get("/api/v1/me/export")).body;
    const text = JSON.stringify(exported);
    expect(text).not.toContain(oldId);
    expect(text).toContain("Hello from Ada");
    expect((await ada.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "all" });
    const inbox = (await ada.get("/api/v1/me/inbox")).body;
    expect(inbox.items ?? inbox.data).toHaveLength(1);
    for (const table of ["reactions", "votes"]) {
      const [row] = await sql<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1 AND reader_id = $2`, [
        t.tenantId,
        newId,
      ]);
      expect(Number(row!.n), table).toBe(1);
    }
    // signing in again by email is the same reader
    const again = await signIn(t, ADDRESS);
    expect((await as({ key: t.apiKey, identity: again }).get("/api/v1/me")).body.id).toBe(newId);
    // the provider's subject that was an address: opaque now
    const [annRow] = await sql<{ id: string }>("SELECT author_id AS id FROM comments WHERE tenant_id = $1 AND body = 'Ann here'", [
      t.tenantId,
    ]);
    expect(annRow!.id).toMatch(/^corp:[0-9a-f]{32}$/);
    // the old unsubscribe link still reaches the reader
    const off = await fetch(`${server.url}/api/v1/unsubscribe/${unsubscribe}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(off.status).toBeLessThan(300);
    const [prefs] = await sql<{ replyEmails: string }>(
      `SELECT reply_emails AS "replyEmails" FROM readers WHERE tenant_id = $1 AND id = $2`,
      [t.tenantId, newId],
    );
    expect(prefs!.replyEmails).toBe("off");
  });

  it("rewrites every column that names a reader", async () => {
    const columns = await sql<{ table: string; column: string }>(
      `SELECT c.table_name AS "table", c.column_name AS "column" FROM information_schema.columns c
         JOIN pg_class k ON k.relname = c.table_name AND k.relnamespace = 'public'::regnamespace
        WHERE c.table_schema = 'public' AND k.relkind IN ('r', 'p') AND NOT k.relispartition
          AND (c.column_name LIKE '%reader_id%' OR c.column_name = 'author_id')`,
    );
    expect(columns.length).toBeGreaterThan(10);
    const listed = new Set(REWRITTEN_COLUMNS.map(([table, column]) => `${table}.${column}`));
    expect(columns.map((c) => `${c.table}.${c.column}`).filter((c) => !listed.has(c))).toEqual([]);
  });
});
