// The safety settings' body rules (bannedWords → rejected, suspectWords and maxLinks → pending),
// compiled once per change of a tenant's settings and kept by the app that compiled them (built in
// src/runtime.ts, `ctx.app.safety`). A check of a comment's body costs a normalisation and a table
// lookup per word (src/lib/word-matcher.ts). They judge the body as rendered (src/lib/markdown.ts):
// words in its text and its links' targets (markup cannot hide a word), maxLinks against its rendered links.
// newReaderHold needs the reader's earlier comments: eng_post_comment applies it (prisma/sql/20-comments.sql).
import { compileWordList, createWordNormalizer, type WordList, type WordNormalizer } from "../lib/word-matcher.js";
import type { SafetySettings } from "./settings/safety.js";

/** Why an automatic rule or a moderator decided a comment's status (`moderationReason`). */
export type ModerationReason =
  | { source: "rule"; rule: "bannedWords" | "suspectWords"; words: string[] }
  | { source: "rule"; rule: "maxLinks"; links: number; maxLinks: number }
  | { source: "new_reader"; newReaderHold: number; earlierComments: number }
  | { source: "moderator"; decision: "approved" | "rejected"; previous?: ModerationReason };

/** What the body rules decide: the status they require and why; null when no rule applies. */
export interface RuleVerdict {
  status: "rejected" | "pending";
  reason: ModerationReason;
}

/** What the rules read of a body: its rendering (RenderedBody of src/lib/markdown.ts). */
export interface RenderedText {
  text: string;
  links: number;
  hrefs: string[];
}

export interface CompiledSafety {
  check(body: RenderedText): RuleVerdict | null;
}

export interface SafetyRules {
  /** The rules of these settings, compiled the first time they are seen. */
  compiled(tenantId: string, safety: SafetySettings): CompiledSafety;
  /** how many times rules were compiled (tests: once per change, not per request) */
  readonly compilations: number;
}

const NO_RULES: CompiledSafety = { check: () => null };

function compile(normalizer: WordNormalizer, safety: SafetySettings): CompiledSafety {
  const banned: WordList = compileWordList(normalizer, safety.bannedWords);
  const suspect: WordList = compileWordList(normalizer, safety.suspectWords);
  const { maxLinks } = safety;
  if (banned.size === 0 && suspect.size === 0 && maxLinks === null) return NO_RULES;
  return {
    check(body) {
      const words = body.hrefs.length ? `${body.text}\n${body.hrefs.join("\n")}` : body.text;
      const tokens = banned.size || suspect.size ? normalizer.tokens(words) : { words: [], variants: [] };
      const bannedHits = banned.find(tokens);
      if (bannedHits.length) return { status: "rejected", reason: { source: "rule", rule: "bannedWords", words: bannedHits } };
      const suspectHits = suspect.find(tokens);
      if (suspectHits.length) return { status: "pending", reason: { source: "rule", rule: "suspectWords", words: suspectHits } };
      if (maxLinks !== null) {
        const links = body.links;
        if (links > maxLinks) return { status: "pending", reason: { source: "rule", rule: "maxLinks", links, maxLinks } };
      }
      return null;
    },
  };
}

/** Rules' content, to recognise settings objects that say the same (a tenant row re-read is a new object). */
const fingerprintOf = (s: SafetySettings) => JSON.stringify([s.bannedWords, s.suspectWords, s.maxLinks]);

/** At most this many tenants' compiled rules are kept (the least recently compiled go first). */
const MAX_TENANTS = 10_000;

export function createSafetyRules(): SafetyRules {
  const normalizer = createWordNormalizer();
  // by settings object (the resolved settings of a cached tenant row are one object), then by tenant
  // and content, so a re-read row with the same lists compiles nothing
  const byObject = new WeakMap<SafetySettings, CompiledSafety>();
  const byTenant = new Map<string, { fingerprint: string; rules: CompiledSafety }>();
  let compilations = 0;
  return {
    compiled(tenantId, safety) {
      const hit = byObject.get(safety);
      if (hit) return hit;
      const fingerprint = fingerprintOf(safety);
      let entry = byTenant.get(tenantId);
      if (!entry || entry.fingerprint !== fingerprint) {
        compilations++;
        entry = { fingerprint, rules: compile(normalizer, safety) };
        byTenant.delete(tenantId);
        byTenant.set(tenantId, entry);
        if (byTenant.size > MAX_TENANTS) byTenant.delete(byTenant.keys().next().value!);
      }
      byObject.set(safety, entry.rules);
      return entry.rules;
    },
    get compilations() {
      return compilations;
    },
  };
}
