// Tenant settings as typed objects (manage_settings): read, patch, identity-secret rotation; and the few a reader-facing client needs (`readerSettings`, any key).
import { builder } from "../../graphql/builder.js";
import {
  DEFAULT_AKISMET_BASE_URL,
  DELIVERY_TUNABLES,
  REPLY_EMAIL_CHOICES,
  VOTE_MODES,
  type Settings,
} from "../../tenancy/settings-model.js";
import { deliveryTunablesInput } from "../../graphql/delivery-tunables.js";
import { getSettings, rotateIdentitySecret, updateSettings, type RotatedIdentitySecret } from "./settings.js";
import type { ShownHook } from "../moderation-hook/secret.js";
import { maskSmtpUrl, tenantSmtpUrl } from "../email/smtp-url.js";
import { signInPageUrl } from "../sign-in/settings.js";
import { tenantIdOf } from "../../context/request.js";
import { AlertInput, AlertSettingsType } from "../alerts/graphql.js";

const Moderation = builder.enumType("Moderation", { values: ["post", "pre"] as const });

const DeliverySettings = builder.objectRef<Settings["delivery"]>("DeliverySettings").implement({
  fields: (t) => Object.fromEntries(DELIVERY_TUNABLES.map((name) => [name, t.exposeInt(name)])),
});

const ReplaySettings = builder.objectRef<Settings["replay"]>("ReplaySettings").implement({
  fields: (t) => ({ maxEvents: t.exposeInt("maxEvents"), maxAgeSeconds: t.exposeInt("maxAgeSeconds") }),
});

const RateLimitSettings = builder.objectRef<Settings["rateLimits"]>("RateLimitSettings").implement({
  fields: (t) => ({
    requestsPerMinute: t.exposeInt("requestsPerMinute"),
    streamConnections: t.exposeInt("streamConnections"),
    publishableKeyRequestsPerMinute: t.exposeInt("publishableKeyRequestsPerMinute"),
    readerRequestsPerMinute: t.exposeInt("readerRequestsPerMinute"),
  }),
});

const StreamSettings = builder.objectRef<Settings["stream"]>("StreamSettings").implement({
  fields: (t) => ({
    maxConnectionSeconds: t.exposeInt("maxConnectionSeconds"),
    heartbeatSeconds: t.exposeInt("heartbeatSeconds"),
  }),
});

const RetentionSettings = builder.objectRef<Settings["retention"]>("RetentionSettings").implement({
  fields: (t) => ({
    deliveryLogDays: t.exposeInt("deliveryLogDays", { description: "Days the webhook delivery log is kept (default 30)." }),
  }),
});

const IdempotencySettings = builder.objectRef<Settings["idempotency"]>("IdempotencySettings").implement({
  fields: (t) => ({
    ttlHours: t.exposeInt("ttlHours", {
      description: "Hours an Idempotency-Key and the answer it stands for are kept (default 24, 1–720).",
    }),
  }),
});

const DiscussionsSettings = builder.objectRef<Settings["discussions"]>("DiscussionsSettings").implement({
  fields: (t) => ({
    autoCreate: t.exposeBoolean("autoCreate", {
      description:
        "A reader's first comment through a publishable key, from one of allowedOrigins, creates a discussion that does not exist yet, with the page's URL and title (default true).",
    }),
    autoCreatePerMinute: t.exposeInt("autoCreatePerMinute", {
      description: "Discussions a page's origin may create that way per minute (default 30, 1–10000); past it 429.",
    }),
  }),
});

const InboxSettings = builder.objectRef<Settings["inbox"]>("InboxSettings").implement({
  fields: (t) => ({
    retentionDays: t.exposeInt("retentionDays", { description: "Days a reader's inbox items are kept (default 90, 1–3650)." }),
  }),
});

const ReportAction = builder.enumType("ReportAction", { values: ["queue", "hold"] as const });
const HookFallback = builder.enumType("ModerationHookFallback", { values: ["hold", "approve", "reject"] as const });

