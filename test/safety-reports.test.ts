// Reader reports (contract section 12): one report per reader and comment, none on one's own, the
// threshold that lists a comment as reported and (reportAction hold) takes it out of public view,
// the moderators' list and dismissal, and that reports never reach reader streams or webhooks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { openSse, type SseClient } from "./support/sse.js";
import { TestDismissReportsDocument, TestReportCommentDocument, TestReportsDocument } from "./generated/operations.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const eventsOf = (tenantId: string, discussionId: string) =>
  server.app.runtime.services.prisma.event.findMany({ where: { tenantId, discussionId }, orderBy: { seq: "asc" } });

/** A tenant with these safety settings, a moderator, a plain (publisher) key and readers on it. */
async function tenantWith(safety: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  if (Object.keys(safety).length) expect((await t.api.patch("/api/v1/settings", { safety })).status).toBe(200);
  const plain = (await keyWith(t, [])).key;
  const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
  const readerAs = async (sub: string) => t.as({ key: plain, identity: await t.identity(sub) });
  return { t, plain, moderator, readerAs };
}

async function readerStream(t: TestTenant, key: string, discussionId: string): Promise<SseClient> {
  const r = await t.as({ key }).post("/api/v1/stream/ticket", { discussionId });
  expect(r.status).toBe(201);
  const s = openSse(`${server.url}/api/v1/stream/${discussionId}?ticket=${r.body.ticket}`);
  await s.waitFor((f) => f.some((x) => x.event === "connected"));
  return s;
}

describe("reporting a comment", () => {
  it("201 with the report, 200 with the same report on a repeat; one per reader", async () => {
    const { t, moderator, readerAs } = await tenantWith();
    const ann = await readerAs("ann");
    const bob = await readerAs("bob");
    const c = (await ann.post("/api/v1/discussions/rep-1/comments", { body: "hello" })).body;
    const first = await bob.post(`/api/v1/comments/${c.id}/reports`, { reason: "spam", note: "buy-now link" });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^rpt_/),
      commentId: c.id,
      reason: "spam",
      note: "buy-now link",
      status: "open",
      createdAt: expect.any(String),
    });
    const again = await bob.post(`/api/v1/comments/${c.id}/reports`, { reason: "abuse" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // still one report: the list (threshold 1 for this check) counts one
    expect((await t.api.patch("/api/v1/settings", { safety: { reportThreshold: 1 } })).status).toBe(200);
    const list = await moderator.get("/api/v1/reports");
    expect(list.body.items.map((r: any) => [r.comment.id, r.reportCount, r.reasons])).toEqual([[c.id, 1, { spam: 1 }]]);
  });

  it("own comment 422, unknown or invisible comment 404, bad body 422 listing each field, no identity 401", async () => {
    const { t, moderator, readerAs } = await tenantWith({ suspectWords: ["cheap"] });
    const ann = await readerAs("ann");
    const bob = await readerAs("bob");
    const mine = (await ann.post("/api/v1/discussions/rep-2/comments", { body: "mine" })).body;
    const own = await ann.post(`/api/v1/comments/${mine.id}/reports`, { reason: "spam" });
    expect(own.status).toBe(422);
    expect(own.body.code).toBe("validation_failed");
    expect(own.body.errors).toEqual([{ path: "comment", message: expect.stringContaining("own") }]);
    expect((await bob.post("/api/v1/comments/cmt_nope/reports", { reason: "spam" })).status).toBe(404);
    const held = (await ann.post("/api/v1/discussions/rep-2/comments", { body: "cheap" })).body;
    expect(held.status).toBe("pending");
    expect((await bob.post(`/api/v1/comments/${held.id}/reports`, { reason: "spam" })).status).toBe(404);
    const other = await createTestTenant(server);
    const foreign = (await (await other.reader("zed")).post("/api/v1/discussions/rep-2/comments", { body: "x" })).body;
    expect((await bob.post(`/api/v1/comments/${foreign.id}/reports`, { reason: "spam" })).status).toBe(404);
    const deleted = (await ann.post("/api/v1/discussions/rep-2/comments", { body: "gone soon" })).body;
    await moderator.del(`/api/v1/comments/${deleted.id}`);
    expect((await bob.post(`/api/v1/comments/${deleted.id}/reports`, { reason: "spam" })).status).toBe(404);

    const bad = await bob.post(`/api/v1/comments/${mine.id}/reports`, { reason: "boring", note: "x".repeat(501) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["note", "reason"]);
    const missing = await bob.post(`/api/v1/comments/${mine.id}/reports`, {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: "reason", message: "is required" }]);
    const unknown = await bob.post(`/api/v1/comments/${mine.id}/reports`, { reason: "spam", severity: 3 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: any) => e.path)).toEqual(["severity"]);
    expect((await t.api.post(`/api/v1/comments/${mine.id}/reports`, { reason: "spam" })).status).toBe(401);
    // a note of exactly 500 characters is fine
    expect((await bob.post(`/api/v1/comments/${mine.id}/reports`, { reason: "other", note: "é".repeat(500) })).status).toBe(201);
  });

  it("a publishable key may report (a reader action)", async () => {
    const { t, moderator, readerAs } = await tenantWith({ reportThreshold: 1 });
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const c = (await (await readerAs("ann")).post("/api/v1/discussions/rep-3/comments", { body: "hi" })).body;
    const browser = t.as({ key: pk, identity: await t.identity("bob") });
    const r = await browser.post(`/api/v1/comments/${c.id}/reports`, { reason: "off_topic" });
    expect(r.status).toBe(201);
    expect(r.body.reason).toBe("off_topic");
    // but it may not list or dismiss reports
    expect((await browser.get("/api/v1/reports")).status).toBe(403);
    expect((await browser.post(`/api/v1/comments/${c.id}/reports/dismiss`)).status).toBe(403);
    expect((await moderator.get("/api/v1/reports")).body.items).toHaveLength(1);
  });
});

