// Email preferences (contract section 15): the tenant's `email` settings and a reader's own choice of
// reply emails at /api/v1/me/notifications (their identity; publishable keys allowed), with the
// tenant's default for readers who have not chosen, refusals for bad values, the choice in the
// reader's data export, and gone with the reader on erasure; the one-click unsubscribe link (RFC 8058)
// that turns them off with no sign-in, and changes nothing when forged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { signUnsubscribeToken } from "../src/modules/email/engine/unsubscribe.js";

let server: TestServer;
let t: TestTenant;
let pk: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
});
afterAll(() => server?.stop());

describe("email settings", () => {
  it("has defaults, takes a sender, a reply address, the digest hour and readers' default, and refuses bad values", async () => {
    expect((await t.api.get("/api/v1/settings")).body.email).toEqual({
      from: null,
      replyTo: null,
      digestHour: 7,
      defaultReplies: "off",
      maxPerReaderPerDay: 20,
      smtpUrl: null,
    });
    const ok = await t.api.patch("/api/v1/settings", {
      email: { from: "The Daily <news@daily.example>", replyTo: "editors@daily.example", digestHour: 18, maxPerReaderPerDay: 5 },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.email).toEqual({
      from: "The Daily <news@daily.example>",
      replyTo: "editors@daily.example",
      digestHour: 18,
      defaultReplies: "off",
      maxPerReaderPerDay: 5,
      smtpUrl: null,
    });
    const bad = await t.api.patch("/api/v1/settings", {
      email: { from: "not an address", replyTo: "nope", digestHour: 24, defaultReplies: "weekly", maxPerReaderPerDay: 0 },
    });
    expect(bad.status).toBe(422);
    expect((bad.body.errors as { path: string }[]).map((e) => e.path).sort()).toEqual([
      "email.defaultReplies",
      "email.digestHour",
      "email.from",
      "email.maxPerReaderPerDay",
      "email.replyTo",
    ]);
    // null clears the sender again
    expect((await t.api.patch("/api/v1/settings", { email: { from: null } })).body.email.from).toBeNull();
  });

  it("refuses line breaks and other control characters in the sender and the reply address (422 naming the field)", async () => {
    const before = (await t.api.get("/api/v1/settings")).body.email;
    const injected = [
      "The Daily\r\nBcc: eve@evil.example <news@daily.example>",
      "The Daily\nBcc: eve@evil.example <news@daily.example>",
      "The Daily\r<news@daily.example>",
      "news@daily.example\r\n",
      "\r\nnews@daily.example",
      "The\tDaily <news@daily.example>",
      "The Daily\u0000 <news@daily.example>",
      "The Daily\u0085 <news@daily.example>",
      "The Daily\u2028 <news@daily.example>",
    ];
    for (const from of injected) {
      const r = await t.api.patch("/api/v1/settings", { email: { from } });
      expect(r.status, JSON.stringify(from)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
      expect(r.body.errors, JSON.stringify(from)).toContainEqual({
        path: "email.from",
        message: expect.stringMatching(/control characters/),
      });
    }
    for (const replyTo of ["editors@daily.example\r\nBcc: eve@evil.example", "editors@daily.example\n", "\reditors@daily.example"]) {
      const r = await t.api.patch("/api/v1/settings", { email: { replyTo } });
      expect(r.status, JSON.stringify(replyTo)).toBe(422);
      expect(new Set((r.body.errors as { path: string }[]).map((e) => e.path))).toEqual(new Set(["email.replyTo"]));
      expect(r.body.errors).toContainEqual({ path: "email.replyTo", message: expect.stringMatching(/control characters/) });
    }
    expect((await t.api.get("/api/v1/settings")).body.email).toEqual(before);
  });
});

describe("/api/v1/me/notifications", () => {
  it("answers the tenant's default until the reader chooses, then their choice, with a publishable key", async () => {
    const ann = t.as({ key: pk, identity: await t.identity("ann-prefs", { name: "Ann" }) });
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "off", chosen: false, subscriptions: "off" });
    await t.api.patch("/api/v1/settings", { email: { defaultReplies: "daily" } });
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "daily", chosen: false, subscriptions: "off" });
    const set = await ann.patch("/api/v1/me/notifications", { replies: "immediate" });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ replies: "immediate", chosen: true, subscriptions: "off" });
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "immediate", chosen: true, subscriptions: "off" });
    // the tenant's default no longer moves a reader who chose
    await t.api.patch("/api/v1/settings", { email: { defaultReplies: "off" } });
    expect((await ann.get("/api/v1/me/notifications")).body).toEqual({ replies: "immediate", chosen: true, subscriptions: "off" });
    // the same over GraphQL
    const gql = await ann.raw("POST", "/graphql", { query: "{ myNotifications { replies chosen } }" });
    expect(gql.body).toEqual({ data: { myNotifications: { replies: "immediate", chosen: true } } });
    // the reader's export holds it
    expect((await ann.get("/api/v1/me/export")).body.profile.replyEmails).toBe("immediate");
  });

  it("refuses a bad choice, and a caller without an identity", async () => {
    const bo = t.as({ key: pk, identity: await t.identity("bo-prefs", { name: "Bo" }) });
    const bad = await bo.patch("/api/v1/me/notifications", { replies: "weekly" });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "replies", message: "must be one of immediate, daily, off" }],
    });
    expect((await bo.patch("/api/v1/me/notifications", {})).status).toBe(422);
    const anonymous = t.as({ key: pk });
    const refused = await anonymous.get("/api/v1/me/notifications");
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("invalid_identity");
  });

  it("is erased with the reader", async () => {
    const cy = await t.reader("cy-prefs", { name: "Cy" });
    expect((await cy.patch("/api/v1/me/notifications", { replies: "daily" })).status).toBe(200);
    expect([202, 204]).toContain((await cy.del("/api/v1/me")).status);
    expect((await cy.get("/api/v1/me/notifications")).body).toEqual({ replies: "off", chosen: false, subscriptions: "off" });
  });
});

