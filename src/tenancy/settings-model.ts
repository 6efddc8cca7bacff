// Tenant settings: the defaults, the shape, and how a stored partial override resolves.
import { z } from "zod";
import { originOf } from "../lib/origin.js";
import { isHttpUrl, HTTP_URL_RULE } from "../lib/http-url.js";
import { parseOutboundUrl, type OutboundKind } from "../lib/outbound-url.js";
import { createWordNormalizer, entryProblem, type WordNormalizer } from "../lib/word-matcher.js";
import { isSingleLine, SINGLE_LINE_RULE } from "../lib/single-line.js";
import { DOMAIN_NAME_RULE, normalizeDomain } from "../lib/domain-name.js";

export const DeliverySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(20),
    backoffBaseMs: z.number().int().min(1).max(3_600_000),
    attemptTimeoutMs: z.number().int().min(100).max(60_000),
    breakerThreshold: z.number().int().min(1).max(1000),
    breakerCooldownMs: z.number().int().min(1).max(86_400_000),
    disableThreshold: z.number().int().min(1).max(100_000),
  })
  .strict();

export type DeliveryTunables = z.infer<typeof DeliverySchema>;

/** The delivery tunables' names: the one list every GraphQL type of them is built from. */
export const DELIVERY_TUNABLES = Object.keys(DeliverySchema.shape) as (keyof DeliveryTunables)[];

/** An origin as a browser sends it: http(s)://host[:port], nothing else. */
const origin = z
  .string()
  .refine(
    (v) => originOf(v) === v,
    "must be an origin such as https://news.example (scheme, host and optional port; no path or trailing slash)",
  );

/** A safety word list: up to 2,000 entries, each with a letter or digit once normalised (src/lib/word-matcher.ts). */
const wordList = z
  .array(z.string().min(1, "must not be empty").max(100, "must be at most 100 characters"))
  .max(2000)
  .superRefine((entries, ctx) => {
    let normalizer: WordNormalizer | undefined; // made (7 ms: obscenity's tables) only for an entry that is not one plain word
    entries.forEach((entry, i) => {
      const problem = entry ? entryProblem(() => (normalizer ??= createWordNormalizer()), entry) : null; // an empty one is refused above
      if (problem) ctx.addIssue({ code: "custom", message: problem, path: [i] });
    });
  });

/**
 * A URL the service reaches out to (src/lib/outbound-url.ts): refused, naming the part, when it holds
 * anything beyond what the service uses of it (a query or path on an SMTP URL, credentials, a fragment).
 */
function outboundUrl(kind: OutboundKind) {
  return z
    .string()
    .max(2048)
    .superRefine((v, ctx) => {
      const parsed = parseOutboundUrl(v, kind);
      if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem.message });
      else if (kind !== "smtp" && !isHttpUrl(v)) ctx.addIssue({ code: "custom", message: HTTP_URL_RULE });
    });
}

/** The moderation hook (`safety.hook`), called for each new or edited comment (src/modules/moderation-hook/). */
const hookFields = {
  url: outboundUrl("http"),
  timeoutMs: z.number().int().min(100).max(5_000),
  onTimeout: z.enum(["hold", "approve", "reject"]),
};

/** A PATCH of the hook: any of its fields, no defaults (a field left out keeps its stored value). */
const SafetyHookPatchSchema = z.object(hookFields).partial().strict();

export const SafetyHookSchema = z
  .object({
    ...hookFields,
    timeoutMs: hookFields.timeoutMs.default(1_500),
    onTimeout: hookFields.onTimeout.default("hold"),
    /**
     * The hook's signing secret sealed with the app's SecretBox: made by the settings PATCH that sets
     * the hook or changes its url, never taken from a caller and never answered (only the plain
     * secret, once, by that PATCH).
     */
    secretEnc: z.string().optional(),
  })
  .strict();

/** Akismet's base URL: scheme, host and port alone (its routes are `/1.1/…` under it). */
export const AKISMET_BASE_URL_RULE =
  "must be an http(s) origin such as https://rest.akismet.com (scheme, host and optional port; no path or query)";
export const DEFAULT_AKISMET_BASE_URL = "https://rest.akismet.com";

const akismetBaseUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    const parsed = parseOutboundUrl(v, "http");
    return parsed.ok && isHttpUrl(v) && parsed.target.path === "/";
  }, AKISMET_BASE_URL_RULE);

