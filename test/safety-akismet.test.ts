// Akismet (contract section 21, docs/safety.md): each new comment checked by a local HTTP server shaped
// like Akismet's API (POST /1.1/comment-check, form-encoded; "true" / "false", X-akismet-pro-tip), the
// verdict deciding the status with its reason, failing open on a stall or an error, the reader's IP
// and user agent passed through, the key never answered, and a moderator's approval sent as submit-ham
// (a job of the webhook queue, queued with the approval and retried like a webhook).
// Verify key (POST /api/v1/settings/safety/akismet/verify, verifyAkismetKey): the same server's
// /1.1/verify-key answers "valid" for its one key and blog, "invalid" otherwise; a server that does not
// answer is a clear valid: false with the reason, within the 5 s budget.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "./support/server.js";
import { startWebhookServer } from "./support/receiver-app.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startReceiver, type Received, type Receiver, type Reply } from "./support/receiver.js";

let server: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // the webhook worker sends the moderators' submit-ham / submit-spam
  server = await startWebhookServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => server?.stop());

const API_KEY = "akismet-key-0123456789";
const formOf = (r: Received) => Object.fromEntries(new URLSearchParams(r.raw));

/** Akismet's verify-key: "valid" for API_KEY at https://news.example, "invalid" with its debug help otherwise. */
const verifyKeyReply = (r: Received): Reply => {
  const form = formOf(r);
  return form.key === API_KEY && form.blog === "https://news.example"
    ? { body: "valid" }
    : { body: "invalid", headers: { "X-akismet-debug-help": "We were unable to find this key." } };
};

interface Akismet {
  t: TestTenant;
  receiver: Receiver;
  /** what comment-check answers next */
  check: (r: Received) => Reply;
  moderator: TestTenant["api"];
  ann: TestTenant["api"];
}

async function tenantWithAkismet(): Promise<Akismet> {
  const t = await createTestTenant(server);
  const a = { t, check: () => ({ body: "false" }) } as unknown as Akismet;
  a.receiver = await startReceiver((req) =>
    req.path === "/1.1/comment-check"
      ? a.check(req)
      : req.path === "/1.1/verify-key"
        ? verifyKeyReply(req)
        : { body: "Thanks for making the web a better place." },
  );
  receivers.push(a.receiver);
  const baseUrl = new URL(a.receiver.url).origin;
  const set = await t.api.patch("/api/v1/settings", { safety: { akismet: { apiKey: API_KEY, blog: "https://news.example", baseUrl } } });
  expect(set.status).toBe(200);
  expect(set.body.safety.akismet).toEqual({ blog: "https://news.example", baseUrl });
  a.moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
  a.ann = t.as({ key: (await keyWith(t, [])).key, identity: await t.identity("ann", { name: "Ann" }) });
  await t.api.put("/api/v1/discussions/ak-1", { title: "One", url: "https://news.example/one" });
  return a;
}

const post = (a: Akismet, body: string, headers: Record<string, string> = {}) =>
  a.ann.post("/api/v1/discussions/ak-1/comments", { body }, { headers });
const checks = (a: Akismet) => a.receiver.requests.filter((r) => r.path === "/1.1/comment-check");
const reasonOf = async (a: Akismet, id: string) => (await a.moderator.get(`/api/v1/comments/${id}`)).body.moderationReason;