describe("the threshold", () => {
  it("queue: at reportThreshold distinct reporters the comment is listed as reported and stays visible", async () => {
    const { t, plain, moderator, readerAs } = await tenantWith({ reportThreshold: 2 });
    const ann = await readerAs("ann");
    const c = (await ann.post("/api/v1/discussions/rep-4/comments", { body: "hot take" })).body;
    await (await readerAs("r1")).post(`/api/v1/comments/${c.id}/reports`, { reason: "abuse", note: "rude" });
    expect((await moderator.get("/api/v1/reports")).body.items).toEqual([]);
    await (await readerAs("r1")).post(`/api/v1/comments/${c.id}/reports`, { reason: "abuse" }); // a repeat counts once
    expect((await moderator.get("/api/v1/reports")).body.items).toEqual([]);
    await (await readerAs("r2")).post(`/api/v1/comments/${c.id}/reports`, { reason: "spam" });
    const list = await moderator.get("/api/v1/reports?status=open");
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({
      comment: { id: c.id, status: "approved", body: "hot take" },
      status: "open",
      reportCount: 2,
      reasons: { abuse: 1, spam: 1 },
      notes: [{ reason: "abuse", note: "rude", createdAt: expect.any(String) }],
      dismissedAt: null,
    });
    expect(list.body.items[0].comment).not.toHaveProperty("moderationReason");
    // still public
    expect((await t.as({ key: plain }).get(`/api/v1/comments/${c.id}`)).status).toBe(200);
    expect((await t.api.get("/api/v1/discussions/rep-4")).body.commentCount).toBe(1);
  });

  it("hold: at the threshold a published comment leaves public view (lists, counts, streams) with the reports' reason", async () => {
    const { t, plain, moderator, readerAs } = await tenantWith({ reportThreshold: 2, reportAction: "hold" });
    const ann = await readerAs("ann");
    const c = (await ann.post("/api/v1/discussions/rep-5/comments", { body: "bad" })).body;
    const parent = (await ann.post("/api/v1/discussions/rep-5/comments", { body: "parent" })).body;
    const reply = (await (await readerAs("cy")).post("/api/v1/discussions/rep-5/comments", { body: "re", parentId: parent.id })).body;
    expect((await t.api.get(`/api/v1/comments/${parent.id}`)).body.replyCount).toBe(1);
    const stream = await readerStream(t, plain, "rep-5");
    try {
      await (await readerAs("r1")).post(`/api/v1/comments/${c.id}/reports`, { reason: "spam" });
      await (await readerAs("r1")).post(`/api/v1/comments/${reply.id}/reports`, { reason: "abuse" });
      expect((await t.as({ key: plain }).get(`/api/v1/comments/${c.id}`)).status).toBe(200);
      await (await readerAs("r2")).post(`/api/v1/comments/${c.id}/reports`, { reason: "spam", note: "bot" });
      await (await readerAs("r3")).post(`/api/v1/comments/${reply.id}/reports`, { reason: "abuse" });
      // gone from readers: a direct read, the list, the counts
      expect((await t.as({ key: plain }).get(`/api/v1/comments/${c.id}`)).status).toBe(404);
      const listed = (await t.as({ key: plain }).get("/api/v1/discussions/rep-5/comments")).body.items.map((x: any) => x.id);
      expect(listed).toEqual([parent.id]);
      expect((await t.api.get("/api/v1/discussions/rep-5")).body.commentCount).toBe(1);
      expect((await t.api.get(`/api/v1/comments/${parent.id}`)).body.replyCount).toBe(0);
      // its author still sees it, as pending
      expect((await ann.get(`/api/v1/comments/${c.id}`)).body.status).toBe("pending");
      // moderators: pending, with the reports' reason, in the queue and on the reported list
      const seen = (await moderator.get(`/api/v1/comments/${c.id}`)).body;
      expect(seen.status).toBe("pending");
      expect(seen.moderationReason).toEqual({ source: "reports", reportCount: 2, reasons: { spam: 2 } });
      expect((await moderator.get("/api/v1/comments?status=pending")).body.items.map((x: any) => x.id).sort()).toEqual(
        [c.id, reply.id].sort(),
      );
      const reported = (await moderator.get("/api/v1/reports")).body.items;
      expect(reported.map((r: any) => [r.comment.id, r.comment.status, r.reportCount])).toEqual(
        expect.arrayContaining([
          [reply.id, "pending", 2],
          [c.id, "pending", 2],
        ]),
      );
      expect(reported).toHaveLength(2);
      // the readers' stream heard of none of it: the next comment is the first event it gets
      await ann.post("/api/v1/discussions/rep-5/comments", { body: "marker" });
      await stream.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.body === "marker"));
      expect(stream.events().map((f) => [f.event, f.data.data.comment?.body])).toEqual([["comment_created", "marker"]]);
    } finally {
      stream.close();
    }
    // no event at all for the reports and the hold (so no webhook either)
    const events = await eventsOf(t.tenantId, "rep-5");
    expect(events.map((e) => e.type)).toEqual([
      "comment_created",
      "comment_created",
      "comment_created",
      "notification_reply",
      "comment_created",
    ]);

    // a moderator's approval stands: it closes no report, and further reports do not hold it again
    const approved = await moderator.post(`/api/v1/comments/${c.id}/approve`);
    expect(approved.body.status).toBe("approved");
    expect(approved.body.moderationReason).toMatchObject({ source: "moderator", decision: "approved", previous: { source: "reports" } });
    expect((await moderator.get("/api/v1/reports")).body.items.find((r: any) => r.comment.id === c.id).reportCount).toBe(2);
    await (await readerAs("r4")).post(`/api/v1/comments/${c.id}/reports`, { reason: "other" });
    expect((await t.as({ key: plain }).get(`/api/v1/comments/${c.id}`)).status).toBe(200);
    expect((await moderator.get("/api/v1/reports")).body.items[0]).toMatchObject({ comment: { id: c.id }, reportCount: 3 });
  });

  it("hold leaves a comment that is not published as it is", async () => {
    const { moderator, readerAs } = await tenantWith({ reportThreshold: 1, reportAction: "hold" });
    const c = (await (await readerAs("ann")).post("/api/v1/discussions/rep-6/comments", { body: "x" })).body;
    await moderator.post(`/api/v1/comments/${c.id}/reject`);
    // a rejected comment is invisible to other readers: nothing to report
    expect((await (await readerAs("bob")).post(`/api/v1/comments/${c.id}/reports`, { reason: "spam" })).status).toBe(404);
    expect((await moderator.get(`/api/v1/comments/${c.id}`)).body.status).toBe("rejected");
  });
});