/** Akismet (`safety.akismet`, contract section 21; src/modules/akismet/): each new comment is checked before it is written. */
const akismetFields = {
  /** the site Akismet knows the key for (`blog`) */
  blog: z.string().max(2048).refine(isHttpUrl, HTTP_URL_RULE),
  /** absent: https://rest.akismet.com */
  baseUrl: akismetBaseUrl,
};

/** A PATCH of Akismet: the API key (write-only: sealed, never answered) and any of its fields; a field left out keeps its stored value. */
export const SafetyAkismetPatchSchema = z
  .object({ apiKey: z.string().min(1).max(200), blog: akismetFields.blog, baseUrl: akismetBaseUrl.nullable() })
  .partial()
  .strict();

export const SafetyAkismetSchema = z
  .object({
    blog: akismetFields.blog,
    baseUrl: akismetFields.baseUrl.optional(),
    /** the API key sealed with the app's SecretBox: set by a PATCH's `apiKey`, never answered */
    apiKeyEnc: z.string(),
  })
  .strict();

/** Trust and safety (contract section 12): word and link rules, new readers, reports, the hook. */
export const SafetySchema = z
  .object({
    /** a comment with one of these words is rejected */
    bannedWords: wordList,
    /** a comment with one of these words is held (pending) */
    suspectWords: wordList,
    /** a comment with more links than this is held; null = no limit */
    maxLinks: z.number().int().min(0).max(1_000).nullable(),
    /** a reader's first n comments are held until one of theirs is approved; 0 = off */
    newReaderHold: z.number().int().min(0).max(100),
    /** distinct reporters that put a comment in the queue as reported */
    reportThreshold: z.number().int().min(1).max(1_000),
    /** queue: stays visible, listed as reported; hold: taken out of public view */
    reportAction: z.enum(["queue", "hold"]),
    hook: SafetyHookSchema.nullable(),
    akismet: SafetyAkismetSchema.nullable(),
  })
  .strict();

export type SafetySettings = z.infer<typeof SafetySchema>;

/** how long a provider's token may live unless the provider's `maxTokenLifetimeSeconds` says otherwise */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 86_400;

/** the asymmetric algorithms an identity provider may sign with: never `none`, never HS* (a public key is no HMAC secret) */
export const PROVIDER_ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"] as const;

/** a claim name of a provider's token (`name`, `nickname`, `https://example.com/name`) */
const claimName = z.string().min(1).max(200);

/**
 * One of the tenant's identity providers (contract section 13; src/auth/identity-providers.ts): named
 * by its `issuer` (OIDC discovery finds its key set) or by its `jwksUri` (then any issuer those keys
 * sign for), with the audience its tokens must carry, the algorithms it may sign with and which
 * claims hold the reader's name, picture and email.
 */
export const IdentityProviderSchema = z
  .object({
    issuer: outboundUrl("issuer").optional(),
    jwksUri: outboundUrl("http").optional(),
    /** one audience or several (any of them); kept as a list */
    audience: z
      .union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).min(1).max(10)])
      .transform((a) => (Array.isArray(a) ? a : [a])),
    algorithms: z
      .array(z.enum(PROVIDER_ALGORITHMS))
      .min(1)
      .refine((a) => new Set(a).size === a.length, "must not repeat an algorithm")
      .default([...PROVIDER_ALGORITHMS]),
    claims: z
      .object({ name: claimName.default("name"), picture: claimName.default("picture"), email: claimName.default("email") })
      .strict()
      .default({ name: "name", picture: "picture", email: "email" }),
    /** how long a token may live (`exp − iat`, or `exp − now` without `iat`); absent: 24 h (DEFAULT_TOKEN_LIFETIME_SECONDS) */
    maxTokenLifetimeSeconds: z.number().int().min(60).max(2_592_000).optional(),
  })
  .strict()
  .refine((p) => p.issuer !== undefined || p.jwksUri !== undefined, "must name an issuer (OIDC discovery) or a jwksUri");

/** Readers signed in at the tenant's own identity providers (contract section 13). */
export type IdentityProviderSettings = z.infer<typeof IdentityProviderSchema>;

