// Screening as one ordered list (src/modules/comments/screening.ts): its steps' order for a post and
// an edit, which sources each step asks and when it does not, and what each decides from what the
// steps before it decided — here on sources of the test's own (the rules, the hook and Akismet as
// answers); the same steps against the real rules, hook, Akismet and database are the safety tests'
// (safety-rules, safety-hook, safety-akismet, trust-and-shadow-bans).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AkismetHold } from "../../src/modules/akismet/check.js";
import {
  editHandOver,
  postHandOver,
  screen,
  SCREENING,
  SCREENING_FUNCTION,
  stepsOf,
  type ScreeningAction,
  type ScreeningSources,
} from "../../src/modules/comments/screening.js";
import type { HookJudgement } from "../../src/modules/moderation-hook/check.js";
import type { RuleVerdict } from "../../src/tenancy/safety-rules.js";

const banned: RuleVerdict = { status: "rejected", reason: { source: "rule", rule: "bannedWords", words: ["spam"] } };
const suspect: RuleVerdict = { status: "pending", reason: { source: "rule", rule: "suspectWords", words: ["maybe"] } };
const hook = (decision: HookJudgement["decision"]): HookJudgement => ({ decision, reason: { source: "hook", decision } });
const akismet = (status: AkismetHold["status"]): AkismetHold => ({ status, reason: { source: "akismet" } });

/** Sources answering as told, recording which were asked, in order. */
function sources(
  o: {
    rules?: RuleVerdict | null;
    hook?: HookJudgement | null;
    akismet?: AkismetHold | null;
    premoderation?: boolean;
    guestHeld?: boolean;
  } = {},
) {
  const asked: string[] = [];
  const from: ScreeningSources = {
    rules: () => (asked.push("rules"), o.rules ?? null),
    hook: async () => (asked.push("hook"), o.hook ?? null),
    akismet: async () => (asked.push("akismet"), o.akismet ?? null),
    premoderation: o.premoderation ?? false,
    guestHeld: o.guestHeld ?? false,
  };
  return { from, asked };
}

async function run(action: ScreeningAction, o: Parameters<typeof sources>[0] = {}) {
  const { from, asked } = sources(o);
  return { s: await screen(action, from), asked };
}

describe("the list", () => {
  it("names each step once, in order; a post's and an edit's steps are the list's in the list's order", () => {
    expect(stepsOf("post").map((s) => `${s.name} (${s.by})`)).toEqual([
      "wordRules (here)",
      "moderationHook (here)",
      "akismet (here)",
      "preModeration (here)",
      "trust (database)",
      "shadowBan (database)",
      "newReaderHold (database)",
    ]);
    expect(stepsOf("edit").map((s) => `${s.name} (${s.by})`)).toEqual([
      "wordRules (here)",
      "moderationHook (here)",
      "trust (database)",
      "editNeverLoosens (database)",
    ]);
    expect(new Set(SCREENING.map((s) => s.name)).size).toBe(SCREENING.length);
  });

  it("decides here first, then hands over to the database: no step decided here follows one the database decides", () => {
    const firstDatabase = SCREENING.findIndex((s) => s.by === "database");
    expect(firstDatabase).toBeGreaterThan(0);
    expect(SCREENING.slice(firstDatabase).every((s) => s.by === "database")).toBe(true);
  });

  it("says at each database step which of the write's arguments hand it over", () => {
    const handed = Object.fromEntries(SCREENING.flatMap((s) => (s.by === "database" ? [[s.name, s.handedOver]] : [])));
    expect(handed).toEqual({
      trust: ["trustedStatus", "trustedVerdict", "trustedReason"],
      shadowBan: [],
      newReaderHold: ["hold"],
      editNeverLoosens: ["verdict", "reason"],
    });
    // and those are what the hand-overs give the write functions
    const { hold, trustedStatus, trustedReason } = postHandOver({ action: "post", verdict: null, trusted: null, status: "approved" }, 3);
    expect({ hold, trustedStatus, trustedReason }).toEqual({ hold: 3, trustedStatus: "approved", trustedReason: null });
    expect(Object.keys(editHandOver({ action: "edit", verdict: null, trusted: null, status: null })).sort()).toEqual(
      ["reason", "trustedReason", "trustedVerdict", "verdict"].sort(),
    );
  });
});

/** A function's definition in prisma/sql (the writes' 20-comments.sql, safety's 60-safety.sql), from its CREATE to its END. */
function definitionOf(name: string): string {
  const sql = ["20-comments.sql", "60-safety.sql"]
    .map((f) => readFileSync(new URL(`../../prisma/sql/${f}`, import.meta.url), "utf8"))
    .join("\n");
  const start = sql.indexOf(`CREATE OR REPLACE FUNCTION public.${name}(`);
  expect(start, name).toBeGreaterThanOrEqual(0);
  return sql.slice(start, sql.indexOf("END $function$;", start));
}

describe("the steps the database decides", () => {
  it("are ONE function's, which numbers and names them as the list does, each for the list's actions", () => {
    const fn = definitionOf(SCREENING_FUNCTION);
    const marked = [...fn.matchAll(/^\s*-- (\d+)\. (\w+) \(([a-z, ]+)\):/gm)].map(([, n, name, on]) => `${n}. ${name} (${on})`);
    const listed = SCREENING.flatMap((s, i) => (s.by === "database" ? [`${i + 1}. ${s.name} (${s.on.join(", ")})`] : []));
    expect(listed).toEqual(["5. trust (post, edit)", "6. shadowBan (post)", "7. newReaderHold (post)", "8. editNeverLoosens (edit)"]);
    expect(marked).toEqual(listed);
    expect(SCREENING.every((s) => s.by === "here" || s.fn === SCREENING_FUNCTION)).toBe(true);
  });

  it("are called by the post and the edit alike, once each, and decided nowhere else in them", () => {
    for (const [write, action] of [
      ["eng_post_comment", "post"],
      ["eng_edit_comment", "edit"],
    ] as const) {
      const body = definitionOf(write);
      const calls = [...body.matchAll(new RegExp(`${SCREENING_FUNCTION}\\(p_tenant, p_reader, '(\\w+)'`, "g"))].map((m) => m[1]);
      expect(calls, write).toEqual([action]);
      // what the steps decide (their reasons, a trusted reader's verdict) is written only in the function
      for (const decided of ["'source', 'trust'", "'source', 'shadow_ban'", "'source', 'new_reader'", ":= p_trusted_"]) {
        expect(body, `${write}: ${decided}`).not.toContain(decided);
      }
    }
  });
});