const SafetyHookSettings = builder.objectRef<NonNullable<Settings["safety"]["hook"]>>("SafetyHookSettings").implement({
  description: "The moderation hook: called for each new or edited comment (docs/safety.md).",
  fields: (t) => ({
    url: t.exposeString("url"),
    timeoutMs: t.exposeInt("timeoutMs", { description: "Default 1,500, at most 5,000." }),
    onTimeout: t.expose("onTimeout", { type: HookFallback, description: "What a timeout or failure decides (default hold)." }),
    secret: t.string({
      nullable: true,
      description:
        "The hook's Standard Webhooks signing secret (whsec_…): only in the updateSettings answer that set the hook or changed its url; null otherwise.",
      resolve: (hook) => (hook as ShownHook).secret ?? null,
    }),
  }),
});

const SafetyAkismetSettings = builder.objectRef<NonNullable<Settings["safety"]["akismet"]>>("SafetyAkismetSettings").implement({
  description: "Akismet: each new comment is checked before it is written (docs/safety.md). Its API key is write-only: never answered.",
  fields: (t) => ({
    blog: t.exposeString("blog", { description: "The site Akismet knows the key for." }),
    baseUrl: t.string({
      description: "Akismet's API (default https://rest.akismet.com).",
      resolve: (a) => a.baseUrl ?? DEFAULT_AKISMET_BASE_URL,
    }),
  }),
});

const SafetySettings = builder.objectRef<Settings["safety"]>("SafetySettings").implement({
  description: "Trust and safety rules (contract section 12); the word and link rules and newReaderHold apply on create and on edit.",
  fields: (t) => ({
    bannedWords: t.exposeStringList("bannedWords", {
      description: "A comment with one of these whole words (Unicode- and evasion-aware) is rejected. At most 2,000.",
    }),
    suspectWords: t.exposeStringList("suspectWords", { description: "… is held as pending. At most 2,000." }),
    maxLinks: t.exposeInt("maxLinks", { nullable: true, description: "A comment with more links than this is held; null: no limit." }),
    newReaderHold: t.exposeInt("newReaderHold", {
      description: "A reader's first n comments are held until one of theirs is approved; 0: off.",
    }),
    reportThreshold: t.exposeInt("reportThreshold", {
      description: "Distinct readers with an open report that list a comment as reported (default 3).",
    }),
    reportAction: t.expose("reportAction", {
      type: ReportAction,
      description: "At the threshold, queue (default: stays published, listed as reported) or hold (taken out of public view).",
    }),
    hook: t.expose("hook", { type: SafetyHookSettings, nullable: true }),
    akismet: t.expose("akismet", { type: SafetyAkismetSettings, nullable: true }),
  }),
});

const IdentityProviderClaims = builder.objectRef<Settings["identity"]["providers"][number]["claims"]>("IdentityProviderClaims").implement({
  description: "Which claims of a provider's token hold the reader's name, picture (avatarUrl) and email.",
  fields: (t) => ({ name: t.exposeString("name"), picture: t.exposeString("picture"), email: t.exposeString("email") }),
});

const IdentityProvider = builder.objectRef<Settings["identity"]["providers"][number]>("IdentityProvider").implement({
  description:
    "One of the tenant's identity providers (contract section 13): its tokens are accepted in X-Service-Identity; readers are `<iss>#<sub>` (a provider named by its key set alone: `<jwksUri>#<sub>`).",
  fields: (t) => ({
    issuer: t.string({
      nullable: true,
      description: "OIDC issuer: its discovery document names the key set.",
      resolve: (p) => p.issuer ?? null,
    }),
    jwksUri: t.string({ nullable: true, description: "The key set's URL, when there is no discovery.", resolve: (p) => p.jwksUri ?? null }),
    audience: t.exposeStringList("audience", { description: "The `aud` a token must carry (any one of these)." }),
    algorithms: t.exposeStringList("algorithms", { description: "RS256, PS256, ES256, EdDSA (default all four)." }),
    claims: t.expose("claims", { type: IdentityProviderClaims }),
    maxTokenLifetimeSeconds: t.int({
      nullable: true,
      description: "How long a token may live (`exp − iat`, or `exp − now` without `iat`), 60–2592000; null: 86400 (24 h).",
      resolve: (p) => p.maxTokenLifetimeSeconds ?? null,
    }),
  }),
});