describe("settings", () => {
  it("the apiKey is write-only: sealed, never answered nor audited; Akismet needs one; null turns it off", async () => {
    const t = await createTestTenant(server);
    const missing = await t.api.patch("/api/v1/settings", { safety: { akismet: { blog: "https://news.example" } } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: any) => e.path)).toEqual(["safety.akismet.apiKey"]);
    const set = await t.api.patch("/api/v1/settings", { safety: { akismet: { apiKey: API_KEY, blog: "https://news.example" } } });
    expect(set.status).toBe(200);
    expect(set.body.safety.akismet).toEqual({ blog: "https://news.example", baseUrl: "https://rest.akismet.com" });
    const read = await t.api.get("/api/v1/settings");
    expect(JSON.stringify(read.body)).not.toContain(API_KEY);
    expect(JSON.stringify(read.body)).not.toContain("apiKeyEnc");
    // a later change of the blog keeps the key
    const blog = await t.api.patch("/api/v1/settings", { safety: { akismet: { blog: "https://other.example" } } });
    expect(blog.status).toBe(200);
    const audit = JSON.stringify((await t.admin.get("/api/v1/audit?action=settings.update")).body);
    expect(audit).toContain("safety.akismet");
    expect(audit).not.toContain(API_KEY);
    expect(audit).not.toContain("apiKeyEnc");
    // a base URL with a path, and one the SSRF guard refuses
    for (const baseUrl of ["https://rest.akismet.com/1.1", "https://10.0.0.1"]) {
      const r = await t.api.patch("/api/v1/settings", { safety: { akismet: { baseUrl } } });
      expect(r.status, baseUrl).toBe(422);
      expect(r.body.errors.map((e: any) => e.path)).toEqual(["safety.akismet.baseUrl"]);
    }
    expect((await t.api.patch("/api/v1/settings", { safety: { akismet: null } })).body.safety.akismet).toBeNull();
  });
});

describe("each new comment is checked", () => {
  it("sends the comment form-encoded with the reader's IP and user agent from the headers; ham is published", async () => {
    const a = await tenantWithAkismet();
    const r = await post(a, "A fine point.", { "x-service-reader-ip": "203.0.113.7", "x-service-reader-agent": "Mozilla/5.0 Test" });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe("approved");
    expect(await reasonOf(a, r.body.id)).toBeUndefined();
    const [sent] = checks(a);
    expect(sent!.method).toBe("POST");
    expect(sent!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(formOf(sent!)).toEqual({
      api_key: API_KEY,
      blog: "https://news.example",
      user_ip: "203.0.113.7",
      user_agent: "Mozilla/5.0 Test",
      comment_type: "comment",
      comment_author: "Ann",
      comment_content: "A fine point.",
      permalink: "https://news.example/one",
    });
  });

  it('spam ("true") → pending with reason {"source":"akismet"}; with X-akismet-pro-tip: discard → rejected', async () => {
    const a = await tenantWithAkismet();
    a.check = () => ({ body: "true" });
    const held = await post(a, "Cheap pills");
    expect(held.status).toBe(201);
    expect(held.body.status).toBe("pending");
    expect(await reasonOf(a, held.body.id)).toEqual({ source: "akismet" });
    a.check = () => ({ body: "true", headers: { "X-akismet-pro-tip": "discard" } });
    const gone = await post(a, "Cheap pills again");
    expect(gone.status).toBe(201);
    expect(gone.body.status).toBe("rejected");
    expect(await reasonOf(a, gone.body.id)).toEqual({ source: "akismet" });
    // neither is shown to readers
    const list = await a.ann.get("/api/v1/discussions/ak-1/comments");
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: any) => c.id)).toEqual([]);
  });

  it("a stalled Akismet delays the post by at most ~2 s and it is published; a 500 publishes it", async () => {
    const a = await tenantWithAkismet();
    a.check = () => ({ body: "true", delayMs: 5_000 });
    const started = Date.now();
    const slow = await post(a, "Slow check");
    const took = Date.now() - started;
    expect(slow.status).toBe(201);
    expect(slow.body.status).toBe("approved");
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(3_500);
    a.check = () => ({ status: 500, body: "oops" });
    const failed = await post(a, "Failing check");
    expect(failed.status).toBe(201);
    expect(failed.body.status).toBe("approved");
    expect(checks(a)).toHaveLength(2);
  });

  it("behind a publishable key: the browser's own user agent and address", async () => {
    const a = await tenantWithAkismet();
    const pk = await a.t.admin.post("/api/v1/publishable-keys", { label: "site" });
    expect(pk.status).toBe(201);
    const browser = a.t.as({ key: pk.body.key, identity: await a.t.identity("bob"), headers: { "user-agent": "BrowserAgent/1" } });
    // a browser cannot name another reader's address
    const r = await browser.post(
      "/api/v1/discussions/ak-1/comments",
      { body: "From the page" },
      { headers: { "x-service-reader-ip": "198.51.100.1" } },
    );
    expect(r.status).toBe(201);
    const form = formOf(checks(a)[0]!);
    expect(form.user_agent).toBe("BrowserAgent/1");
    expect(form.user_ip).toBe("127.0.0.1");
  });

  it("a banned reader's post and a post to a locked discussion are refused as before, and Akismet is not asked", async () => {
    const a = await tenantWithAkismet();
    expect((await post(a, "before the ban")).status).toBe(201);
    expect(checks(a)).toHaveLength(1);
    expect((await a.moderator.post("/api/v1/readers/ann/ban", { reason: "spam" })).status).toBe(200);
    expect((await post(a, "after the ban")).body.code).toBe("reader_banned");
    expect((await a.moderator.del("/api/v1/readers/ann/ban")).status).toBe(204);
    expect((await a.t.api.post("/api/v1/discussions/ak-1/lock")).status).toBe(200);
    expect((await post(a, "locked")).status).toBe(409);
    expect(checks(a)).toHaveLength(1);
  });
});

