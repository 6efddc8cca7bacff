// Screening: what decides the status of a new or edited comment, as ONE ordered list of named steps
// (SCREENING below), for a post and an edit alike, read top to bottom:
//
//   1. wordRules        post, edit   here      banned words reject; suspect words, too many links hold
//   2. moderationHook   post, edit   here      the tenant's hook: reject, hold (or approve)
//   3. akismet          post         here      spam holds, spam to discard rejects
//   4. preModeration    post         here      nothing objected: held under pre-moderation, else approved
//   5. trust            post, edit   database  a trusted reader: banned words alone; a premoderated one: held
//   6. shadowBan        post         database  stored rejected, shown to its author as published
//   7. newReaderHold    post         database  a new reader's first comments held
//   8. editNeverLoosens edit         database  an edit's verdict only ever makes the comment stricter
//
// Steps 1 to 4 run here, in order, before the write, each seeing what the steps before it decided.
// Steps 5 to 8 are decided by ONE database function, eng_screen_comment (prisma/sql/60-safety.sql),
// which eng_post_comment and eng_edit_comment both call in the write's own statement, because they
// need the reader's row as it is then (their trust level, a sanction in force, their earlier
// comments) and, for an edit, the comment under the discussion's lock: each says what this list hands
// it (`handedOver`, the write's arguments) and what it decides; the function numbers its steps as this
// list does (checked by test/unit/comment-screening.test.ts). Every step can only make the outcome
// stricter, but trust: a trusted reader's comment takes the verdict of banned words alone (contract
// section 21).
//
// Two verdicts go down the list: any reader's (`verdict`) and a trusted reader's (`trusted`); the
// database takes the one the reader's trust level calls for. What a step asks of the world (the
// rules, the hook, Akismet) comes through ScreeningSources, so the list's order and decisions are
// tested alone (test/unit/comment-screening.test.ts), and through the API by the safety tests.
import { tenantIdOf, type RequestContext } from "../../context/request.js";
import { isGuestReader } from "../../auth/reader-sessions.js";
import { jsonText, type DbArgs } from "../../generated/db-functions.js";
import type { RuleVerdict } from "../../tenancy/safety-rules.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import { akismetVerdict, type AkismetHold } from "../akismet/check.js";
import { askHook, type HookJudgement, type HookReason } from "../moderation-hook/check.js";
import type { ScreeningAction, ScreeningSubject } from "./screening-subject.js";

export type { ScreeningAction, ScreeningSubject };

/** Why a step held or rejected a comment (the comment's `moderationReason`). */
export type ScreeningReason = RuleVerdict["reason"] | HookReason | AkismetHold["reason"];

/** The status a step requires of the comment, and why. */
export interface Verdict {
  status: "pending" | "rejected";
  reason: ScreeningReason;
}

/** What the steps decided so far: after the last step decided here, what the write is handed. */
export interface Screened {
  action: ScreeningAction;
  /** any reader's verdict; null while nothing objects */
  verdict: Verdict | null;
  /** a trusted reader's verdict: banned words alone */
  trusted: Verdict | null;
  /** a new comment's status once pre-moderation has spoken (null before it, and for an edit) */
  status: "approved" | "pending" | "rejected" | null;
}

/** What the steps ask outside this list: each asked at most once, and only when its step gets to ask. */
export interface ScreeningSources {
  /** the tenant's body rules on the rendered body (src/tenancy/safety-rules.ts) */
  rules(): RuleVerdict | null;
  /** the tenant's moderation hook (src/modules/moderation-hook/check.ts): null when there is none or nothing to ask */
  hook(): Promise<HookJudgement | null>;
  /** Akismet (src/modules/akismet/check.ts): null when it is off, says ham, does not answer, or is not asked */
  akismet(): Promise<AkismetHold | null>;
  /** the tenant pre-moderates new comments (settings `moderation: "pre"`) */
  premoderation: boolean;
  /** the reader is a guest of the hosted sign-in, held by `signIn.guest.moderation: "pre"` */
  guestHeld: boolean;
}

