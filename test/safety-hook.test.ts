// The moderation hook (contract section 12, docs/safety.md): the hook's secret shown once, each new or
// edited comment sent signed (verified here with the `standardwebhooks` package), the answer deciding
// the status with its reason, the fallback on a stall or a failure, the breaker, the metrics and the
// console's Send test. Receivers are real HTTP servers on 127.0.0.1 (ALLOW_HTTP_WEBHOOKS=1, testEnv).
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startReceiver, type Received, type Receiver, type Reply } from "./support/receiver.js";
import { TestSafetyHookDocument, TestSetSafetyHookDocument } from "./generated/operations.js";

const METRICS_TOKEN = "metrics-token-0123456789";
let server: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startServer({ METRICS_TOKEN });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => server?.stop());

const headersOf = (r: Received) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

interface Hook {
  t: TestTenant;
  receiver: Receiver;
  /** what the receiver answers next (verified requests only; a bad signature is a 401) */
  answer: (r: Received) => Reply;
  /** requests whose signature verified with the secret the PATCH showed */
  verified: Received[];
  secret: string;
  moderator: TestTenant["api"];
  readerAs: (sub: string) => Promise<TestTenant["api"]>;
}

/** A tenant whose hook is a local receiver that verifies each request's signature, then answers `answer`. */
async function tenantWithHook(hook: Record<string, unknown> = {}, other: Record<string, unknown> = {}): Promise<Hook> {
  const t = await createTestTenant(server);
  const h = { t, verified: [] as Received[], answer: (() => ({ body: { decision: "approve" } })) as Hook["answer"] } as Hook;
  h.receiver = await startReceiver((req) => {
    try {
      new Webhook(h.secret).verify(req.raw, headersOf(req));
    } catch {
      return { status: 401, body: { error: "bad signature" } };
    }
    h.verified.push(req);
    return h.answer(req);
  });
  receivers.push(h.receiver);
  const set = await t.api.patch("/api/v1/settings", { ...other, safety: { hook: { url: h.receiver.url, ...hook } } });
  expect(set.status).toBe(200);
  h.secret = set.body.safety.hook.secret;
  const plain = (await keyWith(t, [])).key;
  h.moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
  h.readerAs = async (sub) => t.as({ key: plain, identity: await t.identity(sub) });
  return h;
}

const reasonOf = async (h: Hook, id: string) => (await h.moderator.get(`/api/v1/comments/${id}`)).body.moderationReason;

describe("the hook's secret", () => {
  it("is made when the hook is set or its url changes, shown once by that PATCH, and never read back", async () => {
    const t = await createTestTenant(server);
    const first = await t.api.patch("/api/v1/settings", { safety: { hook: { url: "http://127.0.0.1:9/check" } } });
    expect(first.status).toBe(200);
    const secret = first.body.safety.hook.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(first.body.safety.hook).toEqual({ url: "http://127.0.0.1:9/check", timeoutMs: 1500, onTimeout: "hold", secret });
    // later reads and a PATCH that keeps the url omit it
    expect((await t.api.get("/api/v1/settings")).body.safety.hook).toEqual({
      url: "http://127.0.0.1:9/check",
      timeoutMs: 1500,
      onTimeout: "hold",
    });
    const same = await t.api.patch("/api/v1/settings", { safety: { hook: { timeoutMs: 800, url: "http://127.0.0.1:9/check" } } });
    expect(same.body.safety.hook).toEqual({ url: "http://127.0.0.1:9/check", timeoutMs: 800, onTimeout: "hold" });
    // a new url: a new secret (GraphQL too)
    const moved = await t.api.gql(TestSetSafetyHookDocument, { input: { safety: { hook: { url: "http://127.0.0.1:10/check" } } } });
    const next = moved.data!.updateSettings.safety.hook!.secret;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    const read = await t.api.gql(TestSetSafetyHookDocument, { input: { moderation: "post" } });
    expect(read.data!.updateSettings.safety.hook).toEqual({
      url: "http://127.0.0.1:10/check",
      timeoutMs: 800,
      onTimeout: "hold",
      secret: null,
    });
    // removed with the hook; a hook set again gets another
    expect((await t.api.patch("/api/v1/settings", { safety: { hook: null } })).body.safety.hook).toBeNull();
    const again = await t.api.patch("/api/v1/settings", { safety: { hook: { url: "http://127.0.0.1:10/check" } } });
    expect(again.body.safety.hook.secret).toMatch(/^whsec_/);
    expect([secret, next]).not.toContain(again.body.safety.hook.secret);
    // a caller cannot set it, and neither the secret nor its sealed form reaches the audit log
    const forged = await t.api.patch("/api/v1/settings", { safety: { hook: { secretEnc: "x" } } });
    expect(forged.status).toBe(422);
    const audit = JSON.stringify((await t.admin.get("/api/v1/audit?action=settings.update")).body);
    expect(audit).toContain("safety.hook");
    for (const s of [secret, next, again.body.safety.hook.secret]) expect(audit).not.toContain(s.slice(6));
    expect(audit).not.toContain("secretEnc");
  });

  it("the url passes the webhooks' SSRF guard", async () => {
    const t = await createTestTenant(server);
    for (const url of ["https://10.0.0.1/check", "https://169.254.169.254/latest", "http://example.com/check"]) {
      const r = await t.api.patch("/api/v1/settings", { safety: { hook: { url } } });
      expect(r.status, url).toBe(422);
      expect(r.body.errors.map((e: any) => e.path)).toEqual(["safety.hook.url"]);
    }
    expect((await t.api.get("/api/v1/settings")).body.safety.hook).toBeNull();
  });
});

