// Reply emails (contract section 15) end to end against a real SMTP server started here: the reader's
// address from their identity, replies coalesced for 2 minutes, the daily digest at the tenant's hour,
// RFC 8058 headers and a one-click unsubscribe that works, nothing for one's own reply or a reply not
// yet approved, 4xx retried with backoff, 5xx suppressing the address until another one comes, the
// daily limit, erasure, two workers never sending one message twice, and EMAIL_OUTBOX. The worker is
// driven pass by pass (app.email.runOnce) under a manual clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ParsedMail } from "mailparser";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";
import { createEmailWorker } from "../src/modules/email/engine/worker.js";

let smtp: TestSmtp;
let server: TestServer;
// every server here drives the worker, whose passes take what is due in the whole database: each on a
// database of its own, so no other file's mail (nor another server's here) is counted or taken
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const clock = manualClock(new Date());
const MIN = 60_000;

beforeAll(async () => {
  smtp = await startSmtp();
  own = await isolatedDatabase("email_replies");
  server = await startServer(
    { ...own.env, SMTP_URL: smtp.url, EMAIL_FROM: "Comments <comments@service.example>", PUBLIC_URL: "https://comments.example" },
    { clock },
  );
});
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await own?.drop();
});

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const pass = () => server.app.email.runOnce();
const to = (address: string) => smtp.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === address);

async function tenantWith(settings: Record<string, unknown>): Promise<TestTenant> {
  const t = await createTestTenant(server, "The Daily");
  expect((await t.api.patch("/api/v1/settings", { email: { defaultReplies: "immediate", ...settings } })).status).toBe(200);
  return t;
}

/** a reader's client, its assertion issued at the manual clock's now */
const as = (t: TestTenant, who: string, email?: string) =>
  t.reader(who, { name: who, iat: Math.floor(clock.now().getTime() / 1000), ...(email ? { email } : {}) });

async function thread(t: TestTenant, id: string, author: string, email: string | undefined) {
  expect((await t.api.put(`/api/v1/discussions/${id}`, { title: "On rivers", url: `https://daily.example/${id}` })).status).toBe(201);
  const reader = await as(t, author, email);
  const parent = await reader.post(`/api/v1/discussions/${id}/comments`, { body: `${author}'s thoughts on rivers` });
  expect(parent.status).toBe(201);
  return parent.body.id as string;
}

async function reply(t: TestTenant, discussion: string, parentId: string, who: string, body: string) {
  const r = await (await as(t, who)).post(`/api/v1/discussions/${discussion}/comments`, { body, parentId });
  expect(r.status).toBe(201);
  return r.body as { id: string; status: string };
}