export const IdentitySchema = z
  .object({
    providers: z
      .array(IdentityProviderSchema)
      .max(5)
      .refine((a) => new Set(a.map((p) => p.issuer ?? p.jwksUri)).size === a.length, "must not name the same provider twice"),
    /** after a rotation of the identity secret, how long the one before still verifies; 0: not at all */
    secretOverlapHours: z.number().int().min(0).max(720),
  })
  .strict();

/** How often a reader hears of replies by email (contract section 15). */
export const REPLY_EMAIL_CHOICES = ["immediate", "daily", "off"] as const;
export type ReplyEmails = (typeof REPLY_EMAIL_CHOICES)[number];

const emailAddress = z.string().max(320).email("must be an email address");

/** The tenant's email (contract section 15): sender, reply address, the daily digest's hour, and readers' default. */
export const EmailSchema = z
  .object({
    /** "Name <address>" or an address; null: the service's own sender */
    from: z
      .string()
      .max(400)
      .refine(isSingleLine, SINGLE_LINE_RULE)
      .refine((v) => /^[^<>]*<[^\s<>@]+@[^\s<>@]+>$|^[^\s<>@]+@[^\s<>@]+$/.test(v.trim()), "must be an address or Name <address>")
      .nullable(),
    replyTo: emailAddress.refine(isSingleLine, SINGLE_LINE_RULE).nullable(),
    /** the hour (0–23, UTC) the daily digests go out */
    digestHour: z.number().int().min(0).max(23),
    /** how often a reader who has not chosen hears of replies */
    defaultReplies: z.enum(REPLY_EMAIL_CHOICES),
    /** at most this many emails to one reader in any 24 hours; replies past it are not mailed */
    maxPerReaderPerDay: z.number().int().min(1).max(1000),
    /**
     * The tenant's own SMTP server, sealed with the app's SecretBox (src/modules/email/smtp-url.ts):
     * set by a PATCH of `email.smtpUrl`, answered with its password masked, never stored in clear.
     */
    smtpUrlEnc: z.string().optional(),
  })
  .strict();

/** What a PATCH may send as `email.smtpUrl`: smtp(s)://[user:password@]host[:port] and nothing else, or null to use the service's. */
export const smtpUrlPatch = outboundUrl("smtp").nullable();

/** Hosted sign-in's methods (contract section 20; src/modules/sign-in/). */
export const SIGN_IN_METHODS = ["email", "oidc", "guest"] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

const httpsEndpoint = z.string().max(2048).refine(isHttpUrl, HTTP_URL_RULE);

/**
 * An OpenID Connect provider (discovery from `issuer`) or a plain OAuth 2 one (its three endpoints,
 * GitHub's shape) for hosted sign-in. The client secret is write-only: a PATCH's `clientSecret` is
 * sealed into `clientSecretEnc` (src/modules/sign-in/settings.ts) and never answered.
 */
const signInProviderFields = {
  /** the provider's id: the callback's path segment and the readers' id prefix (`<id>:<sub>`) */
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "must be 1–32 lower-case letters, digits or hyphens, starting with a letter or digit")
    .refine((v) => !["email", "guest"].includes(v), "must not be email or guest (those name the other methods' readers)"),
  /** the button's text: "Sign in with <label>" */
  label: z.string().min(1).max(60).refine(isSingleLine, SINGLE_LINE_RULE),
  issuer: httpsEndpoint.optional(),
  authorizationEndpoint: httpsEndpoint.optional(),
  tokenEndpoint: httpsEndpoint.optional(),
  userinfoEndpoint: httpsEndpoint.optional(),
  clientId: z.string().min(1).max(500),
  /** default: openid email profile with an issuer; none (the provider's default) without one */
  scopes: z
    .array(
      z
        .string()
        .min(1)
        .max(100)
        .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be a scope token"),
    )
    .max(20)
    .optional(),
  /** which claim (or userinfo member) holds the reader's id, name, avatar and address; defaults: sub|id, name|login, picture|avatar_url, email */
  claims: z
    .object({
      id: z.string().min(1).max(100),
      name: z.string().min(1).max(100),
      avatarUrl: z.string().min(1).max(100),
      email: z.string().min(1).max(100),
    })
    .partial()
    .strict()
    .optional(),
};

const endpointsComplete = (p: {
  issuer?: string | undefined;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  userinfoEndpoint?: string | undefined;
}) =>
  p.issuer !== undefined || (p.authorizationEndpoint !== undefined && p.tokenEndpoint !== undefined && p.userinfoEndpoint !== undefined);