const IdentitySettings = builder.objectRef<Settings["identity"]>("IdentitySettings").implement({
  fields: (t) => ({
    providers: t.expose("providers", { type: [IdentityProvider], description: "At most 5." }),
    secretOverlapHours: t.exposeInt("secretOverlapHours", {
      description: "After a rotation of the identity secret, how long the one before still verifies (default 24, 0–720).",
    }),
  }),
});

const ErasureMode = builder.enumType("ErasureMode", { values: ["anonymize", "delete"] as const });

const PrivacySettings = builder.objectRef<Settings["privacy"]>("PrivacySettings").implement({
  fields: (t) => ({
    erasure: t.expose("erasure", {
      type: ErasureMode,
      description:
        "Erasing a reader: anonymize (default) keeps their comments with the body replaced and no author; delete removes them (docs/privacy.md).",
    }),
  }),
});

export const ReplyEmailsEnum = builder.enumType("ReplyEmails", {
  description: "How often a reader hears of replies by email: each within minutes, in a daily digest, or not at all.",
  values: REPLY_EMAIL_CHOICES,
});

const EmailSettings = builder.objectRef<Settings["email"]>("EmailSettings").implement({
  description: "The tenant's email (contract section 15).",
  fields: (t) => ({
    from: t.exposeString("from", { nullable: true, description: 'The sender ("Name <address>" or an address); null: the service\'s own.' }),
    replyTo: t.exposeString("replyTo", { nullable: true, description: "Where replies to the emails go; null: nowhere." }),
    digestHour: t.exposeInt("digestHour", { description: "The hour (0–23, UTC) the daily digests go out." }),
    defaultReplies: t.expose("defaultReplies", {
      type: ReplyEmailsEnum,
      description: "How often a reader who has not chosen hears of replies (default off: readers opt in).",
    }),
    maxPerReaderPerDay: t.exposeInt("maxPerReaderPerDay", {
      description: "At most this many emails to one reader in any 24 hours (default 20); replies past it are not mailed.",
    }),
    smtpUrl: t.string({
      nullable: true,
      description: "The tenant's own SMTP server, its password masked; null: the service's (SMTP_URL).",
      resolve: (e, _a, ctx) => {
        const url = tenantSmtpUrl(ctx.app.secretBox, { email: e });
        return url && maskSmtpUrl(url);
      },
    }),
  }),
});

const FormattingSettings = builder.objectRef<Settings["formatting"]>("FormattingSettings").implement({
  description: "How comment bodies are rendered to bodyHtml (contract section 18; docs/choices.md).",
  fields: (t) => ({
    markdown: t.exposeBoolean("markdown", {
      description: "Markdown: CommonMark with strikethrough and autolinks, raw HTML shown as text (default true); false: plain text.",
    }),
    images: t.exposeBoolean("images", { description: "Images in Markdown bodies, https only (default false)." }),
  }),
});

const VoteModeEnum = builder.enumType("VoteMode", {
  description: "Votes on comments: off (default), up (upvotes only) or updown (upvotes and downvotes).",
  values: VOTE_MODES,
});

const SignInProviderClaims = builder
  .objectRef<NonNullable<Settings["signIn"]["oidc"][number]["claims"]>>("SignInProviderClaims")
  .implement({
    description: "Which claim (or userinfo member) holds the reader's id, name, avatar and address; null: the default.",
    fields: (t) => ({
      id: t.string({ nullable: true, description: "Default sub (OIDC), id (OAuth 2).", resolve: (c) => c.id ?? null }),
      name: t.string({ nullable: true, description: "Default name, then login.", resolve: (c) => c.name ?? null }),
      avatarUrl: t.string({ nullable: true, description: "Default picture, then avatar_url.", resolve: (c) => c.avatarUrl ?? null }),
      email: t.string({ nullable: true, description: "Default email (kept only when verified).", resolve: (c) => c.email ?? null }),
    }),
  });