describe("a post", () => {
  it("asks the rules, then the hook, then Akismet, and is approved when nothing objects", async () => {
    const { s, asked } = await run("post", { hook: hook("approve") });
    expect(asked).toEqual(["rules", "hook", "akismet"]);
    expect(s).toMatchObject({ verdict: null, trusted: null, status: "approved" });
    expect(postHandOver(s, 0)).toEqual({ status: "approved", reason: null, trustedStatus: "approved", trustedReason: null, hold: 0 });
  });

  it("banned words reject, for a trusted reader too, and nothing after the rules is asked", async () => {
    const { s, asked } = await run("post", { rules: banned, hook: hook("approve"), akismet: akismet("pending") });
    expect(asked).toEqual(["rules"]);
    expect(s).toMatchObject({ verdict: banned, trusted: banned, status: "rejected" });
    const handed = postHandOver(s, 2);
    expect(handed).toMatchObject({ status: "rejected", trustedStatus: "rejected", hold: 2 });
    expect(JSON.parse(String(handed.reason))).toEqual(banned.reason);
    expect(JSON.parse(String(handed.trustedReason))).toEqual(banned.reason);
  });

  it("a suspect word holds any reader's comment but not a trusted reader's; the hook's approve or hold keeps the rule's reason", async () => {
    for (const decision of ["approve", "hold"] as const) {
      const { s } = await run("post", { rules: suspect, hook: hook(decision) });
      expect(s).toMatchObject({ verdict: suspect, trusted: null, status: "pending" });
      expect(postHandOver(s, 0)).toMatchObject({ trustedStatus: "approved", trustedReason: null });
    }
  });

  it("the hook's reject rejects over a rule's hold, and Akismet is then not asked", async () => {
    const { s, asked } = await run("post", { rules: suspect, hook: hook("reject"), akismet: akismet("rejected") });
    expect(asked).toEqual(["rules", "hook"]);
    expect(s.verdict).toEqual({ status: "rejected", reason: hook("reject").reason });
    expect(s.status).toBe("rejected");
  });

  it("the hook's hold holds with its reason; its approve under pre-moderation holds with its reason too", async () => {
    expect((await run("post", { hook: hook("hold") })).s.verdict).toEqual({ status: "pending", reason: hook("hold").reason });
    const premod = await run("post", { hook: hook("approve"), premoderation: true });
    expect(premod.s.verdict).toEqual({ status: "pending", reason: hook("approve").reason });
    expect(premod.s.status).toBe("pending");
    // a guest's hold is pre-moderation's own, without the hook's reason
    const guest = await run("post", { hook: hook("approve"), guestHeld: true });
    expect(guest.s).toMatchObject({ verdict: null, status: "pending" });
  });

  it("Akismet's spam holds unless a step before held it (that reason stays); its discard rejects over a hold", async () => {
    expect((await run("post", { akismet: akismet("pending") })).s).toMatchObject({ verdict: akismet("pending"), status: "pending" });
    expect((await run("post", { hook: hook("hold"), akismet: akismet("pending") })).s.verdict?.reason).toEqual(hook("hold").reason);
    expect((await run("post", { rules: suspect, akismet: akismet("pending") })).s.verdict).toEqual(suspect);
    expect((await run("post", { rules: suspect, akismet: akismet("rejected") })).s.verdict).toEqual(akismet("rejected"));
  });

  it("pre-moderation holds what nothing objected to, without a reason (the database may still give one)", async () => {
    for (const o of [{ premoderation: true }, { guestHeld: true }]) {
      const { s } = await run("post", o);
      expect(s).toMatchObject({ verdict: null, status: "pending" });
      expect(postHandOver(s, 0)).toMatchObject({ status: "pending", reason: null, trustedStatus: "approved" });
    }
    // what objected decides, pre-moderated or not
    expect((await run("post", { rules: banned, premoderation: true })).s.status).toBe("rejected");
  });
});

describe("an edit", () => {
  it("asks the rules and the hook, never Akismet, and pre-moderation does not hold it", async () => {
    const { s, asked } = await run("edit", { hook: hook("approve"), akismet: akismet("rejected"), premoderation: true, guestHeld: true });
    expect(asked).toEqual(["rules", "hook"]);
    expect(s).toMatchObject({ verdict: null, trusted: null, status: null });
    expect(editHandOver(s)).toEqual({ verdict: null, reason: null, trustedVerdict: null, trustedReason: null });
  });

  it("hands over the rules' and the hook's verdicts as a post's", async () => {
    const held = await run("edit", { rules: suspect, hook: hook("reject") });
    expect(editHandOver(held.s)).toMatchObject({ verdict: "rejected", trustedVerdict: null });
    const rejected = await run("edit", { rules: banned });
    expect(rejected.asked).toEqual(["rules"]);
    expect(editHandOver(rejected.s)).toMatchObject({ verdict: "rejected", trustedVerdict: "rejected" });
  });
});