describe("moderators teach Akismet", () => {
  it("approving an Akismet-held comment sends submit-ham; rejecting a published one sends submit-spam", async () => {
    const a = await tenantWithAkismet();
    a.check = () => ({ body: "true" });
    const held = await post(a, "Held by Akismet");
    expect(held.body.status).toBe("pending");
    const approved = await a.moderator.post(`/api/v1/comments/${held.body.id}/approve`);
    expect(approved.status).toBe(200);
    await a.receiver.waitFor((reqs) => reqs.some((r) => r.path === "/1.1/submit-ham"), 5_000);
    const ham = a.receiver.requests.find((r) => r.path === "/1.1/submit-ham")!;
    expect(formOf(ham)).toMatchObject({
      api_key: API_KEY,
      blog: "https://news.example",
      comment_content: "Held by Akismet",
      comment_author: "Ann",
    });
    // the reader's address and agent were not kept for it
    expect(formOf(ham).user_ip).toBeUndefined();

    a.check = () => ({ body: "false" });
    const ok = await post(a, "Passed by Akismet");
    expect(ok.body.status).toBe("approved");
    expect((await a.moderator.post(`/api/v1/comments/${ok.body.id}/reject`)).status).toBe(200);
    await a.receiver.waitFor((reqs) => reqs.some((r) => r.path === "/1.1/submit-spam"), 5_000);
    expect(formOf(a.receiver.requests.find((r) => r.path === "/1.1/submit-spam")!).comment_content).toBe("Passed by Akismet");
    // an approval of a comment Akismet did not hold sends nothing more
    expect(a.receiver.requests.filter((r) => r.path === "/1.1/submit-ham")).toHaveLength(1);
  });

  it("is a job of the webhook queue, written with the moderator's change and retried until Akismet takes it", async () => {
    const a = await tenantWithAkismet();
    expect((await a.t.api.patch("/api/v1/settings", { delivery: { backoffBaseMs: 1 } })).status).toBe(200);
    let submits = 0;
    a.receiver.respond = (req) =>
      req.path === "/1.1/submit-spam" ? (++submits === 1 ? { status: 503, body: "busy" } : { body: "Thanks" }) : { body: "false" };
    const ok = await post(a, "Spam that passed");
    expect(ok.body.status).toBe("approved");
    expect((await a.moderator.post(`/api/v1/comments/${ok.body.id}/reject`)).status).toBe(200);
    // the job is there as soon as the rejection answered (same transaction)
    const jobs = await server.app.runtime.services.prisma.webhookDelivery.findMany({ where: { tenantId: a.t.tenantId, kind: "akismet" } });
    expect(jobs.map((j) => j.message)).toEqual([{ call: "submit-spam", commentId: ok.body.id }]);
    await a.receiver.waitFor((reqs) => reqs.filter((r) => r.path === "/1.1/submit-spam").length >= 2, 10_000);
    await expect
      .poll(
        async () => (await server.app.runtime.services.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: jobs[0]!.id } })).status,
        {
          timeout: 5_000,
        },
      )
      .toBe("succeeded");
    expect(formOf(a.receiver.requests.filter((r) => r.path === "/1.1/submit-spam")[1]!).comment_content).toBe("Spam that passed");

    // Akismet turned off before the job is sent: nothing goes out
    a.receiver.respond = (req) => (req.path === "/1.1/comment-check" ? { body: "true" } : { body: "Thanks" });
    const held = await post(a, "Held, then Akismet is turned off");
    expect(held.body.status).toBe("pending");
    expect((await a.t.api.patch("/api/v1/settings", { safety: { akismet: null } })).status).toBe(200);
    expect((await a.moderator.post(`/api/v1/comments/${held.body.id}/approve`)).status).toBe(200);
    // no tenant with Akismet off gets a job at all
    const after = await server.app.runtime.services.prisma.webhookDelivery.count({ where: { tenantId: a.t.tenantId, kind: "akismet" } });
    expect(after).toBe(1);
    expect(a.receiver.requests.some((r) => r.path === "/1.1/submit-ham")).toBe(false);
  });
});