const SignInProvider = builder.objectRef<Settings["signIn"]["oidc"][number]>("SignInProvider").implement({
  description:
    "An OpenID Connect (issuer: discovery) or plain OAuth 2 (its three endpoints) provider readers sign in with; its client secret is write-only: never answered.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The callback's path segment and the readers' id prefix (`<id>:<sub>`)." }),
    label: t.exposeString("label", { description: 'The button says "Sign in with <label>".' }),
    issuer: t.string({ nullable: true, resolve: (p) => p.issuer ?? null }),
    authorizationEndpoint: t.string({ nullable: true, resolve: (p) => p.authorizationEndpoint ?? null }),
    tokenEndpoint: t.string({ nullable: true, resolve: (p) => p.tokenEndpoint ?? null }),
    userinfoEndpoint: t.string({ nullable: true, resolve: (p) => p.userinfoEndpoint ?? null }),
    clientId: t.exposeString("clientId"),
    scopes: t.stringList({
      nullable: true,
      description: "null: openid email profile (OIDC), the provider's default (OAuth 2).",
      resolve: (p) => p.scopes ?? null,
    }),
    claims: t.field({ type: SignInProviderClaims, nullable: true, resolve: (p) => p.claims ?? null }),
  }),
});

const SignInGuestSettings = builder.objectRef<Settings["signIn"]["guest"]>("SignInGuestSettings").implement({
  fields: (t) => ({
    requireEmail: t.exposeBoolean("requireEmail", { description: "A guest must give an address (default false)." }),
    moderation: t.exposeString("moderation", { description: "pre (default): guests' comments are held; post: published as others' are." }),
  }),
});

const SignInSettings = builder.objectRef<Settings["signIn"]>("SignInSettings").implement({
  description: "Sign-in hosted by the service for sites with no identity provider (contract section 20; docs/sign-in.md).",
  fields: (t) => ({
    methods: t.exposeStringList("methods", { description: "email | oidc | guest; [] (default): hosted sign-in is off." }),
    oidc: t.expose("oidc", { type: [SignInProvider], description: "At most 5." }),
    guest: t.expose("guest", { type: SignInGuestSettings }),
    sessionDays: t.exposeInt("sessionDays", { description: "How long a reader session lasts (default 30, 1–365)." }),
  }),
});

const FederationSettings = builder.objectRef<Settings["federation"]>("FederationSettings").implement({
  description: "The fediverse: ActivityPub and Webmention (contract section 24; docs/fediverse.md).",
  fields: (t) => ({
    enabled: t.exposeBoolean("enabled", {
      description: "ActivityPub and Webmention are served for this site (default false: their routes answer 404). Needs a handle.",
    }),
    handle: t.exposeString("handle", {
      nullable: true,
      description: "The site's actor's handle (@handle@<PUBLIC_URL host>): 1–30 of a-z, 0-9, _, unique on the server (409 handle_taken).",
    }),
    remoteModeration: t.expose("remoteModeration", {
      type: Moderation,
      description:
        "Comments from the fediverse and webmentions: pre (default) holds them as pending; post publishes them as local ones are.",
    }),
    blockedDomains: t.exposeStringList("blockedDomains", {
      description:
        "Domains (and their subdomains) whose remote comments are refused and hidden, lower-case and in punycode (at most 1,000).",
    }),
  }),
});

export const SettingsType = builder.objectRef<Settings>("Settings").implement({
  fields: (t) => ({
    moderation: t.expose("moderation", { type: Moderation }),
    editWindowSeconds: t.exposeInt("editWindowSeconds"),
    reactionKinds: t.exposeStringList("reactionKinds"),
    maxBodyLength: t.exposeInt("maxBodyLength"),
    pageReactionKinds: t.exposeStringList("pageReactionKinds", {
      description: "The kinds of reaction readers may leave on a discussion itself (page reactions); [] (default): off.",
    }),
    delivery: t.expose("delivery", { type: DeliverySettings }),
    replay: t.expose("replay", { type: ReplaySettings }),
    rateLimits: t.expose("rateLimits", { type: RateLimitSettings }),
    stream: t.expose("stream", { type: StreamSettings }),
    discussions: t.expose("discussions", { type: DiscussionsSettings }),
    allowedOrigins: t.exposeStringList("allowedOrigins", {
      description: "Browser origins whose pages may use publishable keys and tickets (CORS).",
    }),
    retention: t.expose("retention", { type: RetentionSettings }),
    idempotency: t.expose("idempotency", { type: IdempotencySettings }),
    inbox: t.expose("inbox", { type: InboxSettings }),
    safety: t.expose("safety", { type: SafetySettings }),
    identity: t.expose("identity", { type: IdentitySettings }),
    privacy: t.expose("privacy", { type: PrivacySettings }),
    email: t.expose("email", { type: EmailSettings }),
    formatting: t.expose("formatting", { type: FormattingSettings }),
    votes: t.expose("votes", { type: VoteModeEnum }),
    autoLockAfterDays: t.exposeInt("autoLockAfterDays", {
      description: "Discussions this many days old (from their creation) are locked within a minute of it; 0 (default): never.",
    }),
    signIn: t.expose("signIn", { type: SignInSettings }),
    alerts: t.expose("alerts", {
      type: [AlertSettingsType],
      description: "Chat alerts to the moderators' Slack or Discord (at most 5; docs/safety.md).",
    }),
    federation: t.expose("federation", { type: FederationSettings }),
  }),
});