describe("reply emails", () => {
  it("coalesces replies of 2 minutes into one message with RFC 8058 headers, both parts and links", async () => {
    const t = await tenantWith({ from: "The Daily <news@daily.example>" });
    const parent = await thread(t, "rivers", "ann", "ann@readers.example");
    const first = await reply(t, "rivers", parent, "bob", "Rivers <b>remember</b> everything.");
    await reply(t, "rivers", parent, "ann", "Thanks!"); // her own reply: nothing for her
    clock.advance(MIN);
    const second = await reply(t, "rivers", parent, "cyd", "And they forget nothing.");
    expect((await pass()).messages).toBe(0); // the first is due 2 minutes after it came
    clock.advance(MIN + 1000);
    const result = await pass();
    expect(result).toMatchObject({ messages: 1, sent: 1 });
    const [mail] = to("ann@readers.example") as [ParsedMail];
    expect(mail.subject).toBe("2 new replies to your comments on The Daily");
    expect(mail.from?.text).toBe('"The Daily" <news@daily.example>');
    expect(mail.text).toContain("Hello ann,");
    expect(mail.text).toContain("bob wrote on “On rivers”:");
    expect(mail.text).toContain(`https://daily.example/rivers#comment-${first.id}`);
    expect(mail.text).toContain(`https://daily.example/rivers#comment-${second.id}`);
    expect(mail.text).not.toContain("Thanks!");
    expect(mail.html).toContain("<p>Rivers &lt;b&gt;remember&lt;/b&gt; everything.</p>");
    expect(mail.html).toContain(`href="https://daily.example/rivers#comment-${first.id}"`);
    expect(mail.html).not.toMatch(/<img|<script|src=/i);
    // RFC 8058: an https one-click URL and a mailto, and the POST header
    const header = (key: string) =>
      mail.headerLines
        .find((h) => h.key === key)
        ?.line.replace(/^[^:]+:\s*/, "")
        .replace(/\s+/g, " ");
    expect(header("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    const [https, mailto] = header("list-unsubscribe")!.split(/,\s*/);
    expect(https).toMatch(/^<https:\/\/comments\.example\/api\/v1\/unsubscribe\/[\w-]+\.[\w-]+>$/);
    expect(mailto).toBe("<mailto:news@daily.example?subject=unsubscribe>");
    const unsubscribe = { url: https!.slice(1, -1) };
    expect(mail.text).toContain(unsubscribe.url);
    expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@daily\.example>$/);
    expect((await pass()).messages).toBe(0); // nothing twice

    // the one-click POST, as a mail client sends it, at this server's address
    const path = new URL(unsubscribe.url!).pathname;
    const click = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(click.status).toBe(200);
    await reply(t, "rivers", parent, "bob", "One more thing.");
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 0, sent: 0 });
    expect(to("ann@readers.example")).toHaveLength(1);
  });

  it("mails a held reply only once it is approved, and never a rejected one", async () => {
    const t = await tenantWith({});
    const parent = await thread(t, "held", "hal", "hal@readers.example");
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    const held = await reply(t, "held", parent, "bob", "Held for a moment.");
    const rejected = await reply(t, "held", parent, "cyd", "Never seen.");
    expect(held.status).toBe("pending");
    clock.advance(3 * MIN);
    expect((await pass()).messages).toBe(0);
    expect((await t.api.post(`/api/v1/comments/${rejected.id}/reject`, {})).status).toBe(200);
    expect((await t.api.post(`/api/v1/comments/${held.id}/approve`, {})).status).toBe(200);
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const [mail] = to("hal@readers.example") as [ParsedMail];
    expect(mail.subject).toBe("bob replied to your comment on “On rivers”");
    expect(mail.text).toContain("Held for a moment.");
    expect(mail.text).not.toContain("Never seen.");
  });

  it("sends nothing to a reader without an address or who chose off", async () => {
    const t = await tenantWith({});
    const quiet = await thread(t, "quiet", "noaddr", undefined);
    await reply(t, "quiet", quiet, "bob", "Hello?");
    const off = await thread(t, "off", "offie", "offie@readers.example");
    const offie = await as(t, "offie", "offie@readers.example");
    expect((await offie.patch("/api/v1/me/notifications", { replies: "off" })).status).toBe(200);
    await reply(t, "off", off, "bob", "Hello there");
    clock.advance(3 * MIN);
    expect((await pass()).messages).toBe(0);
    expect(await sql(`SELECT 1 FROM email_items WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(0);
  });

  it("gathers a daily reader's replies into one digest at the tenant's digest hour", async () => {
    const t = await tenantWith({ digestHour: (clock.now().getUTCHours() + 2) % 24 });
    const parent = await thread(t, "daily", "dora", "dora@readers.example");
    const dora = await as(t, "dora", "dora@readers.example");
    expect((await dora.patch("/api/v1/me/notifications", { replies: "daily" })).body).toEqual({
      replies: "daily",
      chosen: true,
      subscriptions: "off",
    });
    await reply(t, "daily", parent, "bob", "Morning one.");
    clock.advance(30 * MIN);
    await reply(t, "daily", parent, "cyd", "Morning two.");
    clock.advance(30 * MIN);
    expect((await pass()).messages).toBe(0); // an hour before the digest hour at the least
    clock.advance(61 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const [mail] = to("dora@readers.example") as [ParsedMail];
    expect(mail.subject).toBe("Your daily digest from The Daily: 2 replies");
    expect(mail.text).toContain("Morning one.");
    expect(mail.text).toContain("Morning two.");
  });

  it("retries a 4xx with backoff, and a 5xx suppresses the address until the identity gives another", async () => {
    const t = await tenantWith({});
    const parent = await thread(t, "smtp", "sam", "sam@readers.example");
    smtp.refuse.set("sam@readers.example", 451);
    await reply(t, "smtp", parent, "bob", "First try.");
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, retried: 1, sent: 0 });
    expect(await pass()).toMatchObject({ retried: 0, sent: 0 }); // not due again yet
    const [queued] = await sql<{ state: string; attempts: number; lastError: string }>(
      `SELECT state, attempts, last_error AS "lastError" FROM email_messages WHERE tenant_id = $1`,
      [t.tenantId],
    );
    expect(queued).toMatchObject({ state: "queued", attempts: 1 });
    expect(queued!.lastError).toMatch(/^The SMTP server refused it: 451/);
    smtp.refuse.delete("sam@readers.example");
    clock.advance(MIN);
    expect(await pass()).toMatchObject({ sent: 1 });
    expect(to("sam@readers.example")).toHaveLength(1);

    smtp.refuse.set("sam@readers.example", 550);
    await reply(t, "smtp", parent, "bob", "Second try.");
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, suppressed: 1 });
    const [suppressed] = await sql<{ at: Date | null }>(
      `SELECT email_suppressed_at AS at FROM readers WHERE tenant_id = $1 AND id = 'sam'`,
      [t.tenantId],
    );
    expect(suppressed!.at).not.toBeNull();
    const profile = async () =>
      (await t.api.post("/graphql", { query: `{ reader(id: "sam") { emailStatus replyEmails replyEmailsChosen } }` })).body.data.reader;
    expect(await profile()).toEqual({ emailStatus: "suppressed", replyEmails: "immediate", replyEmailsChosen: false });
    await reply(t, "smtp", parent, "bob", "Third try.");
    expect(await sql(`SELECT 1 FROM email_items WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(0);

    // a new address from the identity lifts it
    const sam = await as(t, "sam", "sam@new.example");
    expect((await sam.get("/api/v1/me/notifications")).status).toBe(200);
    await reply(t, "smtp", parent, "bob", "Fourth try.");
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    expect(to("sam@new.example")[0]?.text).toContain("Fourth try.");
    expect((await profile()).emailStatus).toBe("verified");
  });

  it("keeps to the daily limit, and erasure takes the reader's queued mail", async () => {
    const t = await tenantWith({ maxPerReaderPerDay: 2 });
    const parent = await thread(t, "limit", "lim", "lim@readers.example");
    for (let i = 0; i < 3; i++) {
      await reply(t, "limit", parent, "bob", `Reply ${i}`);
      clock.advance(3 * MIN);
      await pass();
    }
    expect(to("lim@readers.example").map((m) => m.text?.match(/Reply \d/)?.[0])).toEqual(["Reply 0", "Reply 1"]);

    const gone = await thread(t, "gone", "gus", "gus@readers.example");
    await reply(t, "gone", gone, "bob", "Queued for gus.");
    expect(await sql(`SELECT 1 FROM email_items WHERE tenant_id = $1 AND reader_id = 'gus'`, [t.tenantId])).toHaveLength(1);
    expect((await t.api.del("/api/v1/readers/gus")).status).toBeLessThan(300);
    expect(await sql(`SELECT 1 FROM email_items WHERE tenant_id = $1 AND reader_id = 'gus'`, [t.tenantId])).toHaveLength(0);
    clock.advance(3 * MIN);
    await pass();
    expect(to("gus@readers.example")).toHaveLength(0);
  });

  it("keeps stored line breaks out of every header and the stored subject (a title, the sender, the reply address)", async () => {
    const t = await tenantWith({ from: "The Daily <news@daily.example>", replyTo: "editors@daily.example" });
    const parent = await thread(t, "crlf", "gus", "gus@readers.example");
    // stored as data older than today's rules (or another way in) could hold them
    const bcc = "\r\nBcc: eve@evil.example";
    await sql(`UPDATE discussions SET title = $3 WHERE tenant_id = $1 AND id = $2`, [t.tenantId, "crlf", `On rivers${bcc}`]);
    await sql(
      `UPDATE tenants SET settings = jsonb_set(jsonb_set(settings, '{email,from}', to_jsonb($2::text)), '{email,replyTo}', to_jsonb($3::text))
        WHERE id = $1`,
      [t.tenantId, `The Daily${bcc} <news@daily.example>`, `editors@daily.example${bcc}`],
    );
    // the stored settings no longer pass the model, which then answers its defaults: the reader's own choice
    expect((await (await as(t, "gus", "gus@readers.example")).patch("/api/v1/me/notifications", { replies: "immediate" })).status).toBe(
      200,
    );
    await reply(t, "crlf", parent, "hal", "Indeed.");
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const [stored] = await sql<{ subject: string }>(`SELECT subject FROM email_messages WHERE tenant_id = $1`, [t.tenantId]);
    expect(stored!.subject).toBe("hal replied to your comment on “On rivers Bcc: eve@evil.example”");
    const [mail] = to("gus@readers.example") as [ParsedMail];
    expect(mail.subject).toBe(stored!.subject);
    expect(mail.headerLines.map((h) => h.key)).not.toContain("bcc");
    expect(mail.bcc).toBeUndefined();
    expect(mail.from?.value).toEqual([{ name: "The Daily Bcc: eve@evil.example", address: "news@daily.example" }]);
    expect(mail.replyTo).toBeUndefined(); // no single address in it: left out
    const listUnsubscribe = mail.headerLines.find((h) => h.key === "list-unsubscribe")?.line.replace(/\s+/g, " ");
    expect(listUnsubscribe).toContain("<mailto:news@daily.example?subject=unsubscribe>");
    expect(mail.to).toMatchObject({ value: [{ address: "gus@readers.example" }] });
    expect(smtp.received.filter((m) => JSON.stringify([m.to, m.cc, m.bcc]).includes("evil.example"))).toEqual([]);
  });

  it("three workers at once send each message once", async () => {
    const t = await tenantWith({});
    const parents = await Promise.all(
      ["w1", "w2", "w3", "w4", "w5", "w6"].map((id) => thread(t, id, `${id}-author`, `${id}@readers.example`)),
    );
    await Promise.all(parents.map((p, i) => reply(t, `w${i + 1}`, p, "bob", `To w${i + 1}`)));
    clock.advance(3 * MIN);
    const before = smtp.received.length;
    // three workers, as on three instances: each its own id and SMTP pool
    const workers = ["a", "b", "c"].map((id) => createEmailWorker(server.app.runtime.services, { workerId: `worker-${id}` }));
    const results = await Promise.all(workers.map((w) => w.runOnce()));
    await Promise.all(workers.map((w) => w.stop()));
    expect(results.reduce((n, r) => n + r.messages, 0)).toBe(6);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(6);
    expect(smtp.received.length - before).toBe(6);
    expect(new Set(smtp.received.slice(before).map((m) => m.messageId)).size).toBe(6);
  });
});

describe("a tenant's own SMTP server (email.smtpUrl)", () => {
  it("is stored sealed, answered and audited masked, and carries the tenant's mail on a service without SMTP_URL", async () => {
    const own = await startSmtp();
    const ownClock = manualClock(new Date());
    const db = await isolatedDatabase("email_own_smtp");
    const bare = await startServer({ ...db.env, PUBLIC_URL: "https://comments.example" }, { clock: ownClock });
    try {
      const t = await createTestTenant(bare, "Own Mail");
      const status = async () => (await t.api.post("/graphql", { query: "{ emailStatus { mode } }" })).body.data.emailStatus.mode;
      expect(await status()).toBe("off");
      const url = own.url.replace("smtp://", "smtp://mailer:s3cret-pass@");
      const set = await t.api.patch("/api/v1/settings", { email: { smtpUrl: url, defaultReplies: "immediate" } });
      expect(set.status).toBe(200);
      const masked = url.replace("s3cret-pass", "****");
      expect(set.body.email.smtpUrl).toBe(masked);
      expect((await t.api.get("/api/v1/settings")).body.email.smtpUrl).toBe(masked);
      expect(await status()).toBe("smtp");
      const [stored] = await bare.app.runtime.services.sql.query<{ settings: string }>(`SELECT settings::text FROM tenants WHERE id = $1`, [
        t.tenantId,
      ]);
      expect(stored!.settings).not.toContain("s3cret-pass");
      const audit = await t.admin.get("/api/v1/audit?action=settings.update");
      expect(JSON.stringify(audit.body)).not.toContain("s3cret-pass");

      // the test email and a reply email go through it, signed in as its user
      const test = await t.api.post("/api/v1/settings/email/test", { to: "owner@own.example" });
      expect(test.body).toMatchObject({ sent: true });
      await t.api.put("/api/v1/discussions/own", { title: "Own", url: "https://own.example/own" });
      const iat = Math.floor(ownClock.now().getTime() / 1000);
      const ann = await t.reader("ann", { name: "ann", email: "ann@readers.example", iat });
      const parent = await ann.post("/api/v1/discussions/own/comments", { body: "Mine" });
      await (
        await t.reader("bob", { iat })
      ).post("/api/v1/discussions/own/comments", { body: "Through your own server", parentId: parent.body.id });
      ownClock.advance(3 * MIN);
      expect(await bare.app.email.runOnce()).toMatchObject({ messages: 1, sent: 1 });
      expect(own.received.map((m) => m.subject)).toEqual(["Test email from Own Mail", "Reader bob replied to your comment on “Own”"]);
      expect(own.users).toContain("mailer");

      // refused: another scheme, a private address; null goes back to the service's (none here)
      const bad = await t.api.patch("/api/v1/settings", { email: { smtpUrl: "http://mail.example" } });
      expect(bad.body.errors).toEqual([{ path: "email.smtpUrl", message: "must be an smtp:// or smtps:// URL with a host" }]);
      const internal = await t.api.patch("/api/v1/settings", { email: { smtpUrl: "smtp://10.1.2.3:25" } });
      expect(internal.status).toBe(422);
      expect(internal.body.errors[0].path).toBe("email.smtpUrl");
      expect((await t.api.patch("/api/v1/settings", { email: { smtpUrl: null } })).body.email.smtpUrl).toBeNull();
      expect(await status()).toBe("off");
    } finally {
      await bare.stop();
      await own.close();
      await db.drop();
    }
  });
});

describe("EMAIL_OUTBOX=1", () => {
  it("keeps rendered messages instead of sending them", async () => {
    const outboxClock = manualClock(new Date());
    const db = await isolatedDatabase("email_outbox");
    const outbox = await startServer({ ...db.env, EMAIL_OUTBOX: "1" }, { clock: outboxClock });
    try {
      const t = await createTestTenant(outbox);
      await t.api.patch("/api/v1/settings", { email: { defaultReplies: "immediate" } });
      await t.api.put("/api/v1/discussions/kept", { title: "Kept", url: "https://daily.example/kept" });
      const ann = await t.reader("ann", { name: "ann", email: "ann@readers.example" });
      const parent = await ann.post("/api/v1/discussions/kept/comments", { body: "Mine" });
      await (await t.reader("bob")).post("/api/v1/discussions/kept/comments", { body: "Kept for later", parentId: parent.body.id });
      outboxClock.advance(3 * MIN);
      expect(await outbox.app.email.runOnce()).toMatchObject({ messages: 1, sent: 0 });
      const rows = await outbox.app.runtime.services.sql.query<{ state: string; text: string }>(
        `SELECT state, text_body AS text FROM email_messages WHERE tenant_id = $1`,
        [t.tenantId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ state: "outbox" });
      expect(rows[0]!.text).toContain("Kept for later");
      // what the console's Outbox reads
      const g = await t.api.post("/graphql", {
        query: `{ emailStatus { mode from } emailMessages(state: "outbox", first: 5) { edges { node { to subject text html state kind itemCount } } } }`,
      });
      expect(g.body.data.emailStatus).toEqual({ mode: "outbox", from: "Comments <no-reply@localhost>" });
      expect(g.body.data.emailMessages.edges.map((e: { node: unknown }) => e.node)).toEqual([
        expect.objectContaining({ to: "ann@readers.example", state: "outbox", kind: "replies", itemCount: 1 }),
      ]);
      const bad = await t.api.post("/graphql", { query: `{ emailMessages(state: "lost") { edges { node { id } } } }` });
      expect(bad.body.errors[0].extensions.code).toBe("validation_failed");
    } finally {
      await outbox.stop();
      await db.drop();
    }
  });
});