describe("each new comment is checked", () => {
  it("sends the comment, its reader and discussion, signed the Standard Webhooks way; approve publishes it", async () => {
    const h = await tenantWithHook();
    await h.t.api.put("/api/v1/discussions/hook-1", { title: "Hook one", url: "https://news.example/hook-1" });
    const ann = await h.readerAs("ann");
    const a = await ann.post("/api/v1/discussions/hook-1/comments", { body: "first" });
    const b = await ann.post("/api/v1/discussions/hook-1/comments", { body: "**second** <b>x</b>", parentId: a.body.id });
    expect([a.body.status, b.body.status]).toEqual(["approved", "approved"]);
    expect(h.receiver.requests).toHaveLength(2); // both verified
    expect(h.verified).toHaveLength(2);
    const sent = h.verified[1]!;
    expect(sent.headers["webhook-id"]).toMatch(/^chk_/);
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.json).toEqual({
      type: "comment.check",
      action: "create",
      // the body as written and as rendered (what a page would show)
      comment: {
        id: b.body.id,
        discussionId: "hook-1",
        parentId: a.body.id,
        body: "**second** <b>x</b>",
        bodyHtml: "<p><strong>second</strong> &lt;b&gt;x&lt;/b&gt;</p>",
        createdAt: expect.any(String),
      },
      reader: { id: "ann", name: "Reader ann", avatarUrl: null, approvedCount: 1, rejectedCount: 0 },
      discussion: { id: "hook-1", title: "Hook one", url: "https://news.example/hook-1" },
    });
    expect(await reasonOf(h, b.body.id)).toBeUndefined(); // no objection: nothing to explain
    // a discussion not created yet has no title or url
    await ann.post("/api/v1/discussions/hook-new/comments", { body: "third" });
    expect(h.verified.at(-1)!.json.discussion).toEqual({ id: "hook-new", title: null, url: null });
  });

  it("hold → pending and reject → rejected, with the hook's reason for moderators only", async () => {
    const h = await tenantWithHook();
    const ann = await h.readerAs("ann");
    h.answer = () => ({ body: { decision: "hold", reason: "looks like spam (0.7)" } });
    const held = await ann.post("/api/v1/discussions/hook-2/comments", { body: "buy my thing" });
    expect(held.body.status).toBe("pending");
    expect(held.body).not.toHaveProperty("moderationReason");
    expect(await reasonOf(h, held.body.id)).toEqual({ source: "hook", decision: "hold", reason: "looks like spam (0.7)" });
    h.answer = () => ({ body: { decision: "reject" } });
    const rejected = await ann.post("/api/v1/discussions/hook-2/comments", { body: "buy my thing now" });
    expect(rejected.body.status).toBe("rejected");
    expect(await reasonOf(h, rejected.body.id)).toEqual({ source: "hook", decision: "reject" });
    // the reader's counts come along with the next check
    h.answer = () => ({ body: { decision: "approve" } });
    await ann.post("/api/v1/discussions/hook-2/comments", { body: "hello" });
    expect(h.verified.at(-1)!.json.reader).toMatchObject({ approvedCount: 0, rejectedCount: 1 });
    // readers see only the published ones
    const list = await (await h.readerAs("bob")).get("/api/v1/discussions/hook-2/comments");
    expect(list.body.items.map((c: any) => c.body)).toEqual(["hello"]);
  });

  it("approve is no objection: pre-moderation still holds the comment (with the hook's reason)", async () => {
    const h = await tenantWithHook({}, { moderation: "pre" });
    h.answer = () => ({ body: { decision: "approve", reason: "clean" } });
    const c = await (await h.readerAs("ann")).post("/api/v1/discussions/hook-3/comments", { body: "hi" });
    expect(c.body.status).toBe("pending");
    expect(await reasonOf(h, c.body.id)).toEqual({ source: "hook", decision: "approve", reason: "clean" });
  });

  it("runs after the word rules: a rejected comment is not sent; a held one is, and the hook may reject it", async () => {
    const h = await tenantWithHook();
    await h.t.api.patch("/api/v1/settings", { safety: { bannedWords: ["scam"], suspectWords: ["cheap"] } });
    const ann = await h.readerAs("ann");
    const banned = await ann.post("/api/v1/discussions/hook-4/comments", { body: "a scam" });
    expect(banned.body.status).toBe("rejected");
    expect(h.receiver.requests).toHaveLength(0);
    expect(await reasonOf(h, banned.body.id)).toMatchObject({ source: "rule", rule: "bannedWords" });
    // held by a rule, the hook approves: still held, for the rule's reason
    const suspect = await ann.post("/api/v1/discussions/hook-4/comments", { body: "cheap watches" });
    expect(suspect.body.status).toBe("pending");
    expect(await reasonOf(h, suspect.body.id)).toMatchObject({ source: "rule", rule: "suspectWords" });
    h.answer = () => ({ body: { decision: "reject", reason: "spam" } });
    const worse = await ann.post("/api/v1/discussions/hook-4/comments", { body: "cheap watches again" });
    expect(worse.body.status).toBe("rejected");
    expect(await reasonOf(h, worse.body.id)).toEqual({ source: "hook", decision: "reject", reason: "spam" });
    expect(h.verified).toHaveLength(2);
  });

  it("an edit is checked too (action edit): a rejected edit takes the comment out of public view", async () => {
    const h = await tenantWithHook();
    const ann = await h.readerAs("ann");
    const c = await ann.post("/api/v1/discussions/hook-5/comments", { body: "fine words" });
    expect(c.body.status).toBe("approved");
    h.answer = () => ({ body: { decision: "approve" } });
    const ok = await ann.patch(`/api/v1/comments/${c.body.id}`, { body: "still fine" });
    expect(ok.body.status).toBe("approved");
    const edit = h.verified.at(-1)!.json;
    expect(edit).toMatchObject({
      type: "comment.check",
      action: "edit",
      comment: {
        id: c.body.id,
        discussionId: "hook-5",
        parentId: null,
        body: "still fine",
        createdAt: c.body.createdAt,
        editedAt: expect.any(String),
      },
      reader: { id: "ann", approvedCount: 1, rejectedCount: 0 },
      discussion: { id: "hook-5" },
    });
    h.answer = () => ({ body: { decision: "reject", reason: "abuse" } });
    const bad = await ann.patch(`/api/v1/comments/${c.body.id}`, { body: "nasty words" });
    expect(bad.status).toBe(200);
    expect(bad.body.status).toBe("rejected");
    expect(await reasonOf(h, c.body.id)).toEqual({ source: "hook", decision: "reject", reason: "abuse" });
    expect((await (await h.readerAs("bob")).get(`/api/v1/comments/${c.body.id}`)).status).toBe(404);
    // another reader's edit is refused without a call
    const calls = h.receiver.requests.length;
    expect((await (await h.readerAs("bob")).patch(`/api/v1/comments/${c.body.id}`, { body: "mine?" })).status).toBe(404); // not visible to bob
    expect(h.receiver.requests).toHaveLength(calls);
  });
});

