// Akismet (contract section 21, docs/safety.md): each new comment checked by a local HTTP server shaped
// like Akismet's API (POST /1.1/comment-check, form-encoded; "true" / "false", X-akismet-pro-tip), the
// verdict deciding the status with its reason, failing open on a stall or an error, the reader's IP
// and user agent passed through, the key never answered, and a moderator's approval sent as submit-ham.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startReceiver, type Received, type Receiver, type Reply } from "./support/receiver.js";

let server: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => server?.stop());

const API_KEY = "akismet-key-0123456789";
const formOf = (r: Received) => Object.fromEntries(new URLSearchParams(r.raw));

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
    req.path === "/1.1/comment-check" ? a.check(req) : { body: "Thanks for making the web a better place." },
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
});