// Patch inputs: every field optional. Values are checked by the domain (SettingsPatchSchema), so one
// 422 lists every problem; `moderation` is a String here for that reason.
const DeliveryPatch = deliveryTunablesInput("DeliverySettingsPatch");

const ReplayPatch = builder.inputType("ReplaySettingsPatch", {
  fields: (t) => ({ maxEvents: t.int(), maxAgeSeconds: t.int() }),
});

const RateLimitPatch = builder.inputType("RateLimitSettingsPatch", {
  fields: (t) => ({
    requestsPerMinute: t.int(),
    streamConnections: t.int(),
    publishableKeyRequestsPerMinute: t.int(),
    readerRequestsPerMinute: t.int(),
  }),
});

const StreamPatch = builder.inputType("StreamSettingsPatch", {
  fields: (t) => ({ maxConnectionSeconds: t.int(), heartbeatSeconds: t.int() }),
});

const RetentionPatch = builder.inputType("RetentionSettingsPatch", {
  fields: (t) => ({ deliveryLogDays: t.int() }),
});

const IdempotencyPatch = builder.inputType("IdempotencySettingsPatch", {
  fields: (t) => ({ ttlHours: t.int() }),
});

const DiscussionsPatch = builder.inputType("DiscussionsSettingsPatch", {
  fields: (t) => ({ autoCreate: t.boolean(), autoCreatePerMinute: t.int() }),
});

const InboxPatch = builder.inputType("InboxSettingsPatch", {
  fields: (t) => ({ retentionDays: t.int() }),
});

const SafetyHookPatch = builder.inputType("SafetyHookSettingsPatch", {
  fields: (t) => ({ url: t.string(), timeoutMs: t.int(), onTimeout: t.string({ description: "hold | approve | reject" }) }),
});

const SafetyAkismetPatch = builder.inputType("SafetyAkismetSettingsPatch", {
  fields: (t) => ({
    apiKey: t.string({ description: "Write-only: stored encrypted, never answered. Required when Akismet is first set." }),
    blog: t.string({ description: "The site's URL, as Akismet knows it." }),
    baseUrl: t.string({ description: "https://host[:port] of Akismet's API; null: https://rest.akismet.com." }),
  }),
});

const SafetyPatch = builder.inputType("SafetySettingsPatch", {
  fields: (t) => ({
    bannedWords: t.stringList(),
    suspectWords: t.stringList(),
    maxLinks: t.int({ description: "null: no limit" }),
    newReaderHold: t.int(),
    reportThreshold: t.int(),
    reportAction: t.string({ description: "queue | hold" }),
    hook: t.field({ type: SafetyHookPatch, description: "null removes the hook" }),
    akismet: t.field({ type: SafetyAkismetPatch, description: "null turns Akismet off" }),
  }),
});

const IdentityProviderClaimsInput = builder.inputType("IdentityProviderClaimsInput", {
  fields: (t) => ({ name: t.string(), picture: t.string(), email: t.string() }),
});