const ENDPOINTS_RULE = "needs an issuer (OpenID Connect discovery) or all of authorizationEndpoint, tokenEndpoint and userinfoEndpoint";

export const SignInProviderSchema = z
  .object({ ...signInProviderFields, clientSecretEnc: z.string() })
  .strict()
  .refine(endpointsComplete, { message: ENDPOINTS_RULE, path: ["issuer"] });

/** A PATCH's provider: `clientSecret` in the clear (required for a new id; absent keeps the stored one). */
export const SignInProviderPatchSchema = z
  .object({ ...signInProviderFields, clientSecret: z.string().min(1).max(500).optional() })
  .strict()
  .refine(endpointsComplete, { message: ENDPOINTS_RULE, path: ["issuer"] });

const uniqueIds = (a: readonly { id: string }[]) => new Set(a.map((p) => p.id)).size === a.length;

export const SignInSchema = z
  .object({
    /** the methods the hosted pages offer; none: hosted sign-in is off */
    methods: z
      .array(z.enum(SIGN_IN_METHODS))
      .max(3)
      .refine((a) => new Set(a).size === a.length, "must not repeat a method"),
    oidc: z.array(SignInProviderSchema).max(5).refine(uniqueIds, "must not repeat a provider id"),
    guest: z
      .object({
        /** a guest must give an address (for reply emails once a link confirms it) */
        requireEmail: z.boolean(),
        /** pre: guests' comments are held (pending); post: published as others' are */
        moderation: z.enum(["pre", "post"]),
      })
      .strict(),
    /** how long a session token lasts */
    sessionDays: z.number().int().min(1).max(365),
  })
  .strict();

export type SignInSettings = z.infer<typeof SignInSchema>;
export type SignInProvider = z.infer<typeof SignInProviderSchema>;

