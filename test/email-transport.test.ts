// Email's transport (contract section 15) against a real SMTP server started here (smtp-server on
// loopback, messages read back with mailparser): "Send test email" arrives from the tenant's sender
// with its reply address and both a text and an HTML part; a refusal or no server is said in words;
// without SMTP_URL email is off — /readyz says so and the test email is refused with 409.
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";

let smtp: TestSmtp;
let smtpUrl: string;
let received: ParsedMail[];

beforeAll(async () => {
  smtp = await startSmtp();
  smtpUrl = smtp.url;
  received = smtp.received;
});
afterAll(() => smtp.close());

describe("with an SMTP server", () => {
  let server: TestServer;
  let t: TestTenant;
  beforeAll(async () => {
    server = await startServer({ SMTP_URL: smtpUrl, EMAIL_FROM: "Comments <comments@service.example>" });
    t = await createTestTenant(server, "The Daily");
  });
  afterAll(() => server?.stop());

  it("sends a test email from the tenant's sender, with a text and an HTML part", async () => {
    await t.api.patch("/api/v1/settings", { email: { from: "The Daily <news@daily.example>", replyTo: "editors@daily.example" } });
    const r = await t.api.post("/api/v1/settings/email/test", { to: "operator@daily.example" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ sent: true, error: null, messageId: expect.any(String) });
    const mail = received.find((m) => m.messageId === r.body.messageId);
    expect(mail).toBeDefined();
    expect(mail!.subject).toBe("Test email from The Daily");
    expect(mail!.from?.text).toBe('"The Daily" <news@daily.example>');
    expect(mail!.replyTo?.text).toBe("editors@daily.example");
    expect(mail!.text).toContain("test email from The Daily's comments");
    expect(mail!.html).toContain("<strong>The Daily</strong>");
    expect((await (await fetch(`${server.url}/readyz`)).json()).details).toEqual({ email: "smtp" });
  });

  it("falls back to the service's sender, says a refusal in words, and checks its input and capability", async () => {
    await t.api.patch("/api/v1/settings", { email: { from: null, replyTo: null } });
    const fallback = await t.api.post("/api/v1/settings/email/test", { to: "someone@daily.example" });
    expect(received.find((m) => m.messageId === fallback.body.messageId)?.from?.text).toBe('"Comments" <comments@service.example>');
    smtp.refuse.set("gone@daily.example", 550);
    const no = await t.api.post("/api/v1/settings/email/test", { to: "gone@daily.example" });
    expect(no.status).toBe(200);
    expect(no.body).toMatchObject({ sent: false, messageId: null });
    expect(no.body.error).toMatch(/^The SMTP server refused it: 550/);
    const bad = await t.api.post("/api/v1/settings/email/test", { to: "not an address" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ path: "to", message: "must be an email address" }]);
    const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    const denied = await moderator.post("/api/v1/settings/email/test", { to: "operator@daily.example" });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe("missing_capability");
  });
});

describe("without an SMTP server", () => {
  it("is off: /readyz says so and a test email is refused with 409 email_not_configured", async () => {
    const server = await startServer();
    try {
      const t = await createTestTenant(server);
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect((await ready.json()).details).toEqual({ email: "off" });
      const r = await t.api.post("/api/v1/settings/email/test", { to: "operator@daily.example" });
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("email_not_configured");
    } finally {
      await server.stop();
    }
  });

  it("says when the SMTP server cannot be reached", async () => {
    const server = await startServer({ SMTP_URL: "smtp://127.0.0.1:1" });
    try {
      const t = await createTestTenant(server);
      const r = await t.api.post("/api/v1/settings/email/test", { to: "operator@daily.example" });
      expect(r.body).toEqual({ sent: false, messageId: null, error: "The SMTP server could not be reached." });
    } finally {
      await server.stop();
    }
  });
});
