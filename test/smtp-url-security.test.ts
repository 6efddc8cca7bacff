// A tenant's SMTP URL configures nothing but the outbound host it names (contract section 22,
// src/lib/outbound-url.ts, src/modules/email/transport.ts): every option name the mail library knows,
// put in the URL's query, is refused with 422 naming the query; a URL stored before that rule (sealed
// in the tenant's settings) is parsed again at each send and never runs a command, opens a proxy or
// fakes a send; and the tenant's host passes the SSRF guard at each connection, not only when set.
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseOutboundUrl } from "../src/lib/outbound-url.js";
import { smtpTransportOptions } from "../src/modules/email/transport.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";

// Every option name of nodemailer's transports (SMTP, pool, sendmail, stream, JSON, SES), its mail
// options and its shared ones: what its URL parser turns a query parameter into.
const NODEMAILER_OPTIONS = [
  "sendmail",
  "path",
  "args",
  "newline",
  "streamTransport",
  "jsonTransport",
  "buffer",
  "SES",
  "ses",
  "sesClient",
  "proxy",
  "host",
  "port",
  "secure",
  "ignoreTLS",
  "requireTLS",
  "opportunisticTLS",
  "secureConnection",
  "tls.rejectUnauthorized",
  "tls.servername",
  "tls.ca",
  "name",
  "localAddress",
  "authMethod",
  "auth",
  "user",
  "pass",
  "customAuth",
  "logger",
  "debug",
  "transactionLog",
  "pool",
  "maxConnections",
  "maxMessages",
  "rateDelta",
  "rateLimit",
  "direct",
  "service",
  "lmtp",
  "dkim",
  "getSocket",
  "connectionTimeout",
  "greetingTimeout",
  "socketTimeout",
  "dnsTimeout",
  "disableFileAccess",
  "disableUrlAccess",
  "attachDataUrls",
  "component",
  "url",
  "socket",
  "connection",
  "from",
  "to",
  "headers",
  "envelope",
  "encoding",
  "textEncoding",
  "raw",
  "xMailer",
  "priority",
  "list",
  "dsn",
  "winbreak",
  "skipEncoding",
];

const tmpMark = () => join(tmpdir(), `engagement-h1-${process.pid}-${Math.random().toString(36).slice(2)}`);

