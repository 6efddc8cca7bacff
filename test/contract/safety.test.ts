// Black-box contract suite, trust and safety (section 12): word rules and reasons, reports, bans, the
// moderation hook's secret and its test send; and the identity-secret overlap of section 13.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { api, contractRun, createTenant, expectProblem, expectStatus, identity, type Tenant } from "../support/contract-client.js";

await contractRun();

/** A tenant of this file's own: its safety settings change nothing for the other files. */
const T: Tenant = await createTenant("Safety Co");
const key = T.apiKey;
const reader = (sub: string) => identity(T.identitySecret, sub, `Reader ${sub}`);
let n = 0;

async function discussion(): Promise<string> {
  const id = `safety-${++n}`;
  expectStatus(await api.put(`/discussions/${id}`, { key, json: { title: id } }), 201);
  return id;
}

async function post(d: string, sub: string, body: string) {
  const res = await api.post(`/discussions/${d}/comments`, { key, identity: reader(sub), json: { body } });
  expectStatus(res, 201);
  return res.body;
}

describe("trust and safety (section 12)", { timeout: 30_000 }, () => {
  it("bannedWords → rejected, suspectWords and maxLinks → pending, with moderationReason for moderators", async () => {
    expectStatus(
      await api.patch("/settings", { key, json: { safety: { bannedWords: ["scam"], suspectWords: ["cheap"], maxLinks: 1 } } }),
      200,
    );
    const d = await discussion();
    const banned = await post(d, "w-1", "what a S.C.A.M");
    expect(banned.status).toBe("rejected");
    expect((await post(d, "w-1", "cheap pills")).status).toBe("pending");
    // section 18: maxLinks counts rendered links (an autolink and a Markdown link; a bare domain is text)
    expect((await post(d, "w-1", "see https://a.example.com and [b](https://b.example.org)")).status).toBe("pending");
    expect((await post(d, "w-1", "see https://a.example.com and b.example.org")).status).toBe("approved");
    expect((await post(d, "w-1", "a fine comment")).status).toBe("approved");
    const seen = await api.get(`/comments/${banned.id}`, { key });
    expectStatus(seen, 200);
    expect(seen.body.moderationReason).toMatchObject({ source: "rule" });
    expectStatus(await api.patch("/settings", { key, json: { safety: { bannedWords: [], suspectWords: [], maxLinks: null } } }), 200);
  });

  it("reports: 201 once, 200 on a repeat, 422 on one's own; threshold lists it; dismiss closes", async () => {
    expectStatus(await api.patch("/settings", { key, json: { safety: { reportThreshold: 2, reportAction: "queue" } } }), 200);
    const d = await discussion();
    const c = await post(d, "author", "reported comment");
    const first = await api.post(`/comments/${c.id}/reports`, { key, identity: reader("r-1"), json: { reason: "spam", note: "ads" } });
    expectStatus(first, 201);
    expectStatus(await api.post(`/comments/${c.id}/reports`, { key, identity: reader("r-1"), json: { reason: "spam" } }), 200);
    expectProblem(
      await api.post(`/comments/${c.id}/reports`, { key, identity: reader("author"), json: { reason: "abuse" } }),
      422,
      "validation_failed",
    );
    expectProblem(
      await api.post(`/comments/${c.id}/reports`, { key, identity: reader("r-2"), json: { reason: "nonsense" } }),
      422,
      "validation_failed",
    );
    expectStatus(await api.post(`/comments/${c.id}/reports`, { key, identity: reader("r-2"), json: { reason: "abuse" } }), 201);
    const open = await api.get("/reports?status=open", { key });
    expectStatus(open, 200);
    const item = (open.body.items as { comment: { id: string }; reportCount: number }[]).find((i) => i.comment.id === c.id);
    expect(item?.reportCount).toBe(2);
    expect((await api.get(`/comments/${c.id}`, { key })).body.status).toBe("approved"); // queue: stays visible
    expectStatus(await api.post(`/comments/${c.id}/reports/dismiss`, { key }), 200);
    const after = await api.get("/reports?status=open", { key });
    expect((after.body.items as { comment: { id: string } }[]).some((i) => i.comment.id === c.id)).toBe(false);
  });

  it("bans: 403 reader_banned with until on post and reaction; the reader view; lifting → 204", async () => {
    const d = await discussion();
    const c = await post(d, "troll", "before the ban");
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const banned = await api.post("/readers/troll/ban", { key, json: { until, reason: "flooding" } });
    expectStatus(banned, 200);
    const refused = await api.post(`/discussions/${d}/comments`, { key, identity: reader("troll"), json: { body: "again" } });
    expectProblem(refused, 403, "reader_banned");
    expect(Date.parse(refused.body.until)).toBe(Date.parse(until));
    expectProblem(
      await api.post(`/comments/${c.id}/reactions`, { key, identity: reader("troll"), json: { kind: "like" } }),
      403,
      "reader_banned",
    );
    const view = await api.get("/readers/troll", { key });
    expectStatus(view, 200);
    expect(view.body.sanction).toMatchObject({ reason: "flooding" });
    expectStatus(await api.del("/readers/troll/ban", { key }), 204);
    expectStatus(await api.post(`/discussions/${d}/comments`, { key, identity: reader("troll"), json: { body: "after" } }), 201);
    expectProblem(await api.get("/readers/nobody-at-all", { key }), 404, "not_found");
  });

  it("the hook's secret is answered once by the PATCH that sets it; the test send shows the hook's answer", async () => {
    const hook = createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ decision: "hold", reason: "test" })),
      );
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/check`;
      const set = await api.patch("/settings", { key, json: { safety: { hook: { url, timeoutMs: 1000 } } } });
      expectStatus(set, 200);
      expect(set.body.safety.hook.secret).toMatch(/^whsec_/);
      const read = await api.get("/settings", { key });
      expect(read.body.safety.hook.url).toBe(url);
      expect(read.body.safety.hook.secret).toBeUndefined();
      const sent = await api.post("/settings/safety/hook/test", { key });
      expectStatus(sent, 200);
      expect(sent.body).toMatchObject({ ok: true, decision: "hold" });
      const d = await discussion();
      const held = await post(d, "h-1", "checked by the hook");
      expect(held.status).toBe("pending");
      expect((await api.get(`/comments/${held.id}`, { key })).body.moderationReason).toMatchObject({ source: "hook", decision: "hold" });
      expectStatus(await api.patch("/settings", { key, json: { safety: { hook: null } } }), 200);
    } finally {
      hook.closeAllConnections();
      await new Promise((resolve) => hook.close(resolve));
    }
  });
});
