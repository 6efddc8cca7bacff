// Trust and safety (contract section 12; docs/safety.md): word and link rules, new readers, reports,
// the moderation hook and Akismet.
import { z } from "zod";
import { isHttpUrl } from "../../lib/http-url.js";
import { parseOutboundUrl } from "../../lib/outbound-url.js";
import { group, named, sealed, setting } from "./define.js";
import { httpUrl, outboundUrl, wordList } from "./rules.js";

/** The moderation hook (`safety.hook`), called for each new or edited comment (src/modules/moderation-hook/). */
const hookFields = {
  url: setting(outboundUrl("http"), { label: "Hook URL" }),
  // the console shows it in ms (no `unit`: that is for a setting kept in ms and shown in seconds)
  timeoutMs: setting(z.number().int().min(100).max(5_000), {
    description: "Default 1,500, at most 5,000.",
    label: "Timeout (ms)",
    help: "100 to 5,000; 1,500 by default.",
  }),
  onTimeout: setting(z.enum(["hold", "approve", "reject"]), {
    enumType: { name: "ModerationHookFallback" },
    description: "What a timeout or failure decides (default hold).",
    label: "On timeout or failure",
  }),
};

/** A PATCH of the hook: any of its fields, no defaults (a field left out keeps its stored value). */
const SafetyHookPatchSchema = named(z.object(hookFields).partial().strict(), {
  name: "SafetyHookSettingsPatch",
  patchName: "SafetyHookSettingsPatch",
});

export const SafetyHookSchema = group(
  {
    name: "SafetyHookSettings",
    description: "The moderation hook: called for each new or edited comment (docs/safety.md).",
    computed: {
      secret: {
        type: "String",
        nullable: true,
        description:
          "The hook's Standard Webhooks signing secret (whsec_…): only in the updateSettings answer that set the hook or changed its url; null otherwise.",
      },
    },
  },
  {
    ...hookFields,
    timeoutMs: hookFields.timeoutMs.default(1_500),
    onTimeout: hookFields.onTimeout.default("hold"),
    /**
     * The hook's signing secret sealed with the app's SecretBox: made by the settings PATCH that sets
     * the hook or changes its url, never taken from a caller and never answered (only the plain
     * secret, once, by that PATCH).
     */
    secretEnc: sealed(z.string().optional()),
  },
);

/** Akismet's base URL: scheme, host and port alone (its routes are `/1.1/…` under it). */
export const AKISMET_BASE_URL_RULE =
  "must be an http(s) origin such as https://rest.akismet.com (scheme, host and optional port; no path or query)";
export const DEFAULT_AKISMET_BASE_URL = "https://rest.akismet.com";

const akismetBaseUrl = setting(
  z
    .string()
    .max(2048)
    .refine((v) => {
      const parsed = parseOutboundUrl(v, "http");
      return parsed.ok && isHttpUrl(v) && parsed.target.path === "/";
    }, AKISMET_BASE_URL_RULE),
  {
    description: "Akismet's API (default https://rest.akismet.com).",
    readDefault: DEFAULT_AKISMET_BASE_URL,
    label: "Base URL",
    help: `Optional: an Akismet-compatible API at another address. Empty: ${DEFAULT_AKISMET_BASE_URL}.`,
    patchDescription: "https://host[:port] of Akismet's API; null: https://rest.akismet.com.",
  },
);

/** the site Akismet knows the key for (`blog`) */
const akismetBlog = setting(httpUrl(), {
  description: "The site Akismet knows the key for.",
  patchDescription: "The site's URL, as Akismet knows it.",
  label: "Blog URL",
  help: "Your site's address, as you registered it with Akismet.",
});

/** A PATCH of Akismet: the API key (write-only: sealed, never answered) and any of its fields; a field left out keeps its stored value. */
export const SafetyAkismetPatchSchema = named(
  z
    .object({
      apiKey: setting(z.string().min(1).max(200), {
        patchDescription: "Write-only: stored encrypted, never answered. Required when Akismet is first set.",
        label: "API key",
        help: "Your Akismet API key: stored encrypted, never shown again.",
        storedHelp: "A key is set; it is never shown. Leave this empty to keep it, or type a new one to replace it.",
      }),
      blog: akismetBlog,
      baseUrl: akismetBaseUrl.nullable(),
    })
    .partial()
    .strict(),
  { name: "SafetyAkismetSettingsPatch", patchName: "SafetyAkismetSettingsPatch" },
);