const IdentityProviderInput = builder.inputType("IdentityProviderInput", {
  fields: (t) => ({
    issuer: t.string(),
    jwksUri: t.string(),
    audience: t.stringList({ required: true }),
    algorithms: t.stringList({ description: "RS256 | PS256 | ES256 | EdDSA" }),
    claims: t.field({ type: IdentityProviderClaimsInput }),
    maxTokenLifetimeSeconds: t.int({ description: "60–2592000; left out: 86400 (24 h)." }),
  }),
});

const IdentityPatch = builder.inputType("IdentitySettingsPatch", {
  fields: (t) => ({
    providers: t.field({ type: [IdentityProviderInput], description: "The whole list (at most 5); [] removes them all." }),
    secretOverlapHours: t.int(),
  }),
});

const PrivacyPatch = builder.inputType("PrivacySettingsPatch", {
  fields: (t) => ({ erasure: t.string({ description: "anonymize | delete" }) }),
});

const EmailPatch = builder.inputType("EmailSettingsPatch", {
  fields: (t) => ({
    from: t.string({ description: 'An address or "Name <address>"; null: the service\'s own.' }),
    replyTo: t.string({ description: "An address; null: none." }),
    digestHour: t.int({ description: "0–23 (UTC)." }),
    defaultReplies: t.string({ description: "immediate | daily | off" }),
    maxPerReaderPerDay: t.int({ description: "1–1000." }),
    smtpUrl: t.string({ description: "smtp://user:password@host:587 or smtps://…, stored encrypted; null: the service's SMTP_URL." }),
  }),
});

const FormattingPatch = builder.inputType("FormattingSettingsPatch", {
  fields: (t) => ({ markdown: t.boolean(), images: t.boolean() }),
});

const SignInProviderClaimsInput = builder.inputType("SignInProviderClaimsInput", {
  fields: (t) => ({ id: t.string(), name: t.string(), avatarUrl: t.string(), email: t.string() }),
});

const SignInProviderInput = builder.inputType("SignInProviderInput", {
  fields: (t) => ({
    id: t.string({ required: true }),
    label: t.string({ required: true }),
    issuer: t.string(),
    authorizationEndpoint: t.string(),
    tokenEndpoint: t.string(),
    userinfoEndpoint: t.string(),
    clientId: t.string({ required: true }),
    clientSecret: t.string({ description: "Write-only: stored encrypted. Required for a new id; left out, the stored one is kept." }),
    scopes: t.stringList(),
    claims: t.field({ type: SignInProviderClaimsInput }),
  }),
});

const SignInGuestPatch = builder.inputType("SignInGuestSettingsPatch", {
  fields: (t) => ({ requireEmail: t.boolean(), moderation: t.string({ description: "pre | post" }) }),
});

const SignInPatch = builder.inputType("SignInSettingsPatch", {
  fields: (t) => ({
    methods: t.stringList({ description: "The whole list: email | oidc | guest." }),
    oidc: t.field({ type: [SignInProviderInput], description: "The whole list (at most 5); [] removes them all." }),
    guest: t.field({ type: SignInGuestPatch }),
    sessionDays: t.int({ description: "1–365." }),
  }),
});

const FederationPatch = builder.inputType("FederationSettingsPatch", {
  fields: (t) => ({
    enabled: t.boolean(),
    handle: t.string({ description: "1–30 of a-z, 0-9, _; null: none (federation must then be off)." }),
    remoteModeration: t.string({ description: "pre | post" }),
    blockedDomains: t.stringList({ description: "The whole list (at most 1,000); each a domain name such as mastodon.social." }),
  }),
});

