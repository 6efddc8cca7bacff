// Chat alerts (contract section 21, docs/safety.md): settings `alerts` (URLs write-only), a held or
// reported comment alerting Slack- and Discord-shaped receivers (real HTTP servers on 127.0.0.1 that
// record the JSON posted) through the webhook queue with its retries, and the one-click Approve and
// Reject links: a GET shows a form and changes nothing, a POST acts once, audited as the link. The
// worker is driven step by step (runOnce) on a manual clock, on a database of the file's own (a worker
// on a moved clock would take other files' jobs).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../src/lib/clock.js";
import { isolatedDatabase } from "./support/database.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { startReceiver, type Receiver, type Reply } from "./support/receiver.js";

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
const clock = manualClock(new Date());
const receivers: Receiver[] = [];

beforeAll(async () => {
  own = await isolatedDatabase("alerts");
  server = await startServer(own.env, { clock });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server?.stop();
  await own?.drop();
});

const worker = () => server.app.runtime.services.webhooks.worker;
const prisma = () => server.app.runtime.services.prisma;

async function receiver(reply: (n: number) => Reply = () => ({ status: 200, body: "ok" })): Promise<Receiver> {
  const r = await startReceiver((_req, n) => reply(n));
  receivers.push(r);
  return r;
}

/** A tenant whose alerts go to Slack- and Discord-shaped receivers; comments held by pre-moderation. */
async function tenantWithAlerts(
  alerts: { kind: "slack" | "discord"; on: string[]; receiver: Receiver }[],
  settings: Record<string, unknown> = {},
): Promise<{ t: TestTenant; ann: TestTenant["api"] }> {
  const t = await createTestTenant(server);
  const r = await t.api.patch("/api/v1/settings", {
    moderation: "pre",
    ...settings,
    alerts: alerts.map((a) => ({ kind: a.kind, on: a.on, url: `${a.receiver.url}/hooks/${a.kind}/SECRET-PATH-${a.kind}` })),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await t.api.put("/api/v1/discussions/launch", { title: "Launch <day>", url: "https://news.example/launch" });
  return { t, ann: await t.reader("ann", { name: "Ann *Reader*" }) };
}

const slackLinks = (body: any) => {
  const actions = body.blocks.find((b: any) => b.type === "actions");
  return { approve: actions.elements[0].url as string, reject: actions.elements[1].url as string };
};
const discordLinks = (body: any) => {
  const field = body.embeds[0].fields.find((f: any) => f.name === "Moderate").value as string;
  const [approve, reject] = [...field.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
  return { approve: approve!, reject: reject! };
};

const page = async (url: string, method: "GET" | "POST" = "GET", body?: string) => {
  const res = await fetch(url, {
    method,
    ...(body !== undefined ? { body, headers: { "content-type": "application/x-www-form-urlencoded" } } : {}),
  });
  return { status: res.status, html: await res.text(), headers: res.headers };
};

const statusOf = async (t: TestTenant, id: string) => (await t.api.get(`/api/v1/comments/${id}`)).body.status as string;

describe("settings alerts", () => {
  it("keeps each URL write-only: sealed, answered masked, kept by id, guarded, masked in the audit log", async () => {
    const slack = await receiver();
    const { t } = await tenantWithAlerts([{ kind: "slack", on: ["pending"], receiver: slack }]);
    const read = (await t.api.get("/api/v1/settings")).body.alerts;
    expect(read).toEqual([{ id: expect.stringMatching(/^alr_/), kind: "slack", on: ["pending"], url: `${new URL(slack.url).origin}/…` }]);
    expect(JSON.stringify(await t.api.get("/api/v1/settings"))).not.toContain("SECRET-PATH");
    const id = read[0].id;
    // named by its id, without a url or with the masked one: the URL is kept
    for (const alert of [
      { id, kind: "slack", on: ["pending", "reported"] },
      { ...read[0], on: ["reported"] },
    ]) {
      const r = await t.api.patch("/api/v1/settings", { alerts: [alert] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.alerts[0]).toMatchObject({ id, url: `${new URL(slack.url).origin}/…` });
    }
    const stored = await prisma().tenant.findUniqueOrThrow({ where: { id: t.tenantId } });
    const sealed = (stored.settings as any).alerts[0];
    expect(Object.keys(sealed).sort()).toEqual(["id", "kind", "on", "urlEnc"]);
    expect(JSON.stringify(stored.settings)).not.toContain("SECRET-PATH");
    expect(server.app.runtime.services.secretBox.open(sealed.urlEnc)).toBe(`${slack.url}/hooks/slack/SECRET-PATH-slack`);
    // a new alert needs a url; an unknown id is refused; the SSRF guard refuses private addresses; at most 5
    for (const url of ["https://10.0.0.1/x", "https://169.254.169.254/latest", "http://example.com/x"]) {
      const guarded = await t.api.patch("/api/v1/settings", {
        alerts: [
          { id, kind: "slack", on: ["pending"] },
          { kind: "slack", on: ["pending"], url },
        ],
      });
      expect(guarded.status, url).toBe(422);
      expect(guarded.body.errors.map((e: any) => e.path)).toEqual(["alerts[1].url"]);
    }
    const bad = await t.api.patch("/api/v1/settings", {
      alerts: [
        { kind: "discord", on: ["pending"] },
        { id: "alr_nope", kind: "slack", on: ["pending"] },
      ],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([
      { path: "alerts[0].url", message: "is required for a new alert" },
      { path: "alerts[1].id", message: "is not the id of one of the site's alerts" },
    ]);
    const six = Array.from({ length: 6 }, () => ({ kind: "slack", on: ["pending"], url: `${slack.url}/x` }));
    expect((await t.api.patch("/api/v1/settings", { alerts: six })).status).toBe(422);
    const wrong = await t.api.patch("/api/v1/settings", { alerts: [{ kind: "teams", on: ["always"], url: `${slack.url}/x` }] });
    expect(wrong.body.errors.map((e: any) => e.path).sort()).toEqual(["alerts[0].kind", "alerts[0].on[0]"]);
    const audit = JSON.stringify((await t.admin.get("/api/v1/audit?action=settings.update")).body);
    expect(audit).toContain("alerts");
    expect(audit).not.toContain("SECRET-PATH");
    expect(audit).not.toContain("urlEnc");
    // GraphQL answers the same
    const gql = await t.api.post("/graphql", { query: "{ settings { alerts { id kind url on } } }" });
    expect(gql.body.data.settings.alerts).toEqual([{ id, kind: "slack", url: `${new URL(slack.url).origin}/…`, on: ["reported"] }]);
  });

  it("Send test posts a sample in the chat's format at once and says what the chat answered", async () => {
    const slack = await receiver();
    const discord = await receiver(() => ({ status: 400, body: { message: "Invalid Form Body" } }));
    const { t } = await tenantWithAlerts([
      { kind: "slack", on: ["pending"], receiver: slack },
      { kind: "discord", on: ["pending"], receiver: discord },
    ]);
    const ok = await t.api.post("/api/v1/settings/alerts/0/test");
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, status: 200, error: null });
    expect(slack.requests).toHaveLength(1);
    expect(slack.requests[0]!.path).toBe("/hook/hooks/slack/SECRET-PATH-slack");
    expect(slack.requests[0]!.json.blocks[0].text.text).toMatch(/^\[Test\]/);
    expect(slack.requests[0]!.json.blocks.some((b: any) => b.type === "actions")).toBe(false); // no links in a test
    const refused = await t.api.post("/api/v1/settings/alerts/1/test");
    expect(refused.body).toMatchObject({ ok: false, status: 400, error: expect.stringContaining("HTTP 400") });
    expect(discord.requests[0]!.json.embeds[0].title).toMatch(/^\[Test\]/);
    const none = await t.api.post("/api/v1/settings/alerts/2/test");
    expect([none.status, none.body.code]).toEqual([404, "alert_not_configured"]);
    const gql = await t.api.post("/graphql", { query: "mutation { testAlert(index: 0) { ok status error } }" });
    expect(gql.body.data.testAlert).toEqual({ ok: true, status: 200, error: null });
    expect(await prisma().webhookDelivery.count({ where: { tenantId: t.tenantId } })).toBe(0); // nothing queued
  });
});

describe("a held comment alerts", () => {
  it("a Slack-shaped and a Discord-shaped receiver, each in its own format, through the queue", async () => {
    const slack = await receiver();
    const discord = await receiver(() => ({ status: 204 }));
    const other = await receiver();
    const { t, ann } = await tenantWithAlerts([
      { kind: "slack", on: ["pending"], receiver: slack },
      { kind: "discord", on: ["pending", "reported"], receiver: discord },
      { kind: "slack", on: ["reported"], receiver: other },
    ]);
    const c = await ann.post("/api/v1/discussions/launch/comments", { body: "Hello <!channel> @everyone *bold*" });
    expect(c.body.status).toBe("pending");
    // queued in the comment's own transaction, one per alert that listens to pending
    const jobs = await prisma().webhookDelivery.findMany({ where: { tenantId: t.tenantId } });
    expect(jobs.map((j) => [j.kind, j.status, j.endpointId, j.eventId])).toEqual([
      ["alert", "pending", null, null],
      ["alert", "pending", null, null],
    ]);
    expect(jobs[0]!.message).toMatchObject({ trigger: "pending", commentId: c.body.id });
    await worker().runOnce();
    expect([slack.requests.length, discord.requests.length, other.requests.length]).toEqual([1, 1, 0]);

    const s = slack.requests[0]!;
    expect(s.method).toBe("POST");
    expect(s.path).toBe("/hook/hooks/slack/SECRET-PATH-slack");
    expect(s.headers["content-type"]).toBe("application/json");
    expect(s.json.text).toContain("waiting for review");
    expect(s.json.blocks.map((b: any) => b.type)).toEqual(["header", "section", "section", "section", "context", "actions"]);
    const sText = JSON.stringify(s.json.blocks);
    expect(sText).toContain("Ann *Reader*");
    expect(sText).toContain("<https://news.example/launch|Launch &lt;day&gt;>");
    expect(sText).toContain("&lt;!channel&gt;"); // no channel ping from a reader's text
    expect(sText).toContain(c.body.id);
    expect(sText).toContain("pre-moderation");
    const sl = slackLinks(s.json);
    expect(sl.approve).toMatch(new RegExp(`^${server.url}/moderate/v1/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
    expect(sl.reject).not.toBe(sl.approve);

    const d = discord.requests[0]!;
    expect(d.path).toBe("/hook/hooks/discord/SECRET-PATH-discord");
    expect(d.json.allowed_mentions).toEqual({ parse: [] });
    expect(d.json.embeds).toHaveLength(1);
    const embed = d.json.embeds[0];
    expect(embed.title).toContain("waiting for review");
    expect(embed.description).toContain("\\*bold\\*");
    expect(embed.fields.map((f: any) => f.name)).toEqual(["Reader", "Discussion", "Reason", "Moderate"]);
    expect(embed.fields[1].value).toBe("[Launch \\<day\\>](https://news.example/launch)"); // Discord's markup escaped
    expect(embed.footer.text).toContain(c.body.id);
    const dl = discordLinks(d.json);
    expect(dl.approve).not.toBe(sl.approve); // each alert its own links
    expect((await prisma().webhookDelivery.findMany({ where: { tenantId: t.tenantId } })).map((j) => j.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);
  });

  it("every text a reader or the tenant wrote reaches the chats escaped for each (as the receivers got it)", async () => {
    const hostile = "<!here> <http://evil.example|Official> <@U123> @everyone & [x](http://evil.example)";
    const slackSafe = "&lt;!here&gt; &lt;http://evil.example|Official&gt; &lt;@U123&gt; @everyone &amp; [x](http://evil.example)";
    const discordSafe = "\\<!here\\> \\<http\\://evil.example\\|Official\\> \\<\\@U123\\> \\@everyone & \\[x\\]\\(http\\://evil.example\\)";
    const hook = await receiver(() => ({ status: 200, body: { decision: "hold", reason: `Hook ${hostile}` } }));
    const slack = await receiver();
    const discord = await receiver(() => ({ status: 204 }));
    const t = await createTestTenant(server, `Site ${hostile}`);
    const set = await t.api.patch("/api/v1/settings", {
      safety: { hook: { url: `${hook.url}/check` } },
      alerts: [
        { kind: "slack", on: ["hook_hold"], url: `${slack.url}/hooks/slack` },
        { kind: "discord", on: ["hook_hold"], url: `${discord.url}/hooks/discord` },
      ],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    await t.api.put("/api/v1/discussions/hostile", { title: `Title ${hostile}`, url: "https://news.example/a?b=1&c=(2)|x" });
    const mallory = await t.reader("mallory", { name: `Name ${hostile}` });
    const c = await mallory.post("/api/v1/discussions/hostile/comments", { body: `Body ${hostile}` });
    expect(c.body.status).toBe("pending");
    await worker().runOnce();
    expect([slack.requests.length, discord.requests.length]).toEqual([1, 1]);

    const s = slack.requests[0]!.json;
    expect(s.text).toBe(`The moderation hook held a comment: Name ${slackSafe} in Title ${slackSafe}`);
    const mrkdwn = JSON.stringify(s.blocks)
      .match(/\{"type":"mrkdwn"[^}]*\}/g)!
      .map((o: string) => JSON.parse(o) as { text: string; verbatim: boolean });
    expect(mrkdwn.every((o) => o.verbatim)).toBe(true);
    expect(mrkdwn.map((o) => o.text)).toEqual([
      `*Reader*\nName ${slackSafe} (\`mallory\`)`,
      `*Discussion*\n<https://news.example/a?b=1&amp;c=(2)%7Cx|Title ${slackSafe}>`,
      `*Reason*\nThe moderation hook held it: Hook ${slackSafe}`,
      `>Body ${slackSafe}`,
      `Comment \`${c.body.id}\` · Site ${slackSafe}`,
    ]);
    expect(JSON.stringify(s)).not.toContain("<!here>");

    const d = discord.requests[0]!.json;
    expect(d.allowed_mentions).toEqual({ parse: [] });
    const embed = d.embeds[0];
    expect(embed.description).toBe(`Body ${discordSafe}`);
    expect(embed.fields.map((f: any) => f.value).slice(0, 3)).toEqual([
      `Name ${discordSafe} (mallory)`,
      `[Title ${discordSafe}](https://news.example/a?b=1&c=%282%29|x)`,
      `The moderation hook held it\\: Hook ${discordSafe}`,
    ]);
    expect(embed.footer.text).toBe(`Comment ${c.body.id} · Site ${hostile}`); // plain text in Discord: no markdown, no mentions
    expect(d.content).toBe("The moderation hook held a comment");
  });

  it("a hold by the moderation hook is hook_hold, a report at the threshold is reported", async () => {
    const hook = await receiver(() => ({ status: 200, body: { decision: "hold", reason: "looks odd" } }));
    const onHook = await receiver();
    const onPending = await receiver();
    const onReported = await receiver(() => ({ status: 204 }));
    const { t, ann } = await tenantWithAlerts(
      [
        { kind: "slack", on: ["hook_hold"], receiver: onHook },
        { kind: "slack", on: ["pending"], receiver: onPending },
        { kind: "discord", on: ["reported"], receiver: onReported },
      ],
      { moderation: "post", safety: { hook: { url: `${hook.url}/check` }, reportThreshold: 2 } },
    );
    const held = await ann.post("/api/v1/discussions/launch/comments", { body: "held by the hook" });
    expect([held.body.status, hook.requests.length]).toEqual(["pending", 1]);
    await worker().runOnce();
    expect([onHook.requests.length, onPending.requests.length]).toEqual([1, 0]);
    expect(JSON.stringify(onHook.requests[0]!.json)).toContain("The moderation hook held it: looks odd");

    await t.api.patch("/api/v1/settings", { safety: { hook: null } });
    const shown = await ann.post("/api/v1/discussions/launch/comments", { body: "published" });
    expect(shown.body.status).toBe("approved");
    await (await t.reader("bob")).post(`/api/v1/comments/${shown.body.id}/reports`, { reason: "spam" });
    await worker().runOnce();
    expect(onReported.requests).toHaveLength(0); // one of two reports
    await (await t.reader("cy")).post(`/api/v1/comments/${shown.body.id}/reports`, { reason: "abuse" });
    await (await t.reader("di")).post(`/api/v1/comments/${shown.body.id}/reports`, { reason: "abuse" });
    await worker().runOnce();
    expect(onReported.requests).toHaveLength(1); // at the threshold, once
    const embed = onReported.requests[0]!.json.embeds[0];
    expect(embed.title).toBe("Readers reported a comment");
    expect(embed.fields[2].value).toContain("Reported by 2 readers");
  });

  it("a failing receiver is retried with the tenant's backoff, the same links each time", async () => {
    const flaky = await receiver((n) => (n < 3 ? { status: 503 } : { status: 200, body: "ok" }));
    const { t, ann } = await tenantWithAlerts([{ kind: "slack", on: ["pending"], receiver: flaky }], {
      delivery: { backoffBaseMs: 1_000, maxAttempts: 5 },
    });
    await ann.post("/api/v1/discussions/launch/comments", { body: "retry me" });
    await worker().runOnce();
    const job = () => prisma().webhookDelivery.findFirstOrThrow({ where: { tenantId: t.tenantId } });
    expect(flaky.requests).toHaveLength(1);
    expect(await job()).toMatchObject({ status: "pending", attempts: 1, lastError: "HTTP 503" });
    await worker().runOnce();
    expect(flaky.requests).toHaveLength(1); // not due before its backoff
    clock.advance(1_600); // base × 2^0, at most 50 % jitter
    await worker().runOnce();
    expect(flaky.requests).toHaveLength(2);
    expect(await job()).toMatchObject({ status: "pending", attempts: 2 });
    clock.advance(3_100);
    await worker().runOnce();
    expect(flaky.requests).toHaveLength(3);
    expect(await job()).toMatchObject({ status: "succeeded", attempts: 3, lastError: null });
    expect(new Set(flaky.requests.map((r) => slackLinks(r.json).approve)).size).toBe(1);
  });

  it("an alert removed before its message went sends nothing", async () => {
    const slack = await receiver();
    const { t, ann } = await tenantWithAlerts([{ kind: "slack", on: ["pending"], receiver: slack }]);
    await ann.post("/api/v1/discussions/launch/comments", { body: "nobody listens" });
    await t.api.patch("/api/v1/settings", { alerts: [] });
    await worker().runOnce();
    expect(slack.requests).toHaveLength(0);
    expect(await prisma().webhookDelivery.findFirstOrThrow({ where: { tenantId: t.tenantId } })).toMatchObject({
      status: "failed",
      lastError: "the alert was removed from the settings",
    });
  });
});

describe("an alert's links are one decision, made once", () => {
  /** A tenant alerting a Slack- and a Discord-shaped receiver; `n` held comments by ann, their alerts sent. */
  async function alerted(n = 1) {
    const slack = await receiver();
    const discord = await receiver(() => ({ status: 204 }));
    const { t, ann } = await tenantWithAlerts([
      { kind: "slack", on: ["pending"], receiver: slack },
      { kind: "discord", on: ["pending"], receiver: discord },
    ]);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await ann.post("/api/v1/discussions/launch/comments", { body: `held ${i}` })).body.id);
    await worker().runOnce();
    const of = (r: Receiver, id: string) => r.requests.find((q) => JSON.stringify(q.json).includes(id))!.json;
    return {
      t,
      ann,
      ids,
      slackOf: (i = 0) => slackLinks(of(slack, ids[i]!)),
      discordOf: (i = 0) => discordLinks(of(discord, ids[i]!)),
    };
  }
  const refused = (t: TestTenant) => t.admin.get("/api/v1/audit?action=alert_link.refused").then((r) => r.body.items as any[]);

  it("after a moderator approved the comment, its stale Reject link changes nothing and says who decided", async () => {
    const { t, ids, slackOf } = await alerted();
    expect((await t.api.post(`/api/v1/comments/${ids[0]}/approve`)).status).toBe(200);
    const events = await prisma().event.count({ where: { tenantId: t.tenantId } });

    const opened = await page(slackOf().reject); // the page says so before any button
    expect(opened.status).toBe(409);
    expect(opened.html).toContain("Already decided");
    expect(opened.html).not.toContain("<form");
    expect(opened.html).toContain("already approved by a moderator&#39;s API key (bootstrap)");
    expect(opened.html).toContain("alert_link_decided");

    const used = await page(slackOf().reject, "POST", "");
    expect(used.status).toBe(409);
    expect(used.html).toContain("already approved by a moderator&#39;s API key (bootstrap)");
    expect(used.html).toContain("changed nothing");
    expect(await statusOf(t, ids[0]!)).toBe("approved");
    expect(await prisma().event.count({ where: { tenantId: t.tenantId } })).toBe(events);
    // audited as the link's use that changed nothing
    const [entry] = await refused(t);
    expect(entry).toMatchObject({
      actor: { kind: "alert_link", label: "Slack alert" },
      action: "alert_link.refused",
      resource: { type: "comment", id: ids[0] },
      details: { action: "reject", code: "alert_link_decided", status: "approved", decidedBy: "a moderator's API key (bootstrap)" },
    });
    expect((await t.admin.get("/api/v1/audit?action=comment.reject")).body.items).toHaveLength(0);
    // that use spent the alert's decision: its Approve link now says the links were used
    const approve = await page(slackOf().approve, "POST", "");
    expect(approve.status).toBe(410);
    expect(approve.html).toContain("alert_link_used");
    expect(approve.html).toContain("one decision, made once");
    expect(await statusOf(t, ids[0]!)).toBe("approved");
  });

  it("using Approve spends Reject: the paired link changes nothing and names the link that decided", async () => {
    const { t, ids, slackOf, discordOf } = await alerted();
    expect((await page(slackOf().approve, "POST", "")).html).toContain("Comment approved");
    expect(await statusOf(t, ids[0]!)).toBe("approved");
    for (const method of ["GET", "POST"] as const) {
      clock.advance(1); // the audit log's order is its entries' times
      const reject = await page(slackOf().reject, method, method === "POST" ? "" : undefined);
      expect(reject.status).toBe(410);
      expect(reject.html).toContain("alert_link_used");
      expect(reject.html).toContain("already approved by this alert&#39;s Approve link");
    }
    // the same link again: "by this link"
    clock.advance(1);
    expect((await page(slackOf().approve, "POST", "")).html).toContain("already approved by this link");
    // the other alert's links (Discord) about the same comment: decided since, by the Slack alert's link
    clock.advance(1);
    const other = await page(discordOf().reject, "POST", "");
    expect(other.status).toBe(409);
    expect(other.html).toContain("already approved by another Slack alert&#39;s Approve link");
    expect(await statusOf(t, ids[0]!)).toBe("approved");
    expect((await t.admin.get("/api/v1/audit?action=comment.")).body.items).toHaveLength(1); // the one approval
    expect((await refused(t)).map((e) => [e.actor.label, e.details.action, e.details.code])).toEqual([
      ["Discord alert", "reject", "alert_link_decided"],
      ["Slack alert", "approve", "alert_link_used"],
      ["Slack alert", "reject", "alert_link_used"],
    ]);
  });

  it("the author's edit or a deletion since the alert: its links change nothing and say so", async () => {
    const { t, ids, slackOf, discordOf } = await alerted(3);
    // the author with a key that cannot moderate (a moderator's deletion is another decision)
    const ann = t.as({ key: (await keyWith(t, [])).key, identity: await t.identity("ann", { name: "Ann *Reader*" }) });
    expect((await ann.patch(`/api/v1/comments/${ids[0]}`, { body: "edited after the alert" })).status).toBe(200);
    const edited = await page(slackOf(0).approve, "POST", "");
    expect([edited.status, edited.html.includes("edited by its author")]).toEqual([409, true]);
    expect(await statusOf(t, ids[0]!)).toBe("pending");

    expect((await ann.del(`/api/v1/comments/${ids[1]}`)).status).toBe(204);
    const byAuthor = await page(slackOf(1).approve, "POST", "");
    expect([byAuthor.status, byAuthor.html.includes("deleted by its author")], byAuthor.html).toEqual([409, true]);

    expect((await t.api.del(`/api/v1/comments/${ids[2]}`)).status).toBe(204);
    const byModerator = await page(discordOf(2).reject);
    expect([byModerator.status, byModerator.html.includes("deleted by a moderator&#39;s API key (bootstrap)")]).toEqual([409, true]);
  });

  it("an Approve and a Reject used at once: exactly one acts, the other changes nothing", async () => {
    const { t, ids, slackOf } = await alerted(4);
    for (let i = 0; i < ids.length; i++) {
      const { approve, reject } = slackOf(i);
      const [a, r] = await Promise.all([page(approve, "POST", ""), page(reject, "POST", "")]);
      const statuses = [a.status, r.status].sort();
      expect(statuses, `${a.html}\n${r.html}`).toEqual([200, 410]);
      expect(await statusOf(t, ids[i]!)).toBe(a.status === 200 ? "approved" : "rejected");
    }
    const decisions = (await t.admin.get("/api/v1/audit?action=comment.")).body.items;
    expect(decisions).toHaveLength(4);
  });

  it("a refused action (an archived discussion) spends nothing: the links still decide later", async () => {
    const { t, ids, slackOf } = await alerted();
    const tokens = () => prisma().signInToken.findMany({ where: { tenantId: t.tenantId, kind: "alert_link" } });
    expect((await t.api.post("/api/v1/discussions/launch/archive")).status).toBe(200);
    const res = await page(slackOf().approve, "POST", "");
    expect([res.status, res.html.includes("discussion_archived")]).toEqual([409, true]);
    expect((await tokens()).every((k) => k.usedAt === null)).toBe(true);
    expect(await statusOf(t, ids[0]!)).toBe("pending");
  });
});

describe("the Approve and Reject links", () => {
  let t: TestTenant;
  let ann: TestTenant["api"];
  let slack: Receiver;
  let discord: Receiver;
  const comments: string[] = [];

  beforeAll(async () => {
    slack = await receiver();
    discord = await receiver(() => ({ status: 204 }));
    ({ t, ann } = await tenantWithAlerts([
      { kind: "slack", on: ["pending"], receiver: slack },
      { kind: "discord", on: ["pending"], receiver: discord },
    ]));
    for (const body of ["first", "second", "third"])
      comments.push((await ann.post("/api/v1/discussions/launch/comments", { body })).body.id);
    await worker().runOnce();
    expect([slack.requests.length, discord.requests.length]).toEqual([3, 3]);
  });

  /** The message each receiver got about comment `i` (all were queued at the same instant: any order). */
  const messageOf = (r: Receiver, i: number) => r.requests.find((q) => JSON.stringify(q.json).includes(comments[i]!))!.json;
  const linksOf = (i: number) => slackLinks(messageOf(slack, i));
  const eventCount = () => prisma().event.count({ where: { tenantId: t.tenantId } });

  it("GET shows the comment and a form, and changes nothing", async () => {
    const before = await eventCount();
    for (let i = 0; i < 2; i++) {
      const got = await page(linksOf(0).approve);
      expect(got.status).toBe(200);
      expect(got.headers.get("content-type")).toContain("text/html");
      expect(got.headers.get("content-security-policy")).toContain("form-action 'self'");
      expect(got.headers.get("cache-control")).toBe("no-store");
      expect(got.html).toContain("Approve this comment?");
      expect(got.html).toContain('<form method="post"><button type="submit">Approve comment</button></form>');
      expect(got.html).toContain("Ann *Reader*");
      expect(got.html).toContain("Launch &lt;day&gt;");
      expect(got.html).toContain("Status now: <strong>pending</strong>");
    }
    expect(await statusOf(t, comments[0]!)).toBe("pending");
    expect(await eventCount()).toBe(before);
  });

  it("POST approves once, audited as the link; a second POST or an altered token changes nothing", async () => {
    const link = linksOf(0).approve;
    const done = await page(link, "POST", "");
    expect(done.status).toBe(200);
    expect(done.html).toContain("Comment approved");
    expect(await statusOf(t, comments[0]!)).toBe("approved");
    const audit = (await t.admin.get("/api/v1/audit?action=comment.approve")).body.items;
    expect(audit).toHaveLength(1);
    const jobs = await prisma().webhookDelivery.findMany({ where: { tenantId: t.tenantId } });
    expect(audit[0]).toMatchObject({
      actor: { kind: "alert_link", type: "alert_link", label: "Slack alert" },
      action: "comment.approve",
      resource: { type: "comment", id: comments[0] },
    });
    expect(jobs.map((j) => j.id)).toContain(audit[0].actor.id);

    const before = await eventCount();
    const again = await page(link, "POST", "");
    expect(again.status).toBe(410);
    expect(again.html).toContain("alert_link_used");
    const [token] = link.split("/").slice(-1);
    const altered = `${link.slice(0, -token!.length)}${token!.slice(0, -1)}${token!.endsWith("A") ? "B" : "A"}`;
    for (const method of ["GET", "POST"] as const) {
      const bad = await page(altered, method, method === "POST" ? "" : undefined);
      expect(bad.status).toBe(404);
      expect(bad.html).toContain("alert_link_unknown");
    }
    expect((await page(`${server.url}/moderate/v1/not-a-token`)).status).toBe(404);
    expect(await eventCount()).toBe(before);
    expect((await t.admin.get("/api/v1/audit?action=comment.")).body.items).toHaveLength(1);
  });

  it("a link for approve cannot reject: the action is the link's, whatever the form says", async () => {
    const approve = discordLinks(messageOf(discord, 1)).approve;
    const res = await page(approve, "POST", "action=reject");
    expect(res.status).toBe(200);
    expect(await statusOf(t, comments[1]!)).toBe("approved");
    const audit = (await t.admin.get("/api/v1/audit?action=comment.approve")).body.items;
    expect(audit.find((e: any) => e.resource.id === comments[1]).actor).toMatchObject({ kind: "alert_link", label: "Discord alert" });
  });

  it("a link past its 7 days changes nothing", async () => {
    const { reject } = linksOf(2);
    clock.advance(7 * 86_400_000 + 60_000);
    for (const method of ["GET", "POST"] as const) {
      const res = await page(reject, method, method === "POST" ? "" : undefined);
      expect(res.status).toBe(410);
      expect(res.html).toContain("alert_link_expired");
    }
    expect(await statusOf(t, comments[2]!)).toBe("pending");
  });

  it("sent alerts' jobs go after retention.deliveryLogDays", async () => {
    const jobs = () => prisma().webhookDelivery.count({ where: { tenantId: t.tenantId, kind: "alert" } });
    expect(await jobs()).toBe(6);
    await server.app.runtime.retention.runOnce();
    expect(await jobs()).toBe(6); // 7 days old: kept
    clock.advance(24 * 86_400_000);
    const r = await server.app.runtime.retention.runOnce();
    expect(r!.alerts).toBeGreaterThanOrEqual(6);
    expect(await jobs()).toBe(0);
  });
});