describe("Verify key", () => {
  const verify = (api: TestTenant["api"], body?: Record<string, unknown>) => api.post("/api/v1/settings/safety/akismet/verify", body);
  const verifies = (a: Akismet) => a.receiver.requests.filter((r) => r.path === "/1.1/verify-key");

  it("verifies the saved key and blog: valid; the key is sent form-encoded and never answered", async () => {
    const a = await tenantWithAkismet();
    const r = await verify(a.t.api);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ valid: true, error: null, debugHelp: null, latencyMs: expect.any(Number) });
    expect(JSON.stringify(r.body)).not.toContain(API_KEY);
    const [sent] = verifies(a);
    expect(sent!.method).toBe("POST");
    expect(sent!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(formOf(sent!)).toEqual({ key: API_KEY, api_key: API_KEY, blog: "https://news.example" });
    // nothing about comments goes with it, and no comment-check was made
    expect(checks(a)).toHaveLength(0);
  });

  it("an invalid key (or a blog the key is not for): valid false with Akismet's help; a key tried before saving is not stored", async () => {
    const a = await tenantWithAkismet();
    const wrong = await verify(a.t.api, { apiKey: "not-the-key" });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ valid: false, error: null, debugHelp: "We were unable to find this key.", latencyMs: expect.any(Number) });
    expect(formOf(verifies(a)[0]!).key).toBe("not-the-key");
    // the saved key is unchanged: it still verifies, and it is what a comment-check sends
    expect((await verify(a.t.api)).body.valid).toBe(true);
    expect((await post(a, "After a verify")).status).toBe(201);
    expect(formOf(checks(a)[0]!).api_key).toBe(API_KEY);
    // the saved key for another blog
    const blog = await verify(a.t.api, { blog: "https://other.example" });
    expect(blog.body).toMatchObject({ valid: false, error: null });
    expect(formOf(verifies(a).at(-1)!)).toMatchObject({ key: API_KEY, blog: "https://other.example" });
    // over GraphQL, the same
    const g = await a.t.api.post("/graphql", {
      query: "mutation($input: AkismetKeyInput) { verifyAkismetKey(input: $input) { valid error debugHelp } }",
      variables: { input: { apiKey: "still-wrong" } },
    });
    expect(g.body).toEqual({ data: { verifyAkismetKey: { valid: false, error: null, debugHelp: "We were unable to find this key." } } });
  });

  it("a key not yet saved: verified with its blog and base URL, nothing stored", async () => {
    const a = await tenantWithAkismet();
    const fresh = await createTestTenant(server);
    const baseUrl = new URL(a.receiver.url).origin;
    const r = await verify(fresh.api, { apiKey: API_KEY, blog: "https://news.example", baseUrl });
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(true);
    expect((await fresh.api.get("/api/v1/settings")).body.safety.akismet).toBeNull();
    // a key needs a blog
    const noBlog = await verify(fresh.api, { apiKey: API_KEY, baseUrl });
    expect(noBlog.status).toBe(422);
    expect(noBlog.body.errors.map((e: any) => e.path)).toEqual(["blog"]);
  });

  it("an unreachable or stalled Akismet is a clear answer: valid false with the reason, within the 5 s budget", async () => {
    const a = await tenantWithAkismet();
    const closed = await startReceiver();
    const closedUrl = new URL(closed.url).origin;
    await closed.close();
    const down = await verify(a.t.api, { apiKey: API_KEY, baseUrl: closedUrl });
    expect(down.status).toBe(200);
    expect(down.body).toEqual({
      valid: false,
      error: expect.stringMatching(/^network: .*ECONNREFUSED/),
      debugHelp: null,
      latencyMs: expect.any(Number),
    });

    const stalled = await startReceiver(() => ({ body: "valid", delayMs: 8_000 }));
    receivers.push(stalled);
    const started = Date.now();
    const slow = await verify(a.t.api, { apiKey: API_KEY, baseUrl: new URL(stalled.url).origin });
    const took = Date.now() - started;
    expect(slow.status).toBe(200);
    expect(slow.body).toMatchObject({ valid: false, error: expect.stringMatching(/^timeout: /) });
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(7_000);

    // an HTTP error and an answer that is neither valid nor invalid
    const broken = await startReceiver((req) => (req.path === "/1.1/verify-key" ? { status: 503, body: "down" } : { body: "??" }));
    receivers.push(broken);
    const http = await verify(a.t.api, { apiKey: API_KEY, baseUrl: new URL(broken.url).origin });
    expect(http.body).toMatchObject({ valid: false, error: "Akismet answered HTTP 503" });
    broken.respond = () => ({ body: "maybe" });
    expect((await verify(a.t.api, { apiKey: API_KEY, baseUrl: new URL(broken.url).origin })).body).toMatchObject({
      valid: false,
      error: 'Akismet answered "maybe"',
    });
  }, 20_000);

  it("manage_settings only; the saved key goes only to the saved base URL; an address the guard refuses is 422; nothing saved is 409", async () => {
    const a = await tenantWithAkismet();
    expect((await verify(a.moderator)).status).toBe(403);
    expect((await verify(a.moderator)).body.code).toBe("missing_capability");
    expect((await verify(a.ann)).status).toBe(403);
    expect(verifies(a)).toHaveLength(0);

    const elsewhere = await verify(a.t.api, { baseUrl: "https://akismet.example" });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.errors.map((e: any) => e.path)).toEqual(["apiKey"]);
    const blocked = await verify(a.t.api, { apiKey: "another", baseUrl: "https://10.0.0.1" });
    expect(blocked.status).toBe(422);
    expect(blocked.body.errors.map((e: any) => e.path)).toEqual(["baseUrl"]);
    const unknown = await verify(a.t.api, { key: API_KEY });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ path: "key", message: "is not a known field" }]);
    expect(verifies(a)).toHaveLength(0);

    const fresh = await createTestTenant(server);
    const none = await verify(fresh.api);
    expect(none.status).toBe(409);
    expect(none.body.code).toBe("akismet_not_configured");
  });
});