const SettingsPatch = builder.inputType("SettingsPatch", {
  fields: (t) => ({
    moderation: t.string({ description: "post | pre" }),
    editWindowSeconds: t.int(),
    reactionKinds: t.stringList(),
    maxBodyLength: t.int(),
    pageReactionKinds: t.stringList({ description: "The whole list (at most 32); [] turns page reactions off." }),
    delivery: t.field({ type: DeliveryPatch }),
    replay: t.field({ type: ReplayPatch }),
    rateLimits: t.field({ type: RateLimitPatch }),
    stream: t.field({ type: StreamPatch }),
    discussions: t.field({ type: DiscussionsPatch }),
    allowedOrigins: t.stringList(),
    retention: t.field({ type: RetentionPatch }),
    idempotency: t.field({ type: IdempotencyPatch }),
    inbox: t.field({ type: InboxPatch }),
    safety: t.field({ type: SafetyPatch }),
    identity: t.field({ type: IdentityPatch }),
    privacy: t.field({ type: PrivacyPatch }),
    email: t.field({ type: EmailPatch }),
    formatting: t.field({ type: FormattingPatch }),
    votes: t.string({ description: "off | up | updown" }),
    autoLockAfterDays: t.int({ description: "0..36500; 0 turns auto-close off." }),
    signIn: t.field({ type: SignInPatch }),
    alerts: t.field({
      type: [AlertInput],
      description: "The whole list (at most 5); [] removes them all. An alert named by its id without url keeps its URL.",
    }),
    federation: t.field({ type: FederationPatch }),
  }),
});

const IdentitySecretPayload = builder.objectRef<RotatedIdentitySecret>("IdentitySecretPayload").implement({
  fields: (t) => ({
    identitySecret: t.exposeString("identitySecret", { description: "The new secret: shown here once." }),
    kid: t.exposeString("kid", { description: "Its `kid`: put it in the assertion's header to pick this secret during an overlap." }),
    previousSecretExpiresAt: t.expose("previousSecretExpiresAt", {
      type: "DateTime",
      nullable: true,
      description: "Until when the secret before it still verifies (identity.secretOverlapHours); null: it no longer does.",
    }),
  }),
});

const ReaderSettingsType = builder.objectRef<Settings>("ReaderSettings").implement({
  description: "What a reader-facing client (the embed) needs of the tenant's settings; readable with a publishable key.",
  fields: (t) => ({
    reactionKinds: t.exposeStringList("reactionKinds", { description: "The reaction kinds readers may use." }),
    editWindowSeconds: t.exposeInt("editWindowSeconds", { description: "How long after posting a reader may edit (0: no limit)." }),
    maxBodyLength: t.exposeInt("maxBodyLength", { description: "The longest comment body, in characters." }),
    formatting: t.expose("formatting", {
      type: FormattingSettings,
      description: "Whether bodies are Markdown (a client shows its Write/Preview tabs and formatting help) and may show images.",
    }),
    pageReactionKinds: t.exposeStringList("pageReactionKinds", {
      description: "The reaction kinds readers may leave on the discussion itself; empty: page reactions are off.",
    }),
    votes: t.expose("votes", { type: VoteModeEnum, description: "What readers may vote on comments: off, up, or updown." }),
    signInMethods: t.stringList({
      description: "The hosted sign-in's methods (email | oidc | guest); empty: the page must give the reader's identity itself.",
      resolve: (s) => s.signIn.methods,
    }),
    signInUrl: t.string({
      nullable: true,
      description:
        "The hosted sign-in page a client opens in a popup (add ?origin=<page origin>&lang=<language>): `<PUBLIC_URL>/auth/v1/{tenantId}/sign-in`, or that path alone (after the service's address the client uses) when PUBLIC_URL is unset; null while signInMethods is empty.",
      resolve: (s, _a, ctx) => (s.signIn.methods.length ? signInPageUrl(ctx.app.config.PUBLIC_URL, tenantIdOf(ctx)) : null),
    }),
  }),
});

builder.queryField("readerSettings", (t) =>
  t.field({
    type: ReaderSettingsType,
    description: "The reaction kinds, edit window and body limit a reader-facing client shows (any key, publishable included).",
    authScopes: { browser: true },
    resolve: (_r, _a, ctx) => getSettings(ctx),
  }),
);

builder.queryField("settings", (t) =>
  t.field({
    type: SettingsType,
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => getSettings(ctx),
  }),
);

builder.mutationFields((t) => ({
  updateSettings: t.field({
    type: SettingsType,
    authScopes: { capability: "manage_settings" },
    args: { input: t.arg({ type: SettingsPatch, required: true }) },
    resolve: (_r, { input }, ctx) => updateSettings(ctx, input),
  }),
  rotateIdentitySecret: t.field({
    type: IdentitySecretPayload,
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => rotateIdentitySecret(ctx),
  }),
}));
