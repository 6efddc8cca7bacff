// Moderators' digests (contract section 15) against a real SMTP server: a signed-in console operator
// opts in (hourly); at the top of the hour nothing waits, so nothing is sent; once a comment is held
// and another reported, the next hour's digest tells of both, with the oldest held comment, a link to
// the console and an RFC 8058 one-click unsubscribe that turns the digest off. Keys get 403
// operator_only. The worker is driven pass by pass under a manual clock.
import { afterAll, beforeAll, expect, it } from "vitest";
import { manualClock } from "../src/lib/clock.js";
import { createOperator } from "../src/modules/console/engine/operators.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";

let smtp: TestSmtp;
let server: TestServer;
// the worker's passes take what is due in the whole database: a database of its own, so another
// file's held comments and operators are neither counted nor mailed here
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const clock = manualClock(new Date());
const HOUR = 3_600_000;

beforeAll(async () => {
  smtp = await startSmtp();
  own = await isolatedDatabase("email_digest");
  server = await startServer({ ...own.env, SMTP_URL: smtp.url, PUBLIC_URL: "https://comments.example" }, { clock });
});
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await own?.drop();
});

/** GraphQL as the console sends it: the session cookie and its CSRF token. */
async function signIn(tenantId: string, email: string) {
  const password = "correct horse battery staple";
  await createOperator(server.app.runtime.services, { tenantId, email, password, role: "moderator" });
  const r = await fetch(`${server.url}/console/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tenantId, email, password }),
  });
  expect(r.status).toBe(200);
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  const { csrfToken } = (await r.json()) as { csrfToken: string };
  return async (query: string) => {
    const g = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-csrf-token": csrfToken },
      body: JSON.stringify({ query }),
    });
    return (await g.json()) as { data?: Record<string, { frequency: string; nextAt: string | null }>; errors?: unknown[] };
  };
}

it("sends an opted-in operator a digest of what waits for review, only when something does", async () => {
  const t = await createTestTenant(server, "The Daily");
  const gql = await signIn(t.tenantId, "mod@daily.example");
  const iat = () => Math.floor(clock.now().getTime() / 1000);

  const keyed = await t.api.post("/graphql", { query: `{ myModerationDigest { frequency } }` });
  expect(keyed.body.errors[0].extensions.code).toBe("operator_only");
  expect((await gql(`{ myModerationDigest { frequency nextAt } }`)).data?.myModerationDigest).toEqual({ frequency: "off", nextAt: null });
  const bad = await gql(`mutation { updateMyModerationDigest(frequency: "weekly") { frequency } }`);
  expect(bad.errors).toBeDefined();
  const chosen = (await gql(`mutation { updateMyModerationDigest(frequency: "hourly") { frequency nextAt } }`)).data!
    .updateMyModerationDigest!;
  expect(chosen.frequency).toBe("hourly");
  const nextAt = Date.parse(chosen.nextAt!);
  expect(nextAt % HOUR).toBe(0);
  expect(nextAt - clock.now().getTime()).toBeLessThanOrEqual(HOUR);

  // the hour comes with nothing waiting: no digest
  clock.set(new Date(nextAt));
  expect((await server.app.email.runOnce()).messages).toBe(0);

  // a reported comment, and a held one
  await t.api.put("/api/v1/discussions/news", { title: "The news", url: "https://daily.example/news" });
  const ann = await t.reader("ann", { name: "Ann", iat: iat() });
  const posted = await ann.post("/api/v1/discussions/news/comments", { body: "Buy cheap pills" });
  expect(
    (await (await t.reader("bob", { iat: iat() })).post(`/api/v1/comments/${posted.body.id}/reports`, { reason: "spam" })).status,
  ).toBe(201);
  await t.api.patch("/api/v1/settings", { moderation: "pre" });
  const held = await (
    await t.reader("cyd", { name: "Cyd", iat: iat() })
  ).post("/api/v1/discussions/news/comments", { body: "Held for review" });
  expect(held.body.status).toBe("pending");
  clock.advance(HOUR / 2);
  expect((await server.app.email.runOnce()).messages).toBe(0); // not before the next hour
  clock.advance(HOUR / 2);
  expect(await server.app.email.runOnce()).toMatchObject({ messages: 1, sent: 1 });
  const [mail] = smtp.received.filter((m) => m.subject?.startsWith("The Daily:"));
  expect(mail!.subject).toBe("The Daily: 1 comment waits for review and 1 reported comment");
  expect(mail!.text).toContain("Cyd on “The news”: “Held for review”");
  expect(mail!.text).toContain("https://comments.example/console/");
  expect(mail!.html).toContain('href="https://comments.example/console/"');
  const header = (key: string) => mail!.headerLines.find((h) => h.key === key)?.line.replace(/^[^:]+:\s*/, "");
  expect(header("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
  const url = /<(https:[^>]+)>/.exec(header("list-unsubscribe")!)![1]!;

  // one click turns it off
  const page = await fetch(`${server.url}${new URL(url).pathname}`);
  expect(await page.text()).toContain("Stop moderation digests?");
  const click = await fetch(`${server.url}${new URL(url).pathname}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "List-Unsubscribe=One-Click",
  });
  expect(click.status).toBe(200);
  expect((await gql(`{ myModerationDigest { frequency nextAt } }`)).data?.myModerationDigest).toEqual({ frequency: "off", nextAt: null });
  clock.advance(HOUR);
  expect((await server.app.email.runOnce()).messages).toBe(0);
});