/** Akismet (`safety.akismet`, contract section 21; src/modules/akismet/): each new comment is checked before it is written. */
export const SafetyAkismetSchema = group(
  {
    name: "SafetyAkismetSettings",
    description: "Akismet: each new comment is checked before it is written (docs/safety.md). Its API key is write-only: never answered.",
  },
  {
    blog: akismetBlog,
    /** absent: https://rest.akismet.com */
    baseUrl: akismetBaseUrl.optional(),
    /** the API key sealed with the app's SecretBox: set by a PATCH's `apiKey`, never answered */
    apiKeyEnc: sealed(z.string()),
  },
);

/** Trust and safety (contract section 12): word and link rules, new readers, reports, the hook. */
export const SafetySchema = group(
  {
    name: "SafetySettings",
    description: "Trust and safety rules (contract section 12); the word and link rules and newReaderHold apply on create and on edit.",
  },
  {
    /** a comment with one of these words is rejected */
    bannedWords: setting(wordList(), {
      default: [],
      description: "A comment with one of these whole words (Unicode- and evasion-aware) is rejected. At most 2,000.",
      label: "Banned words (one per line)",
      help: "a comment with one is rejected",
    }),
    /** a comment with one of these words is held (pending) */
    suspectWords: setting(wordList(), {
      default: [],
      description: "… is held as pending. At most 2,000.",
      label: "Suspect words (one per line)",
      help: "a comment with one is held for a moderator",
    }),
    /** a comment with more links than this is held; null = no limit */
    maxLinks: setting(z.number().int().min(0).max(1_000).nullable(), {
      default: null,
      description: "A comment with more links than this is held; null: no limit.",
      patchDescription: "null: no limit",
      label: "Maximum links",
      help: "A comment with more links is held. Empty: no limit.",
    }),
    /** a reader's first n comments are held until one of theirs is approved; 0 = off */
    newReaderHold: setting(z.number().int().min(0).max(100), {
      default: 0,
      description: "A reader's first n comments are held until one of theirs is approved; 0: off.",
      label: "New reader hold",
      help: "A reader's first n comments are held until one of theirs is approved. 0: off.",
    }),
    /** distinct reporters that put a comment in the queue as reported */
    reportThreshold: setting(z.number().int().min(1).max(1_000), {
      default: 3,
      description: "Distinct readers with an open report that list a comment as reported (default 3).",
      label: "Report threshold",
      help: "Distinct readers whose reports put a comment in the Reported view.",
    }),
    /** queue: stays visible, listed as reported; hold: taken out of public view */
    reportAction: setting(z.enum(["queue", "hold"]), {
      default: "queue",
      enumType: { name: "ReportAction" },
      description: "At the threshold, queue (default: stays published, listed as reported) or hold (taken out of public view).",
      label: "Report action",
      options: {
        queue: { label: "queue (stays visible, listed as reported)" },
        hold: { label: "hold (taken out of public view until a moderator decides)" },
      },
    }),
    hook: setting(SafetyHookSchema.nullable(), {
      default: null,
      patch: SafetyHookPatchSchema.nullable(),
      patchDescription: "null removes the hook",
      label: "Moderation hook",
      help: "Your classifier: each new or edited comment is POSTed to it, signed, and its answer (approve, hold or reject) decides. Empty URL: no hook.",
    }),
    akismet: setting(SafetyAkismetSchema.nullable(), {
      default: null,
      patch: SafetyAkismetPatchSchema.nullable(),
      patchDescription: "null turns Akismet off",
      label: "Akismet",
      help: "Akismet's spam check of each new comment, before it is written: spam is held for a moderator (or rejected when Akismet says it is not worth a look). A slow or failing Akismet never stops a comment: after 2 seconds it is written as usual. Approving or rejecting a comment tells Akismet.",
    }),
  },
);

export type SafetySettings = z.infer<typeof SafetySchema>;

export const safetySettings = { safety: SafetySchema };
