// Emails of followed discussions (contract section 19 with section 15) end to end against a real SMTP
// server started here: PATCH /api/v1/me/notifications {"subscriptions"} (default off, GET shows it),
// `immediate` mails the new_comment items the follow worker writes (coalesced for 2 minutes), `daily`
// gathers a day's into one digest at the tenant's digest hour, each message with RFC 8058 headers
// whose one-click unsubscribe turns subscriptions emails off and leaves reply emails alone. The
// workers are driven pass by pass (app.follow.runOnce, app.email.runOnce) under a manual clock, on a
// database of this file's own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ParsedMail } from "mailparser";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";

let smtp: TestSmtp;
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const clock = manualClock(new Date());
const MIN = 60_000;

beforeAll(async () => {
  smtp = await startSmtp();
  own = await isolatedDatabase("email_following");
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

const pass = async () => {
  await server.app.follow.runOnce();
  return server.app.email.runOnce();
};
const to = (address: string) => smtp.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === address);
const as = (t: TestTenant, who: string, email?: string) =>
  t.reader(who, { name: who, iat: Math.floor(clock.now().getTime() / 1000), ...(email ? { email } : {}) });

async function discussion(settings: Record<string, unknown> = {}) {
  const t = await createTestTenant(server, "The Daily");
  expect((await t.api.patch("/api/v1/settings", { email: { from: "The Daily <news@daily.example>", ...settings } })).status).toBe(200);
  expect((await t.api.put("/api/v1/discussions/rivers", { title: "On rivers", url: "https://daily.example/rivers" })).status).toBe(201);
  return t;
}

async function comment(t: TestTenant, who: string, body: string, parentId?: string) {
  const r = await (await as(t, who)).post("/api/v1/discussions/rivers/comments", { body, ...(parentId ? { parentId } : {}) });
  expect(r.status).toBe(201);
  return r.body as { id: string };
}

async function follower(t: TestTenant, who: string, subscriptions: string) {
  const c = await as(t, who, `${who}@readers.example`);
  expect((await c.get("/api/v1/me/notifications")).body).toMatchObject({ subscriptions: "off" });
  const set = await c.patch("/api/v1/me/notifications", { subscriptions });
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ subscriptions });
  expect((await c.put("/api/v1/discussions/rivers/subscription", { mode: "all" })).status).toBe(200);
  return c;
}

describe("emails of followed discussions", () => {
  it("immediate: the new comments of 2 minutes in one message, with a one-click unsubscribe that stops only them", async () => {
    const t = await discussion({ defaultReplies: "immediate" });
    const ann = await follower(t, "ann", "immediate");
    // her reply choice (the tenant's default) is kept beside it
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "immediate", chosen: false, subscriptions: "immediate" });
    const first = await comment(t, "bob", "Rivers remember everything.");
    const second = await comment(t, "cyd", "And forget nothing.");
    expect(await pass()).toMatchObject({ messages: 0 }); // not due for 2 minutes
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const [mail] = to("ann@readers.example") as [ParsedMail];
    expect(mail.subject).toBe("2 new comments in discussions you follow on The Daily");
    expect(mail.text).toContain("Rivers remember everything.");
    expect(mail.text).toContain(`https://daily.example/rivers#comment-${second.id}`);
    expect(mail.text).not.toContain("In reply to your comment");
    const header = (k: string) =>
      mail.headerLines
        .find((h) => h.key === k)
        ?.line.replace(/^[^:]+:\s*/, "")
        .replace(/\s+/g, " ");
    expect(header("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    const [https, mailto] = header("list-unsubscribe")!.split(/,\s*/);
    expect(https).toMatch(/^<https:\/\/comments\.example\/api\/v1\/unsubscribe\/[\w-]+\.[\w-]+>$/);
    expect(mailto).toBe("<mailto:news@daily.example?subject=unsubscribe>");
    expect(first.id).not.toBe(second.id);

    // a forged token changes nothing
    const path = new URL(https!.slice(1, -1)).pathname;
    const forged = await fetch(`${server.url}${path.slice(0, -2)}xx`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(forged.status).not.toBe(200);
    expect((await ann.get("/api/v1/me/notifications")).body).toMatchObject({ subscriptions: "immediate" });
    // the one-click POST, as a mail client sends it
    const click = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(click.status).toBe(200);
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "immediate", chosen: false, subscriptions: "off" });
    // new comments are still items, but no more mail of them; replies still mail
    const top = await comment(t, "ann", "Ann's own thoughts.");
    await comment(t, "bob", "A third comment.");
    await comment(t, "bob", "A reply to ann.", top.id);
    clock.advance(3 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const mails = to("ann@readers.example");
    expect(mails).toHaveLength(2);
    expect(mails[1]!.subject).toBe("bob replied to your comment on “On rivers”");
    const items = (await ann.get("/api/v1/me/inbox")).body.items.map((i: { type: string }) => i.type);
    expect(items.sort()).toEqual(["new_comment", "new_comment", "new_comment", "reply"]);
  });

  it("daily: the day's new comments in one digest at the tenant's digest hour; off (the default): none", async () => {
    const t = await discussion({ digestHour: (clock.now().getUTCHours() + 2) % 24 });
    await follower(t, "dora", "daily");
    const quiet = await as(t, "quiet", "quiet@readers.example");
    expect((await quiet.put("/api/v1/discussions/rivers/subscription", { mode: "all" })).status).toBe(200);
    await comment(t, "bob", "Morning one.");
    clock.advance(30 * MIN);
    await comment(t, "cyd", "Morning two.");
    clock.advance(30 * MIN);
    expect((await pass()).messages).toBe(0); // an hour before the digest hour at the least
    clock.advance(61 * MIN);
    expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
    const [mail] = to("dora@readers.example") as [ParsedMail];
    expect(mail, smtp.received.map((m) => `${m.subject} ${JSON.stringify(m.to)}`).join("\n")).toBeDefined();
    expect(mail.subject).toBe("Your daily digest from The Daily: 2 new comments in discussions you follow");
    expect(mail.text).toContain("Morning one.");
    expect(mail.text).toContain("Morning two.");
    expect(mail.headerLines.some((h) => h.key === "list-unsubscribe")).toBe(true);
    // once a day: nothing more until new comments come and the next digest hour
    clock.advance(2 * 60 * MIN);
    expect((await pass()).messages).toBe(0);
    // the follower who chose no subscription emails got items, no mail
    expect(to("quiet@readers.example")).toHaveLength(0);
    expect((await (await as(t, "quiet")).get("/api/v1/me/inbox")).body.items).toHaveLength(2);
  });

  it("refuses a bad subscriptions choice", async () => {
    const t = await discussion();
    const ann = await as(t, "ann");
    const bad = await ann.patch("/api/v1/me/notifications", { subscriptions: "weekly" });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: "validation_failed", errors: [{ path: "subscriptions" }] });
  });
});