describe("no call when the write will be refused", () => {
  it("a banned or suspended reader's post and edit, a locked discussion: refused as before, the hook is not asked", async () => {
    const h = await tenantWithHook();
    const ann = await h.readerAs("ann");
    const c = await ann.post("/api/v1/discussions/hook-11/comments", { body: "before the ban" });
    expect(h.receiver.requests).toHaveLength(1);
    expect((await h.moderator.post("/api/v1/readers/ann/ban", { reason: "spam" })).status).toBe(200);
    expect((await ann.post("/api/v1/discussions/hook-11/comments", { body: "after" })).body.code).toBe("reader_banned");
    expect((await ann.patch(`/api/v1/comments/${c.body.id}`, { body: "edited" })).body.code).toBe("reader_banned");
    expect((await h.moderator.del("/api/v1/readers/ann/ban")).status).toBe(204);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    expect((await h.moderator.post("/api/v1/readers/ann/ban", { until })).status).toBe(200);
    expect((await ann.post("/api/v1/discussions/hook-11/comments", { body: "suspended" })).status).toBe(403);
    expect(h.receiver.requests).toHaveLength(1);
    await h.moderator.del("/api/v1/readers/ann/ban");
    expect((await h.t.api.post("/api/v1/discussions/hook-11/lock")).status).toBe(200);
    expect((await ann.post("/api/v1/discussions/hook-11/comments", { body: "locked" })).status).toBe(409);
    expect(h.receiver.requests).toHaveLength(1);
  });
});