describe("/api/v1/unsubscribe/{token}", () => {
  const form = (token: string, body = "List-Unsubscribe=One-Click") =>
    fetch(`${server.url}/api/v1/unsubscribe/${token}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });

  it("turns a reader's reply emails off with the one-click POST, and shows a page with the same button on GET", async () => {
    const dee = await t.reader("dee-unsub", { name: "Dee" });
    expect((await dee.patch("/api/v1/me/notifications", { replies: "immediate" })).status).toBe(200);
    const token = signUnsubscribeToken(server.app.runtime.services, { tenantId: t.tenantId, subjectId: "dee-unsub", kind: "replies" });
    const page = await fetch(`${server.url}/api/v1/unsubscribe/${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">');
    // a GET (a mail scanner following the link) changes nothing
    expect((await dee.get("/api/v1/me/notifications")).body.replies).toBe("immediate");
    const done = await form(token);
    expect(done.status).toBe(200);
    expect((await dee.get("/api/v1/me/notifications")).body).toEqual({ replies: "off", chosen: true, subscriptions: "off" });
    // again: still 200
    expect((await form(token)).status).toBe(200);
  });

  it("unsubscribes only with the body List-Unsubscribe=One-Click as a form: anything else is 400 and changes nothing", async () => {
    const fay = await t.reader("fay-unsub", { name: "Fay" });
    expect((await fay.patch("/api/v1/me/notifications", { replies: "immediate" })).status).toBe(200);
    const token = signUnsubscribeToken(server.app.runtime.services, { tenantId: t.tenantId, subjectId: "fay-unsub", kind: "replies" });
    const post = (body: string | undefined, contentType?: string) =>
      fetch(`${server.url}/api/v1/unsubscribe/${token}`, {
        method: "POST",
        ...(contentType ? { headers: { "content-type": contentType } } : {}),
        ...(body !== undefined ? { body } : {}),
      });
    const FORM = "application/x-www-form-urlencoded";
    const refused: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ["", FORM],
      ["List-Unsubscribe=One-Click&also=this", FORM],
      ["List-Unsubscribe=One-Click&List-Unsubscribe=One-Click", FORM],
      ["List-Unsubscribe=Yes", FORM],
      ["unsubscribe=1", FORM],
      ['{"List-Unsubscribe":"One-Click"}', "application/json"],
      ["List-Unsubscribe=One-Click", "text/plain"],
    ];
    for (const [body, contentType] of refused) {
      const r = await post(body, contentType);
      const what = `${contentType} ${JSON.stringify(body)}`;
      expect(r.status, what).toBe(400);
      expect(r.headers.get("content-type"), what).toMatch(/^application\/problem\+json/);
      expect(await r.json(), what).toMatchObject({ status: 400, code: "one_click_required" });
    }
    expect((await fay.get("/api/v1/me/notifications")).body).toEqual({ replies: "immediate", chosen: true, subscriptions: "off" });

    // the GET page's form, submitted as a browser submits it (its fields, urlencoded)
    const html = await (await fetch(`${server.url}/api/v1/unsubscribe/${token}`)).text();
    const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]+)">/g)].map((m) => [m[1]!, m[2]!]);
    const submitted = await post(new URLSearchParams(fields).toString(), `${FORM};charset=UTF-8`);
    expect(submitted.status).toBe(200);
    expect((await fay.get("/api/v1/me/notifications")).body).toEqual({ replies: "off", chosen: true, subscriptions: "off" });
  });

  it("changes nothing for a forged or altered token", async () => {
    const eve = await t.reader("eve-unsub", { name: "Eve" });
    expect((await eve.patch("/api/v1/me/notifications", { replies: "daily" })).status).toBe(200);
    const token = signUnsubscribeToken(server.app.runtime.services, { tenantId: t.tenantId, subjectId: "eve-unsub", kind: "replies" });
    const [payload, signature] = token.split(".") as [string, string];
    const otherReader = Buffer.from(JSON.stringify([1, t.tenantId, "ann-prefs", "replies"])).toString("base64url");
    for (const forged of [`${otherReader}.${signature}`, `${payload}.${signature.slice(0, -2)}AA`, payload, "nonsense"]) {
      const r = await form(forged);
      expect(r.status, forged).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((await fetch(`${server.url}/api/v1/unsubscribe/${forged}`)).status).toBe(400);
    }
    expect((await eve.get("/api/v1/me/notifications")).body.replies).toBe("daily");
    // the other reader the altered payload named keeps their choice too
    const ann = await t.reader("ann-prefs", { name: "Ann" });
    expect((await ann.get("/api/v1/me/notifications")).body.replies).toBe("immediate");
  });
});