describe("moderators' list and dismissal", () => {
  it("lists newest report first, paginated with a cursor; dismiss closes them (audited) and leaves the status", async () => {
    const { t, moderator, readerAs } = await tenantWith({ reportThreshold: 1 });
    const ann = await readerAs("ann");
    const bob = await readerAs("bob");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await ann.post("/api/v1/discussions/rep-7/comments", { body: `c${i}` })).body.id);
    for (const id of ids) await bob.post(`/api/v1/comments/${id}/reports`, { reason: "spam" });
    // a new report on the first comment brings it to the top
    await (await readerAs("cy")).post(`/api/v1/comments/${ids[0]}/reports`, { reason: "abuse", note: "again" });
    const seen: { id: string; at: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await moderator.get(`/api/v1/reports?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((r: any) => ({ id: r.comment.id, at: r.lastReportedAt })));
      cursor = page.body.nextCursor;
    } while (cursor);
    // each once, newest report first (reports within one millisecond are ordered by comment id)
    expect(seen.map((x) => x.id).sort()).toEqual([...ids].sort());
    expect(seen[0]!.id).toBe(ids[0]);
    expect(seen.map((x) => x.at)).toEqual(
      seen
        .map((x) => x.at)
        .sort()
        .reverse(),
    );
    expect((await moderator.get("/api/v1/reports?status=closed")).status).toBe(400);
    expect((await moderator.get("/api/v1/reports?limit=0")).status).toBe(400);
    expect((await moderator.get("/api/v1/reports?cursor=bogus")).status).toBe(400);
    expect((await t.as({ key: (await keyWith(t, [])).key }).get("/api/v1/reports")).status).toBe(403);

    const dismissed = await moderator.post(`/api/v1/comments/${ids[0]}/reports/dismiss`);
    expect(dismissed.status).toBe(200);
    expect(dismissed.body).toMatchObject({
      comment: { id: ids[0], status: "approved" },
      status: "dismissed",
      reportCount: 2,
      reasons: { spam: 1, abuse: 1 },
      notes: [{ reason: "abuse", note: "again" }],
      dismissedAt: expect.any(String),
    });
    const open = (await moderator.get("/api/v1/reports")).body.items.map((r: any) => r.comment.id);
    expect(open.sort()).toEqual(ids.slice(1).sort());
    const closed = (await moderator.get("/api/v1/reports?status=dismissed")).body.items;
    expect(closed.map((r: any) => [r.comment.id, r.status, r.reportCount])).toEqual([[ids[0], "dismissed", 2]]);
    // dismissing again changes nothing; an unknown comment is 404
    expect((await moderator.post(`/api/v1/comments/${ids[0]}/reports/dismiss`)).body.reportCount).toBe(2);
    expect((await moderator.post("/api/v1/comments/cmt_nope/reports/dismiss")).status).toBe(404);
    // a reader who reported once cannot report again after the dismissal: the same (dismissed) report
    const repeat = await bob.post(`/api/v1/comments/${ids[0]}/reports`, { reason: "spam" });
    expect([repeat.status, repeat.body.status]).toEqual([200, "dismissed"]);
    const audit = (await t.admin.get("/api/v1/audit?action=comment.reports.dismiss")).body.items;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ resource: { type: "comment", id: ids[0] }, details: { dismissed: 2, discussionId: "rep-7" } });
  });

  it("reports never reach a reader's stream nor the event log", async () => {
    const { t, plain, readerAs } = await tenantWith({ reportThreshold: 1 });
    const ann = await readerAs("ann");
    const c = (await ann.post("/api/v1/discussions/rep-8/comments", { body: "hi" })).body;
    const stream = await readerStream(t, plain, "rep-8");
    try {
      for (const sub of ["r1", "r2", "r3"]) await (await readerAs(sub)).post(`/api/v1/comments/${c.id}/reports`, { reason: "spam" });
      await ann.post("/api/v1/discussions/rep-8/comments", { body: "marker" });
      await stream.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.body === "marker"));
      expect(stream.events().map((f) => f.event)).toEqual(["comment_created"]);
    } finally {
      stream.close();
    }
    expect((await eventsOf(t.tenantId, "rep-8")).map((e) => e.type)).toEqual(["comment_created", "comment_created"]);
  });
});

describe("over GraphQL", () => {
  it("reportComment, reports (first/after) and dismissReports", async () => {
    const { t, moderator, readerAs } = await tenantWith({ reportThreshold: 1, reportAction: "hold" });
    const c = (await (await readerAs("ann")).post("/api/v1/discussions/rep-9/comments", { body: "x" })).body;
    const bob = await readerAs("bob");
    const r = await bob.gql(TestReportCommentDocument, { id: c.id, input: { reason: "abuse", note: "mean" } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.reportComment).toMatchObject({
      created: true,
      report: { commentId: c.id, reason: "abuse", note: "mean", status: "open" },
    });
    const again = await bob.gql(TestReportCommentDocument, { id: c.id, input: { reason: "spam" } });
    expect(again.data!.reportComment).toMatchObject({ created: false, report: { id: r.data!.reportComment.report.id, reason: "abuse" } });
    const bad = await bob.gql(TestReportCommentDocument, { id: c.id, input: { reason: "nope" } });
    expect(bad.errors![0]!.extensions).toMatchObject({ code: "validation_failed", errors: [{ path: "reason" }] });

    const list = await moderator.gql(TestReportsDocument, { first: 10 });
    expect(list.errors).toBeUndefined();
    expect(list.data!.reports.edges.map((e) => e.node)).toEqual([
      {
        comment: { id: c.id, status: "pending", moderationReason: { source: "reports", reportCount: 1, reasons: { abuse: 1 } } },
        reportCount: 1,
        reasons: { abuse: 1 },
        reasonCounts: [{ reason: "abuse", count: 1 }],
        notes: [{ reason: "abuse", note: "mean" }],
      },
    ]);
    expect(list.data!.reports.pageInfo.hasNextPage).toBe(false);
    const denied = await t.as({ key: (await keyWith(t, [])).key }).gql(TestReportsDocument, {});
    expect(denied.errors![0]!.extensions).toMatchObject({ code: "missing_capability", required: "moderate_content" });

    const d = await moderator.gql(TestDismissReportsDocument, { commentId: c.id });
    expect(d.data!.dismissReports).toEqual({ status: "dismissed", reportCount: 1, comment: { id: c.id, status: "pending" } });
    expect((await moderator.gql(TestReportsDocument, { status: "open" })).data!.reports.edges).toEqual([]);
  });
});