describe("when the hook does not answer", () => {
  it("a stall costs at most timeoutMs, then onTimeout applies (hold, reject, approve) with a fallback reason", async () => {
    const h = await tenantWithHook({ timeoutMs: 300 });
    h.answer = () => ({ hang: true });
    const ann = await h.readerAs("ann");
    const started = Date.now();
    const held = await ann.post("/api/v1/discussions/hook-6/comments", { body: "slow" });
    expect(Date.now() - started).toBeLessThan(3_000); // generous: the fallback came, the post did not hang
    expect(held.status).toBe(201);
    expect(held.body.status).toBe("pending");
    expect(await reasonOf(h, held.body.id)).toEqual({
      source: "hook",
      fallback: "timeout",
      decision: "hold",
      error: "no answer within 300 ms",
    });
    await h.t.api.patch("/api/v1/settings", { safety: { hook: { onTimeout: "reject" } } });
    const rejected = await ann.post("/api/v1/discussions/hook-6/comments", { body: "slow again" });
    expect(rejected.body.status).toBe("rejected");
    expect(await reasonOf(h, rejected.body.id)).toMatchObject({ source: "hook", fallback: "timeout", decision: "reject" });
    await h.t.api.patch("/api/v1/settings", { safety: { hook: { onTimeout: "approve" } } });
    const approved = await ann.post("/api/v1/discussions/hook-6/comments", { body: "slow once more" });
    expect(approved.body.status).toBe("approved");
    expect(h.verified).toHaveLength(3); // each was asked
  });

  it("a failure (500, not JSON, an unknown decision, a bad address) applies onTimeout with an error reason", async () => {
    const h = await tenantWithHook();
    const ann = await h.readerAs("ann");
    const answers: [Reply, string][] = [
      [{ status: 500, body: { decision: "approve" } }, "hook answered HTTP 500"],
      [{ status: 200, body: "approve" }, "hook's answer is not JSON"],
      [{ status: 200, body: { decision: "maybe" } }, "hook's answer has no decision of approve, hold, reject"],
    ];
    for (const [reply, error] of answers) {
      h.answer = () => reply;
      const c = await ann.post("/api/v1/discussions/hook-7/comments", { body: `case ${error}` });
      expect(c.body.status, error).toBe("pending");
      expect(await reasonOf(h, c.body.id)).toEqual({ source: "hook", fallback: "error", decision: "hold", error });
    }
    // a receiver that is gone
    await h.receiver.close();
    const gone = await ann.post("/api/v1/discussions/hook-7/comments", { body: "nobody home" });
    expect(gone.body.status).toBe("pending");
    expect(await reasonOf(h, gone.body.id)).toMatchObject({
      source: "hook",
      fallback: "error",
      error: expect.stringMatching(/^network: /),
    });
  });

  it("breakerThreshold failures open the breaker: calls are skipped (breaker_open) until a trial after the cooldown succeeds", async () => {
    const h = await tenantWithHook({ timeoutMs: 300 }, { delivery: { breakerThreshold: 2, breakerCooldownMs: 400 } });
    const ann = await h.readerAs("ann");
    h.answer = () => ({ status: 503 });
    for (const body of ["one", "two"])
      expect((await ann.post("/api/v1/discussions/hook-8/comments", { body })).body.status).toBe("pending");
    expect(h.receiver.requests).toHaveLength(2);
    const skipped = await ann.post("/api/v1/discussions/hook-8/comments", { body: "three" });
    expect(skipped.body.status).toBe("pending");
    expect(h.receiver.requests).toHaveLength(2); // not called
    expect(await reasonOf(h, skipped.body.id)).toMatchObject({ source: "hook", fallback: "breaker_open", decision: "hold" });
    // after the cooldown one call is the trial; it succeeds and the breaker closes
    await new Promise((ok) => setTimeout(ok, 450));
    h.answer = () => ({ body: { decision: "approve" } });
    expect((await ann.post("/api/v1/discussions/hook-8/comments", { body: "four" })).body.status).toBe("approved");
    expect((await ann.post("/api/v1/discussions/hook-8/comments", { body: "five" })).body.status).toBe("approved");
    expect(h.receiver.requests).toHaveLength(4);
  });
});

