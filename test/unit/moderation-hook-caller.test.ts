// The moderation hook's caller (src/modules/moderation-hook/caller.ts, over the signed calls of
// src/outbound/signed-calls.ts) on a stub HTTP client and a manual clock: how answers are
// read, and the breaker — open after breakerThreshold failures, one trial at a time after the
// cooldown, closed by a decision, per tenant and url, never disabled.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/lib/clock.js";
import { DeliveryError, type WebhookHttpClient, type WebhookRequest, type WebhookResponse } from "../../src/outbound/http-client.js";
import { createSignedCalls } from "../../src/outbound/signed-calls.js";
import { createModerationHookCaller, parseHookAnswer } from "../../src/modules/moderation-hook/caller.js";

type Answer = WebhookResponse | DeliveryError | Promise<WebhookResponse>;

function stub() {
  const sent: WebhookRequest[] = [];
  let next: () => Answer = () => ({ statusCode: 200, headers: {}, body: '{"decision":"approve"}', durationMs: 1 });
  const http: Pick<WebhookHttpClient, "post"> = {
    async post(req) {
      sent.push(req);
      const a = next();
      if (a instanceof DeliveryError) throw a;
      return a;
    },
  };
  return { http, sent, answer: (f: () => Answer) => (next = f) };
}

const call = (tenantId = "ten_a", url = "https://hook.example/check") => ({
  tenantId,
  url,
  secret: "whsec_test",
  timeoutMs: 1000,
  body: '{"type":"comment.check"}',
  breaker: { breakerThreshold: 2, breakerCooldownMs: 1000 },
});

describe("parseHookAnswer", () => {
  it("takes a 2xx JSON decision with an optional string reason, cut to 500 characters", () => {
    expect(parseHookAnswer(200, '{"decision":"hold","reason":"spam"}')).toEqual({ decision: "hold", reason: "spam" });
    expect(parseHookAnswer(204, '{"decision":"approve","reason":7}')).toEqual({ decision: "approve", reason: null });
    expect(
      (parseHookAnswer(200, JSON.stringify({ decision: "reject", reason: "x".repeat(600) })) as { reason: string }).reason,
    ).toHaveLength(500);
    expect(parseHookAnswer(500, '{"decision":"approve"}')).toBe("hook answered HTTP 500");
    expect(parseHookAnswer(302, "")).toBe("hook answered HTTP 302");
    expect(parseHookAnswer(200, "approve")).toBe("hook's answer is not JSON");
    expect(parseHookAnswer(200, '{"decision":"APPROVE"}')).toMatch(/no decision/);
    expect(parseHookAnswer(200, "null")).toMatch(/no decision/);
  });
});

describe("the caller", () => {
  it("signs each request the Standard Webhooks way with a new webhook-id", async () => {
    const s = stub();
    const caller = createModerationHookCaller(createSignedCalls({ http: s.http, clock: manualClock() }));
    await caller.check(call());
    await caller.send(call());
    expect(s.sent.map((r) => r.headers["webhook-id"])).toEqual([expect.stringMatching(/^chk_/), expect.stringMatching(/^chk_/)]);
    expect(s.sent[0]!.headers["webhook-id"]).not.toBe(s.sent[1]!.headers["webhook-id"]);
    expect(s.sent[0]!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(s.sent[0]!.headers["webhook-timestamp"]).toBe(String(Math.floor(Date.parse("2026-01-01T00:00:00.000Z") / 1000)));
    expect(s.sent[0]!.timeoutMs).toBe(1000);
  });

  it("opens after breakerThreshold failures, lets one trial through after the cooldown, closes on a decision", async () => {
    const s = stub();
    const clock = manualClock();
    const outcomes: string[] = [];
    const caller = createModerationHookCaller(createSignedCalls({ http: s.http, clock }), (o) => outcomes.push(o));
    s.answer(() => new DeliveryError("timeout", "slow"));
    expect((await caller.check(call())).kind).toBe("timeout");
    s.answer(() => ({ statusCode: 500, headers: {}, body: "", durationMs: 1 }));
    expect((await caller.check(call())).kind).toBe("error");
    expect(caller.breakerState("ten_a", "https://hook.example/check").state).toBe("circuit_open");
    expect(await caller.check(call())).toMatchObject({
      kind: "breaker_open",
      error: "the hook's circuit is open until 2026-01-01T00:00:01.000Z",
    });
    expect(s.sent).toHaveLength(2);
    // another tenant, or another url, has a breaker of its own
    s.answer(() => ({ statusCode: 200, headers: {}, body: '{"decision":"hold"}', durationMs: 1 }));
    expect((await caller.check(call("ten_b"))).kind).toBe("decision");
    expect((await caller.check(call("ten_a", "https://other.example/check"))).kind).toBe("decision");
    // after the cooldown: one trial in flight, the others still skip
    clock.advance(1000);
    let release!: (r: WebhookResponse) => void;
    s.answer(() => new Promise<WebhookResponse>((ok) => (release = ok)));
    const trial = caller.check(call());
    expect((await caller.check(call())).kind).toBe("breaker_open");
    release({ statusCode: 200, headers: {}, body: '{"decision":"approve"}', durationMs: 1 });
    expect(await trial).toMatchObject({ kind: "decision", decision: "approve" });
    expect(caller.breakerState("ten_a", "https://hook.example/check")).toEqual({
      state: "active",
      consecutiveFailures: 0,
      openedUntil: null,
    });
    expect(outcomes).toEqual(["timeout", "error", "breaker_open", "hold", "hold", "breaker_open", "approve"]);
  });

  it("a failed trial re-opens it for another cooldown; many failures never disable the hook", async () => {
    const s = stub();
    const clock = manualClock();
    const caller = createModerationHookCaller(createSignedCalls({ http: s.http, clock }));
    s.answer(() => new DeliveryError("network", "ECONNREFUSED"));
    for (let i = 0; i < 100; i++) {
      await caller.check(call());
      clock.advance(1000);
    }
    const state = caller.breakerState("ten_a", "https://hook.example/check");
    expect(state.state).toBe("circuit_open");
    expect(state.consecutiveFailures).toBe(100);
    // send (the console's Send test) goes past an open breaker and leaves it as it is
    s.answer(() => ({ statusCode: 200, headers: {}, body: '{"decision":"approve"}', durationMs: 1 }));
    expect((await caller.send(call())).kind).toBe("decision");
    expect(caller.breakerState("ten_a", "https://hook.example/check")).toEqual(state);
  });
});