/** The arguments of the write functions that screening hands over. */
type HandedOver = keyof DbArgs<"eng_post_comment"> | keyof DbArgs<"eng_edit_comment">;

interface Step {
  name: string;
  on: readonly ScreeningAction[];
}
/** A step decided here, before the write: it changes the screening so far. */
export interface StepDecidedHere extends Step {
  by: "here";
  run(s: Screened, from: ScreeningSources): void | Promise<void>;
}
/** A step the database decides in the write's own statement (eng_screen_comment), from what this list hands it. */
export interface StepDecidedByDatabase extends Step {
  by: "database";
  /** the function that decides it, for a post and an edit alike */
  fn: typeof SCREENING_FUNCTION;
  handedOver: readonly HandedOver[];
}
export type ScreeningStep = StepDecidedHere | StepDecidedByDatabase;

/** The one database function deciding steps 5 to 8 (prisma/sql/60-safety.sql), called by eng_post_comment and eng_edit_comment. */
export const SCREENING_FUNCTION = "eng_screen_comment";

const BOTH = ["post", "edit"] as const;
const rejected = (s: Screened) => s.verdict?.status === "rejected";

export const SCREENING: readonly ScreeningStep[] = [
  // 1. Word rules: the tenant's banned words reject; its suspect words, or more links than maxLinks,
  // hold (the body as rendered: src/tenancy/safety-rules.ts). A trusted reader's verdict is the banned
  // words' alone.
  {
    name: "wordRules",
    on: BOTH,
    by: "here",
    run(s, from) {
      const rules = from.rules();
      s.verdict = rules;
      s.trusted = rules?.status === "rejected" ? rules : null;
    },
  },
  // 2. The moderation hook, unless the comment is rejected already: its `reject` rejects (over a
  // rule's hold), its `hold` holds unless a rule held first (the rule's reason stays), and its
  // `approve` of a new comment under pre-moderation holds it with the hook's reason, for the
  // moderator to see. It is not asked, nor told, about a write that will be refused anyway or whose
  // verdict would not count: a banned, suspended, shadow-banned or trusted reader, a discussion not
  // open, an edit its author may no longer make.
  {
    name: "moderationHook",
    on: BOTH,
    by: "here",
    async run(s, from) {
      if (rejected(s)) return;
      const hook = await from.hook();
      if (!hook) return;
      if (hook.decision === "reject") s.verdict = { status: "rejected", reason: hook.reason };
      else if (!s.verdict && (hook.decision === "hold" || (s.action === "post" && from.premoderation))) {
        s.verdict = { status: "pending", reason: hook.reason };
      }
    },
  },
  // 3. Akismet, for a new comment, unless it is rejected already: spam holds (unless a step before
  // held it: that reason stays), spam to discard rejects. Not asked when the hook would not be.
  {
    name: "akismet",
    on: ["post"],
    by: "here",
    async run(s, from) {
      if (rejected(s)) return;
      const akismet = await from.akismet();
      if (akismet && (akismet.status === "rejected" || !s.verdict)) s.verdict = akismet;
    },
  },
  // 4. Pre-moderation, for a new comment: what objected decides its status; when nothing did, it is
  // held if the tenant pre-moderates or the reader is a guest held by signIn.guest.moderation "pre",
  // else approved.
  {
    name: "preModeration",
    on: ["post"],
    by: "here",
    run(s, from) {
      s.status = s.verdict?.status ?? (from.premoderation || from.guestHeld ? "pending" : "approved");
    },
  },
  // From here the database decides (eng_screen_comment), in the write's statement, from the reader's
  // row as it is then.
  // 5. Trust (PUT /readers/{id}/trust): a trusted reader's comment takes the trusted verdict (so it
  // skips suspect words, maxLinks, the hook, Akismet, pre-moderation and the new-reader hold); a
  // premoderated reader's new comment that would be approved is held (reason `{source: "trust"}`).
  { name: "trust", on: BOTH, by: "database", fn: SCREENING_FUNCTION, handedOver: ["trustedStatus", "trustedVerdict", "trustedReason"] },
  // 6. Shadow ban: a shadow-banned reader's new comment is stored rejected (`{source: "shadow_ban"}`),
  // and shown to them alone as published (an edit of it too).
  { name: "shadowBan", on: ["post"], by: "database", fn: SCREENING_FUNCTION, handedOver: [] },
  // 7. New-reader hold (settings safety.newReaderHold, n): a new comment no step gave a reason for, by a
  // reader not trusted who has no published comment and fewer than n earlier ones, is held
  // (`{source: "new_reader"}`).
  { name: "newReaderHold", on: ["post"], by: "database", fn: SCREENING_FUNCTION, handedOver: ["hold"] },
  // 8. An edit's verdict applies to the comment as it is under the discussion's lock, never loosening
  // it: a published comment held or rejected leaves the readers' view, a held one can be rejected.
  { name: "editNeverLoosens", on: ["edit"], by: "database", fn: SCREENING_FUNCTION, handedOver: ["verdict", "reason"] },
];