describe("metrics", () => {
  it("counts each check's outcome in moderation_hook_calls_total and times the calls made", async () => {
    const metrics = async () => (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const count = (text: string, outcome: string) =>
      Number(new RegExp(`^moderation_hook_calls_total\\{outcome="${outcome}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
    const before = await metrics();
    const h = await tenantWithHook({ timeoutMs: 200 }, { delivery: { breakerThreshold: 1, breakerCooldownMs: 60_000 } });
    const ann = await h.readerAs("ann");
    h.answer = () => ({ body: { decision: "reject" } });
    await ann.post("/api/v1/discussions/hook-9/comments", { body: "one" });
    h.answer = () => ({ hang: true });
    await ann.post("/api/v1/discussions/hook-9/comments", { body: "two" });
    await ann.post("/api/v1/discussions/hook-9/comments", { body: "three" }); // the breaker is open now
    const after = await metrics();
    // other files' servers are other processes' registries; this file's other tests ran before this one
    for (const [outcome, n] of [
      ["reject", 1],
      ["timeout", 1],
      ["breaker_open", 1],
    ] as const) {
      expect(count(after, outcome) - count(before, outcome), outcome).toBe(n);
    }
    expect(after).toMatch(/^moderation_hook_duration_seconds_count \d+/m);
  });
});

describe("Send test", () => {
  it("sends a sample check marked as a test to the configured hook and answers what it said", async () => {
    const h = await tenantWithHook();
    h.answer = () => ({ body: { decision: "hold", reason: "test received" } });
    const r = await h.t.api.post("/api/v1/settings/safety/hook/test");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      status: 200,
      decision: "hold",
      reason: "test received",
      latencyMs: expect.any(Number),
      error: null,
    });
    const sent = h.verified.at(-1)!.json;
    expect(sent).toMatchObject({
      type: "comment.check",
      action: "create",
      test: true,
      comment: { id: "cmt_test" },
      reader: { id: "test-reader" },
    });
    // GraphQL, and a failing hook
    h.answer = () => ({ status: 500 });
    const g = await h.t.api.gql(TestSafetyHookDocument);
    expect(g.data!.testSafetyHook).toEqual({
      ok: false,
      status: 500,
      decision: null,
      reason: null,
      latencyMs: expect.any(Number),
      error: "hook answered HTTP 500",
    });
    // manage_settings only; without a hook, 409
    const moderatorOnly = await h.moderator.post("/api/v1/settings/safety/hook/test");
    expect(moderatorOnly.status).toBe(403);
    await h.t.api.patch("/api/v1/settings", { safety: { hook: null } });
    const none = await h.t.api.post("/api/v1/settings/safety/hook/test");
    expect(none.status).toBe(409);
    expect(none.body.code).toBe("hook_not_configured");
  });

  it("a stalled hook answers ok: false with the timeout, and the breaker is neither consulted nor moved", async () => {
    const h = await tenantWithHook({ timeoutMs: 200 }, { delivery: { breakerThreshold: 1, breakerCooldownMs: 60_000 } });
    h.answer = () => ({ hang: true });
    const r = await h.t.api.post("/api/v1/settings/safety/hook/test");
    expect(r.body).toMatchObject({ ok: false, status: null, decision: null, error: "no answer within 200 ms" });
    expect(server.app.runtime.services.webhooks.signedCalls.breakerState(h.t.tenantId, h.receiver.url).state).toBe("active");
    h.answer = () => ({ body: { decision: "approve" } });
    expect((await (await h.readerAs("ann")).post("/api/v1/discussions/hook-10/comments", { body: "hi" })).body.status).toBe("approved");
  });
});