/** Where a chat alert goes: a Slack or a Discord incoming webhook (contract section 21; src/modules/alerts/). */
export const ALERT_KINDS = ["slack", "discord"] as const;
/** When an alert is sent: a new comment held (by the hook: hook_hold; else pending), a comment reaching reportThreshold. */
export const ALERT_TRIGGERS = ["pending", "reported", "hook_hold"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type AlertTrigger = (typeof ALERT_TRIGGERS)[number];

const alertId = z.string().regex(/^alr_[A-Za-z0-9_-]{1,40}$/, "must be the id of one of the site's alerts (alr_…)");
const alertFields = {
  kind: z.enum(ALERT_KINDS),
  on: z
    .array(z.enum(ALERT_TRIGGERS))
    .min(1)
    .max(ALERT_TRIGGERS.length)
    .refine((a) => new Set(a).size === a.length, "must not repeat a trigger"),
};

/** A stored alert: its URL sealed with the app's SecretBox (the URL is its secret), never answered. */
export const AlertSchema = z.object({ id: alertId, ...alertFields, urlEnc: z.string() }).strict();

/** A PATCH's alert: `url` in the clear (required for a new alert; left out, the one stored under `id` is kept). */
export const AlertPatchSchema = z.object({ id: alertId.optional(), ...alertFields, url: outboundUrl("http").optional() }).strict();

export type AlertSettings = z.infer<typeof AlertSchema>;

/** How comment bodies are rendered (contract section 18; src/lib/markdown.ts). */
export const FormattingSchema = z
  .object({
    /** Markdown (CommonMark, strikethrough, autolinks); false: plain text */
    markdown: z.boolean(),
    /** images (https only) in Markdown bodies */
    images: z.boolean(),
  })
  .strict();

/** What readers may vote: nothing, upvotes, or upvotes and downvotes. */
export const VOTE_MODES = ["off", "up", "updown"] as const;
export type VoteMode = (typeof VOTE_MODES)[number];

/** A tenant's fediverse handle (contract section 24): its actor's preferredUsername, unique on the server (tenants.federation_handle). */
export const FEDERATION_HANDLE_PATTERN = /^[a-z0-9_]{1,30}$/;
/** How remote comments (ActivityPub replies, webmentions) are moderated: pre holds them (pending), post publishes them as local ones are. */
export const REMOTE_MODERATION = ["pre", "post"] as const;
export type RemoteModeration = (typeof REMOTE_MODERATION)[number];
/** The most domains `federation.blockedDomains` holds. */
export const MAX_BLOCKED_DOMAINS = 1000;

/** A blocked domain, normalised by the URL parser (src/lib/domain-name.ts): stored lower-case and in punycode. */
const blockedDomain = z
  .string()
  .max(300)
  .transform((v, ctx) => {
    const d = normalizeDomain(v);
    if (d === null) {
      ctx.addIssue({ code: "custom", message: DOMAIN_NAME_RULE });
      return z.NEVER;
    }
    return d;
  });

const federationFields = {
  /** ActivityPub and Webmention are served for the tenant (otherwise their routes answer 404) */
  enabled: z.boolean(),
  handle: z.string().regex(FEDERATION_HANDLE_PATTERN, "must be 1–30 chars of a-z, 0-9, _").nullable(),
  remoteModeration: z.enum(REMOTE_MODERATION),
  /** remote comments from these domains (and their subdomains) are refused and hidden */
  blockedDomains: z
    .array(blockedDomain)
    .max(MAX_BLOCKED_DOMAINS)
    .refine((a) => new Set(a).size === a.length, "must not repeat a domain"),
};

/** The fediverse (contract section 24; docs/fediverse.md): on, the actor's handle, remote moderation and blocked domains. */
export const FederationSchema = z
  .object(federationFields)
  .strict()
  .refine((f) => !f.enabled || f.handle !== null, { message: "must be set to turn federation on", path: ["handle"] });

export type FederationSettings = z.infer<typeof FederationSchema>;

const reactionKind = z
  .string()
  .regex(/^[a-z0-9_]{1,32}$/, "must be 1–32 chars of a-z, 0-9, _")
  // a vote's reaction_toggled event says kind "vote" (contract section 18)
  .refine((k) => k !== "vote", '"vote" is the kind of votes\' events, not a reaction kind');

export const SettingsSchema = z
  .object({
    moderation: z.enum(["post", "pre"]),
    editWindowSeconds: z.number().int().min(0).max(31_536_000),
    reactionKinds: z
      .array(reactionKind)
      .min(1)
      .max(32)
      .refine((a) => new Set(a).size === a.length, "must not repeat a kind"),
    maxBodyLength: z.number().int().min(1).max(10_000),
    /** reactions on the discussion itself (contract section 18); [] (the default): off */
    pageReactionKinds: z
      .array(reactionKind)
      .max(32)
      .refine((a) => new Set(a).size === a.length, "must not repeat a kind"),
    delivery: DeliverySchema,
    replay: z.object({ maxEvents: z.number().int().min(0).max(100_000), maxAgeSeconds: z.number().int().min(0).max(2_592_000) }).strict(),
    rateLimits: z
      .object({
        requestsPerMinute: z.number().int().min(1).max(1_000_000),
        streamConnections: z.number().int().min(1).max(1_000_000),
        /** per publishable key: every browser of the tenant's pages shares it */
        publishableKeyRequestsPerMinute: z.number().int().min(1).max(10_000_000),
        /** per reader (identity assertion `sub`) behind a publishable key */
        readerRequestsPerMinute: z.number().int().min(1).max(1_000_000),
      })
      .strict(),
    stream: z
      .object({
        maxConnectionSeconds: z.number().int().min(1).max(86_400),
        heartbeatSeconds: z.number().int().min(1).max(3_600),
      })
      .strict(),
    /**
     * discussions a page brings into being: a reader's first comment through a publishable key, from
     * one of `allowedOrigins`, creates the discussion with the page's URL and title (docs/embed.md);
     * at most `autoCreatePerMinute` per origin
     */
    discussions: z.object({ autoCreate: z.boolean(), autoCreatePerMinute: z.number().int().min(1).max(10_000) }).strict(),
    /** browser origins (scheme://host[:port]) whose pages may call the browser-facing surface (contract section 7) */
    allowedOrigins: z
      .array(origin)
      .max(100)
      .refine((a) => new Set(a).size === a.length, "must not repeat an origin"),
    /** how long the webhook delivery log (attempts) is kept */
    retention: z.object({ deliveryLogDays: z.number().int().min(1).max(3_650) }).strict(),
    /** how long an Idempotency-Key and the answer it stands for are kept (contract section 11) */
    idempotency: z.object({ ttlHours: z.number().int().min(1).max(720) }).strict(),
    /** how long a reader's inbox items are kept (contract section 19) */
    inbox: z.object({ retentionDays: z.number().int().min(1).max(3_650) }).strict(),
    safety: SafetySchema,
    identity: IdentitySchema,
    /** what erasing a reader does to their comments (docs/privacy.md) */
    privacy: z.object({ erasure: z.enum(["anonymize", "delete"]) }).strict(),
    email: EmailSchema,
    formatting: FormattingSchema,
    /** votes on comments (contract section 18): off, upvotes only, or up and down */
    votes: z.enum(VOTE_MODES),
    /** discussions this many days old (from their creation) are locked by the auto-close job; 0: never (contract section 21) */
    autoLockAfterDays: z.number().int().min(0).max(36_500),
    /** hosted sign-in (contract section 20) */
    signIn: SignInSchema,
    /** chat alerts to the moderators' Slack or Discord (contract section 21): at most 5 */
    alerts: z.array(AlertSchema).max(5).refine(uniqueIds, "must not repeat an alert id"),
    /** the fediverse: ActivityPub and Webmention (contract section 24) */
    federation: FederationSchema,
  })
  .strict();

export type Settings = z.infer<typeof SettingsSchema>;

export const DEFAULT_SETTINGS: Settings = {
  moderation: "post",
  editWindowSeconds: 900,
  reactionKinds: ["like", "love", "laugh", "wow", "sad", "angry"],
  maxBodyLength: 10_000,
  pageReactionKinds: [],
  delivery: {
    maxAttempts: 3,
    backoffBaseMs: 1000,
    attemptTimeoutMs: 10_000,
    breakerThreshold: 10,
    breakerCooldownMs: 60_000,
    disableThreshold: 50,
  },
  replay: { maxEvents: 1000, maxAgeSeconds: 86_400 },
  rateLimits: { requestsPerMinute: 6000, streamConnections: 10_000, publishableKeyRequestsPerMinute: 60_000, readerRequestsPerMinute: 300 },
  stream: { maxConnectionSeconds: 1800, heartbeatSeconds: 15 },
  discussions: { autoCreate: true, autoCreatePerMinute: 30 },
  allowedOrigins: [],
  retention: { deliveryLogDays: 30 },
  idempotency: { ttlHours: 24 },
  inbox: { retentionDays: 90 },
  safety: {
    bannedWords: [],
    suspectWords: [],
    maxLinks: null,
    newReaderHold: 0,
    reportThreshold: 3,
    reportAction: "queue",
    hook: null,
    akismet: null,
  },
  identity: { providers: [], secretOverlapHours: 24 },
  privacy: { erasure: "anonymize" },
  email: { from: null, replyTo: null, digestHour: 7, defaultReplies: "off", maxPerReaderPerDay: 20 },
  formatting: { markdown: true, images: false },
  votes: "off",
  autoLockAfterDays: 0,
  signIn: { methods: [], oidc: [], guest: { requireEmail: false, moderation: "pre" }, sessionDays: 30 },
  alerts: [],
  federation: { enabled: false, handle: null, remoteModeration: "pre", blockedDomains: [] },
};

/** A PATCH: any top-level field, and any subset of the nested objects' fields. */
export const SettingsPatchSchema = z
  .object({
    moderation: SettingsSchema.shape.moderation,
    editWindowSeconds: SettingsSchema.shape.editWindowSeconds,
    reactionKinds: SettingsSchema.shape.reactionKinds,
    maxBodyLength: SettingsSchema.shape.maxBodyLength,
    pageReactionKinds: SettingsSchema.shape.pageReactionKinds,
    delivery: DeliverySchema.partial(),
    replay: SettingsSchema.shape.replay.partial(),
    rateLimits: SettingsSchema.shape.rateLimits.partial(),
    stream: SettingsSchema.shape.stream.partial(),
    discussions: SettingsSchema.shape.discussions.partial(),
    allowedOrigins: SettingsSchema.shape.allowedOrigins,
    retention: SettingsSchema.shape.retention.partial(),
    idempotency: SettingsSchema.shape.idempotency.partial(),
    inbox: SettingsSchema.shape.inbox.partial(),
    safety: SafetySchema.extend({ hook: SafetyHookPatchSchema.nullable(), akismet: SafetyAkismetPatchSchema.nullable() }).partial(),
    identity: IdentitySchema.partial(),
    privacy: SettingsSchema.shape.privacy.partial(),
    email: EmailSchema.omit({ smtpUrlEnc: true }).extend({ smtpUrl: smtpUrlPatch }).partial(),
    formatting: FormattingSchema.partial(),
    votes: SettingsSchema.shape.votes,
    autoLockAfterDays: SettingsSchema.shape.autoLockAfterDays,
    signIn: z
      .object({
        methods: SignInSchema.shape.methods,
        oidc: z.array(SignInProviderPatchSchema).max(5).refine(uniqueIds, "must not repeat a provider id"),
        guest: SignInSchema.shape.guest.partial(),
        sessionDays: SignInSchema.shape.sessionDays,
      })
      .partial()
      .strict(),
    /** the whole list; an alert without `url` keeps the one stored under its `id` */
    alerts: z
      .array(AlertPatchSchema)
      .max(5)
      .refine((a) => uniqueIds(a.filter((x): x is typeof x & { id: string } => x.id !== undefined)), "must not repeat an alert id"),
    federation: z.object(federationFields).partial().strict(),
  })
  .partial()
  .strict();

export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function deepMerge<T>(base: T, over: unknown): T {
  if (!isObject(base) || !isObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isObject(out[k]) && isObject(v) ? deepMerge(out[k], v) : v;
  }
  return out as T;
}

/** Resolved settings per stored JSON object: a cached tenant row's settings are parsed once. */
const resolved = new WeakMap<object, Settings>();

/**
 * Stored overrides (JSON column) → full settings. A stored value that a rule now refuses (one
 * written before the rule: an SMTP URL with a query, a sender with a line break) falls back to its
 * default alone — the smallest stored member holding it is dropped — so the tenant keeps every other
 * setting; what still does not resolve falls back to the defaults. The result is shared and must not
 * be changed by the caller.
 */
export function resolveSettings(stored: unknown): Settings {
  if (stored !== null && typeof stored === "object") {
    const hit = resolved.get(stored);
    if (hit) return hit;
  }
  const parsed = checkSettings(stored);
  const settings = parsed.success ? parsed.data : (salvageSettings(stored, parsed.error.issues) ?? DEFAULT_SETTINGS);
  if (stored !== null && typeof stored === "object") resolved.set(stored, settings);
  return settings;
}

/** The stored overrides without the members the issues point at (each the smallest stored one holding it), resolved; null when that does not resolve either. */
function salvageSettings(stored: unknown, first: readonly { path: readonly PropertyKey[] }[]): Settings | null {
  if (!isObject(stored)) return null;
  const copy = structuredClone(stored) as Record<string, unknown>;
  let issues = first;
  for (let round = 0; round < 10; round++) {
    let removed = false;
    // the deepest paths first, so that removing an array's element shifts no index still to come
    const paths = issues.map((i) => i.path).sort((a, b) => b.length - a.length || indexOf(b) - indexOf(a));
    for (const path of paths) {
      for (let n = path.length; n > 0; n--) {
        if (removeMember(copy, path.slice(0, n))) {
          removed = true;
          break;
        }
      }
    }
    if (!removed) return null;
    const again = checkSettings(copy);
    if (again.success) return again.data;
    issues = again.error.issues;
  }
  return null;
}

const indexOf = (path: readonly PropertyKey[]): number => (typeof path.at(-1) === "number" ? (path.at(-1) as number) : -1);

/** Removes the member at `path` from `root` (an array's element is spliced out); whether there was one. */
function removeMember(root: Record<string, unknown>, path: readonly PropertyKey[]): boolean {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node) && !Array.isArray(node)) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const last = path[path.length - 1]!;
  if (Array.isArray(node) && typeof last === "number" && last < node.length) {
    node.splice(last, 1);
    return true;
  }
  if (isObject(node) && typeof last === "string" && Object.hasOwn(node, last)) {
    delete node[last];
    return true;
  }
  return false;
}

/** Stored overrides merged over the defaults and validated: the full settings, or every problem. */
export function checkSettings(stored: unknown) {
  return SettingsSchema.safeParse(deepMerge(DEFAULT_SETTINGS, stored ?? {}));
}

export function applySettingsPatch(stored: unknown, patch: SettingsPatch): Record<string, unknown> {
  return deepMerge(isObject(stored) ? stored : {}, patch) as Record<string, unknown>;
}