/** The steps of a post or of an edit, in order. */
export const stepsOf = (action: ScreeningAction): ScreeningStep[] => SCREENING.filter((step) => step.on.includes(action));

/** Runs the steps decided here, in order; the rest go to the database with the write (postHandOver, editHandOver). */
export async function screen(action: ScreeningAction, from: ScreeningSources): Promise<Screened> {
  const s: Screened = { action, verdict: null, trusted: null, status: null };
  for (const step of SCREENING) {
    if (step.by !== "here" || !step.on.includes(action)) continue;
    const ran = step.run(s, from);
    if (ran) await ran;
  }
  return s;
}

/** What eng_post_comment is handed: the status and reason for any reader, a trusted reader's, and the new-reader hold. */
export function postHandOver(s: Screened, newReaderHold: number) {
  return {
    status: s.status ?? "approved",
    reason: s.verdict ? jsonText(s.verdict.reason) : null,
    trustedStatus: s.trusted?.status ?? "approved",
    trustedReason: s.trusted ? jsonText(s.trusted.reason) : null,
    hold: newReaderHold,
  } satisfies Partial<DbArgs<"eng_post_comment">>;
}

/** What eng_edit_comment is handed: the verdict and reason for any reader, and a trusted reader's. */
export function editHandOver(s: Screened) {
  return {
    verdict: s.verdict?.status ?? null,
    reason: s.verdict ? jsonText(s.verdict.reason) : null,
    trustedVerdict: s.trusted?.status ?? null,
    trustedReason: s.trusted ? jsonText(s.trusted.reason) : null,
  } satisfies Partial<DbArgs<"eng_edit_comment">>;
}

/** The sources of a request's screening: the tenant's compiled rules, its hook, Akismet, its moderation settings. */
export function sourcesOf(ctx: RequestContext, settings: Settings, subject: ScreeningSubject): ScreeningSources {
  const { akismet } = settings.safety;
  return {
    rules: () => ctx.app.safety.compiled(tenantIdOf(ctx), settings.safety).check(subject.rendered),
    hook: () => askHook(ctx, settings, subject),
    akismet: async () =>
      subject.action === "post" && akismet
        ? akismetVerdict(ctx, akismet, { discussionId: subject.discussionId, body: subject.body, reader: subject.reader })
        : null,
    premoderation: settings.moderation === "pre",
    guestHeld: isGuestReader(subject.reader.id) && settings.signIn.guest.moderation === "pre",
  };
}

/** Screens a request's new or edited comment: the steps decided here, run in order. */
export function screenComment(ctx: RequestContext, settings: Settings, subject: ScreeningSubject): Promise<Screened> {
  return screen(subject.action, sourcesOf(ctx, settings, subject));
}