describe("parseOutboundUrl (the one parse of a tenant's outbound URL)", () => {
  it("refuses every nodemailer option as an SMTP URL's query parameter, naming the query", () => {
    for (const name of NODEMAILER_OPTIONS) {
      for (const raw of [`smtp://mail.example.com/?${name}=true`, `smtps://u:p@mail.example.com:465?${name}=x`]) {
        const r = parseOutboundUrl(raw, "smtp");
        expect(r.ok, raw).toBe(false);
        if (!r.ok) expect(r.problem.part, raw).toBe("query");
      }
    }
  });

  it("keeps a scheme, credentials, host and port of an SMTP URL, and refuses a path, a fragment or another scheme", () => {
    const ok = parseOutboundUrl("smtps://mailer:p%40ss@mail.example.com:2465", "smtp");
    expect(ok).toMatchObject({
      ok: true,
      target: { scheme: "smtps", host: "mail.example.com", port: 2465, username: "mailer", password: "p@ss" },
    });
    expect(parseOutboundUrl("smtp://mail.example.com", "smtp")).toMatchObject({ ok: true, target: { port: 587, username: null } });
    expect(parseOutboundUrl("smtp://mail.example.com/", "smtp")).toMatchObject({ ok: true, target: { href: "smtp://mail.example.com" } });
    const part = (raw: string, kind: "smtp" | "http" | "issuer" = "smtp") => {
      const r = parseOutboundUrl(raw, kind);
      return r.ok ? null : r.problem.part;
    };
    expect(part("smtp://mail.example.com/bin/sh")).toBe("path");
    expect(part("smtp://mail.example.com#x")).toBe("fragment");
    expect(part("smtp://mail.example.com?")).toBe("query");
    expect(part("sendmail://mail.example.com")).toBe("scheme");
    expect(part("direct://mail.example.com")).toBe("scheme");
    expect(part("smtp:mail.example.com")).toBe("host");
    expect(part("smtp://mail.example.com:99999")).toBe("url");
    expect(part("smtp://mail.example.com\n?sendmail=true")).toBe("url");
    // http: the request's target may have a query; credentials and fragments configure or mean nothing
    expect(part("https://hooks.example.com/in?token=1", "http")).toBeNull();
    expect(part("https://user:pw@hooks.example.com/", "http")).toBe("credentials");
    expect(part("https://hooks.example.com/#x", "http")).toBe("fragment");
    // an OpenID issuer: scheme, host, port and path only
    expect(part("https://idp.example.com/tenant-1", "issuer")).toBeNull();
    expect(part("https://idp.example.com/?x=1", "issuer")).toBe("query");
  });

  it("builds the transport from the URL's fields alone, and refuses a stored URL that carries options", async () => {
    const options = await smtpTransportOptions({ url: "smtps://mailer:pw@mail.example.com:2465", guard: null });
    expect(options).toEqual({
      host: "mail.example.com",
      port: 2465,
      secure: true,
      tls: { servername: "mail.example.com" },
      auth: { user: "mailer", pass: "pw" },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    await expect(smtpTransportOptions({ url: "smtp://mail.example.com/?sendmail=true&path=/bin/sh", guard: null })).rejects.toThrow(
      /not accepted/,
    );
  });
});

describe("a tenant's SMTP URL on the server", () => {
  let server: TestServer;
  let strict: TestServer;
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startServer();
    // no ALLOW_HTTP_WEBHOOKS: loopback hosts are refused, as in production
    strict = await startServer({ ALLOW_HTTP_WEBHOOKS: "0" });
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), strict?.stop()]);
    await smtp?.close();
  });

  /** Seals `url` into the tenant's settings as a PATCH before this rule would have. */
  async function storeRaw(s: TestServer, t: TestTenant, url: string): Promise<void> {
    const { secretBox, sql } = s.app.runtime.services;
    await sql.query(
      `UPDATE tenants SET settings = jsonb_set(settings, '{email}', COALESCE(settings->'email', '{}'::jsonb) || $2::jsonb) WHERE id = $1`,
      [t.tenantId, JSON.stringify({ smtpUrlEnc: secretBox.seal(url) })],
    );
    // an unrelated PATCH: the instance's cached settings are read again
    expect((await t.api.patch("/api/v1/settings", { editWindowSeconds: 901 })).status).toBe(200);
  }

  it("answers 422 on email.smtpUrl, naming the query, for every nodemailer option in it", async () => {
    const t = await createTestTenant(server);
    for (const name of NODEMAILER_OPTIONS) {
      const r = await t.api.patch("/api/v1/settings", { email: { smtpUrl: `smtp://mail.example.com/?${name}=true` } });
      expect(r.status, name).toBe(422);
      expect(r.body.errors, name).toEqual([{ path: "email.smtpUrl", message: expect.stringMatching(/query/) }]);
    }
    const path = await t.api.patch("/api/v1/settings", { email: { smtpUrl: "smtp://mail.example.com/usr/sbin/sendmail" } });
    expect(path.body.errors).toEqual([{ path: "email.smtpUrl", message: expect.stringMatching(/path/) }]);
    expect((await t.api.get("/api/v1/settings")).body.email.smtpUrl).toBeNull();
  });

  it("never runs a command, proxies or fakes a send from a URL stored with options (H1, H2)", async () => {
    const t = await createTestTenant(server);
    const mark = tmpMark();
    try {
      const port = smtp.url.split(":").pop();
      const hostile = [
        `smtp://127.0.0.1:${port}/?sendmail=true&path=/bin/sh&args=-c&args=${encodeURIComponent(`touch ${mark}`)}`,
        `smtp://127.0.0.1:${port}/?proxy=${encodeURIComponent(`socks5://127.0.0.1:${port}`)}`,
        `smtp://127.0.0.1:${port}/?streamTransport=true`,
        `smtp://127.0.0.1:${port}/?jsonTransport=true`,
      ];
      for (const url of hostile) {
        await storeRaw(server, t, url);
        const r = await t.api.post("/api/v1/settings/email/test", { to: "owner@own.example" });
        expect(r.status, url).toBe(200);
        expect(r.body, url).toMatchObject({ sent: false, error: expect.stringMatching(/not accepted/) });
      }
      expect(existsSync(mark)).toBe(false);
      expect(smtp.received).toHaveLength(0);
      // the same server named by host and port alone carries the mail
      await storeRaw(server, t, `smtp://127.0.0.1:${port}`);
      expect((await t.api.post("/api/v1/settings/email/test", { to: "owner@own.example" })).body).toMatchObject({ sent: true });
      expect(smtp.received).toHaveLength(1);
    } finally {
      rmSync(mark, { force: true });
    }
  });

  it("checks a tenant's SMTP host at each send: a stored internal host is not connected to", async () => {
    const t = await createTestTenant(strict);
    const before = smtp.received.length;
    const set = await t.api.patch("/api/v1/settings", { email: { smtpUrl: smtp.url } });
    expect(set.status).toBe(422); // refused when set...
    await storeRaw(strict, t, smtp.url); // ...and when it was stored anyway (or its name now resolves inside)
    const r = await t.api.post("/api/v1/settings/email/test", { to: "owner@own.example" });
    expect(r.body).toMatchObject({ sent: false, error: expect.stringMatching(/loopback/) });
    expect(smtp.received.length).toBe(before);
  });
});
