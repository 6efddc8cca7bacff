// No secret in any log line (issue: one-time tokens reached the access log). The real server, its own
// logger (createLogger: the one redaction, src/lib/log-redaction.ts) at `trace` so that every line
// anything writes is kept, walked through every route that takes a secret in its path or query —
// an email sign-in link (its page, its form, a spent and a mangled one, a path under it), a chat
// alert's Approve and Reject links, an unsubscribe link, a console sign-in link, a stream ticket,
// a publishable key in a feed's query, a provider callback's code and state — and the ones that take
// one in a header (API key, admin token, identity assertion, reader session), in a body that fails
// to parse, in a GraphQL document that fails. Then the whole output, and the audit log, are searched
// for each secret's value.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/lib/logger.js";
import { signConsoleLink } from "../src/modules/console/engine/operators.js";
import { signUnsubscribeToken } from "../src/modules/email/engine/unsubscribe.js";
import { isolatedDatabase } from "./support/database.js";
import { testEnv, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";
import { startReceiver, type Receiver } from "./support/receiver.js";

const ORIGIN = "https://blog.example";
const output: string[] = [];
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
let smtp: TestSmtp;
let slack: Receiver;
let t: TestTenant;
/** every secret the walk used, by what it is */
const secrets = new Map<string, string>();

beforeAll(async () => {
  own = await isolatedDatabase("secretlogs");
  [smtp, slack] = await Promise.all([startSmtp(), startReceiver()]);
  const sink = new Writable({
    write(chunk, _enc, done) {
      output.push(chunk.toString());
      done();
    },
  });
  const config = loadConfig(testEnv({ ...own.env, LOG_LEVEL: "trace", SMTP_URL: smtp.url, RETENTION_INTERVAL_MS: "0" }));
  const app = await buildApp(config, { migrate: false, log: createLogger(config, sink) });
  const url = await app.start();
  server = { url, app, stop: () => app.stop() };
  t = await createTestTenant(server, "The Daily");
  const set = await t.api.patch("/api/v1/settings", {
    allowedOrigins: [ORIGIN],
    moderation: "pre",
    signIn: { methods: ["email"] },
    alerts: [{ kind: "slack", on: ["pending"], url: `${slack.url}/hooks/slack` }],
  });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  expect((await t.api.put("/api/v1/discussions/d1", { title: "One", url: `${ORIGIN}/one` })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await slack?.close();
  await smtp?.close();
  await own?.drop();
});

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);

async function http(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${server.url}${path}`, { method, redirect: "manual", headers: init.headers, body: init.body });
  return { status: res.status, text: await res.text() };
}
const form = (fields: Record<string, string>) => ({
  headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
  body: new URLSearchParams(fields).toString(),
});

describe("no secret reaches the log", () => {
  it("walks every route that takes a secret in its path, query, headers or body, then searches the whole output", async () => {
    secrets.set("API key", t.apiKey);
    secrets.set("admin token", t.adminToken);
    secrets.set("identity secret", t.identitySecret);

    // an email sign-in link: its page, its form, once spent, mangled, and a path under it
    expect(
      (
        await http("POST", `/auth/v1/${t.tenantId}/email`, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "ada@readers.example", origin: ORIGIN, relay: "r".repeat(32) }),
        })
      ).status,
    ).toBe(202);
    await server.app.email.runOnce();
    const mail = (await smtp.waitFor(1)).at(-1)!;
    const emailToken = /\/email\/([A-Za-z0-9_-]{43})/.exec(mail.text ?? "")![1]!;
    secrets.set("email link", emailToken);
    const linkPath = `/auth/v1/${t.tenantId}/email/${emailToken}`;
    expect((await http("GET", linkPath)).status).toBe(200);
    const finished = await http("POST", linkPath, form({ name: "Ada" }));
    expect(finished.status, finished.text).toBe(200);
    const session = /"token":"(rs_[A-Za-z0-9_-]{43,})"/.exec(finished.text)![1]!;
    secrets.set("reader session", session);
    expect((await http("POST", linkPath, form({ name: "Ada" }))).status).toBe(410);
    expect((await http("GET", `${linkPath}x`)).status).toBe(400);
    expect((await http("GET", `${linkPath}/more`)).status).toBe(404);
    expect((await http("GET", `${linkPath}?token=${emailToken}`)).status).toBe(410);

    // the session, in its header and where it does not belong
    expect((await http("GET", "/api/v1/me", { headers: { "x-api-key": t.apiKey, "x-service-identity": session } })).status).toBe(200);
    expect((await http("GET", `/api/v1/me?identity=${session}`, { headers: { "x-api-key": t.apiKey } })).status).toBeGreaterThanOrEqual(
      400,
    );
    expect((await http("GET", `/api/v1/nowhere/${session}`)).status).toBe(404);

    // an identity assertion and the admin token in their headers, a secret in a body that fails to parse
    const assertion = await t.identity("ann", { name: "Ann" });
    secrets.set("identity assertion", assertion);
    const ann = { "x-api-key": t.apiKey, "x-service-identity": assertion, "content-type": "application/json" };
    const held = await http("POST", "/api/v1/discussions/d1/comments", { headers: ann, body: JSON.stringify({ body: "Hold me" }) });
    expect(held.status, held.text).toBe(201);
    expect((await http("GET", "/api/v1/publishable-keys", { headers: { authorization: `Bearer ${t.adminToken}` } })).status).toBe(200);
    expect((await http("POST", "/api/v1/discussions/d1/comments", { headers: ann, body: `{"body": "${session}` })).status).toBe(400);
    const gql = await http("POST", "/graphql", { headers: ann, body: JSON.stringify({ query: `{ me(token: "${session}") { id } ` }) });
    expect(gql.text).toContain('"errors"');

    // a stream ticket in the stream's query
    const ticket = (await http("POST", "/api/v1/stream/ticket", { headers: ann, body: JSON.stringify({ discussionId: "d1" }) })).text.match(
      /"ticket":"([^"]+)"/,
    )![1]!;
    secrets.set("stream ticket", ticket);
    const stream = new AbortController();
    const res = await fetch(`${server.url}/api/v1/stream/d1?ticket=${ticket}`, { signal: stream.signal });
    expect(res.status).toBe(200);
    stream.abort();
    expect((await http("GET", `/api/v1/stream/d1?ticket=${ticket}x`)).status).toBe(401);

    // a publishable key in a feed's query; a secret key where only a publishable one may be
    const pk = (
      await http("POST", "/api/v1/publishable-keys", {
        headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ label: "blog" }),
      })
    ).text.match(/"key":"(pk_[^"]+)"/)![1]!;
    secrets.set("publishable key", pk);
    expect((await http("GET", `/api/v1/feeds/recent.atom?key=${pk}`)).status).toBe(200);
    expect((await http("GET", `/api/v1/feeds/recent.atom?key=${t.apiKey}`)).status).toBeGreaterThanOrEqual(400);

    // a chat alert's two links
    await server.app.runtime.services.webhooks.worker.runOnce();
    expect(slack.requests).toHaveLength(1);
    const actions = slack.requests[0]!.json.blocks.find((b: { type: string }) => b.type === "actions");
    const [approve, reject] = actions.elements.map((e: { url: string }) => new URL(e.url).pathname) as [string, string];
    secrets.set("alert approve link", approve.split("/").at(-1)!);
    secrets.set("alert reject link", reject.split("/").at(-1)!);
    expect((await http("GET", approve)).status).toBe(200);
    expect((await http("POST", approve, form({}))).status).toBe(200);
    await http("GET", reject);
    await http("POST", reject, form({}));
    expect((await http("GET", `${approve}x`)).status).toBeGreaterThanOrEqual(400);

    // an unsubscribe link
    const unsubscribe = signUnsubscribeToken(server.app.runtime.services, { tenantId: t.tenantId, subjectId: "ann", kind: "replies" });
    secrets.set("unsubscribe link", unsubscribe);
    expect((await http("GET", `/api/v1/unsubscribe/${unsubscribe}`)).status).toBe(200);
    expect((await http("POST", `/api/v1/unsubscribe/${unsubscribe}`, form({ "List-Unsubscribe": "One-Click" }))).status).toBeLessThan(500);
    expect((await http("GET", `/api/v1/unsubscribe/${unsubscribe}x`)).status).toBeGreaterThanOrEqual(400);

    // a console sign-in link (twice: the second is refused)
    const link = signConsoleLink({ secret: TEST_ADMIN_SECRET, tenantId: t.tenantId, now: new Date(), baseUrl: server.url });
    const consoleToken = new URL(link.url).searchParams.get("token")!;
    secrets.set("console link", consoleToken);
    const opened = await fetch(link.url, { redirect: "manual" });
    expect(opened.status).toBe(303);
    const cookie = /eng_console=([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
    secrets.set("console session", cookie);
    expect((await http("GET", "/console/auth/session", { headers: { cookie: `eng_console=${cookie}` } })).status).toBe(200);
    expect((await fetch(link.url, { redirect: "manual" })).status).toBe(303);

    // a provider callback's code and state
    const code = "provider-code-0123456789abcdefghij";
    const state = "provider-state-0123456789abcdefghij";
    secrets.set("callback code", code);
    secrets.set("callback state", state);
    expect((await http("GET", `/auth/v1/${t.tenantId}/callback/gh?code=${code}&state=${state}`)).status).toBeGreaterThanOrEqual(400);

    // the whole output, every line anything wrote; and the audit log
    // the access line of the last request is written once its answer has gone
    await expect.poll(() => output.join("").includes('"route":"/auth/v1/:tenantId/callback/:providerId"')).toBe(true);
    const all = output.join("");
    expect(all).toContain('"msg":"request"');
    expect(all).toContain(`"route":"/auth/v1/:tenantId/email/:token"`);
    expect(all).toContain(`/auth/v1/${t.tenantId}/email/[redacted]`);
    const audit = JSON.stringify(await sql("SELECT * FROM audit_log WHERE tenant_id = $1", [t.tenantId]));
    expect(audit).toContain("alert_link");
    const found: string[] = [];
    for (const [what, value] of secrets) {
      // a prefixed value is found by what follows its prefix too
      const probe = value.replace(/^(rs|ek|pk|is|st|whsec)_/, "");
      if (all.includes(probe)) found.push(`${what} in the log`);
      if (audit.includes(probe)) found.push(`${what} in the audit log`);
    }
    expect(found).toEqual([]);
  }, 60_000);
});
