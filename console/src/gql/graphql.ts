/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** What to verify; a field left out is the saved settings' (safety.akismet). Nothing is stored. */
export type AkismetKeyInput = {
  /** A key to try before saving it; left out: the saved one, which is only sent to the saved base URL. */
  apiKey?: string | null | undefined;
  /** https://host[:port] of Akismet's API; null: https://rest.akismet.com. */
  baseUrl?: string | null | undefined;
  /** The site's URL, as Akismet knows it. */
  blog?: string | null | undefined;
};

export type AlertInput = {
  /** An existing alert's id: left out, a new alert. */
  id?: string | null | undefined;
  /** slack | discord */
  kind: string;
  /** pending | reported | hook_hold (at least one) */
  on: Array<string>;
  /** The incoming webhook URL (https), stored encrypted and never answered. Required for a new alert; left out (or as read, masked) the stored one is kept. */
  url?: string | null | undefined;
};

/** Where a chat alert goes: a Slack or a Discord incoming webhook. */
export type AlertKind =
  | 'discord'
  | 'slack';

/** When an alert is sent: pending (a new comment held, but not by the hook), hook_hold (a new comment the moderation hook held), reported (a comment's open reports reaching safety.reportThreshold). */
export type AlertTrigger =
  | 'hook_hold'
  | 'pending'
  | 'reported';

export type AnalyticsInterval =
  | 'day'
  | 'hour';

export type ApiKeyState =
  | 'active'
  | 'expired'
  | 'revoked';

export type BanReaderInput = {
  /** Up to 500 characters, for moderators. */
  reason?: string | null | undefined;
  /** Also reject the reader's pending comments (default false). */
  rejectPending?: boolean | null | undefined;
  /** A shadow ban (default false): nothing is refused; the reader's new comments are stored rejected (reason shadow_ban), shown as published to them alone; nobody else sees them and no event leaves for them. */
  shadow?: boolean | null | undefined;
  /** ISO 8601, in the future: a suspension; absent or null: a ban until lifted. */
  until?: string | null | undefined;
};

export type BlueskySettingsPatch = {
  /** Write-only: an app password of the account (Settings › Privacy and security › App passwords), stored encrypted, never answered; null removes it. */
  appPassword?: string | null | undefined;
  appView?: string | null | undefined;
  autoPost?: boolean | null | undefined;
  enabled?: boolean | null | undefined;
  /** A handle such as blog.bsky.social; null: none. */
  handle?: string | null | undefined;
  /** pre | post */
  remoteModeration?: string | null | undefined;
  service?: string | null | undefined;
};

export type Capability =
  | 'manage_api_keys'
  | 'manage_readers'
  | 'manage_settings'
  | 'manage_webhooks'
  | 'moderate_content'
  | 'view_analytics';

export type CommentStatus =
  | 'approved'
  | 'deleted'
  | 'pending'
  | 'rejected';

export type CreateApiKeyInput = {
  /** Capability names; default none. Only ones the caller holds. */
  capabilities?: Array<string> | null | undefined;
  /** ISO 8601, in the future; null = never. */
  expiresAt?: string | null | undefined;
  /** 1–100 characters. */
  label: string;
};

export type CreateWebhookInput = {
  delivery?: WebhookDeliveryInput | null | undefined;
  description?: string | null | undefined;
  events?: Array<string> | null | undefined;
  url?: string | null | undefined;
};

export type DeliverySettingsPatch = {
  attemptTimeoutMs?: number | null | undefined;
  backoffBaseMs?: number | null | undefined;
  breakerCooldownMs?: number | null | undefined;
  breakerThreshold?: number | null | undefined;
  disableThreshold?: number | null | undefined;
  maxAttempts?: number | null | undefined;
};

/** How often an operator hears of comments waiting for review: `off`, `hourly`, or `daily` (at the tenant's email.digestHour). */
export type DigestFrequency =
  | 'daily'
  | 'hourly'
  | 'off';

export type DiscussionState =
  | 'archived'
  | 'locked'
  | 'open';

export type DiscussionsSettingsPatch = {
  autoCreate?: boolean | null | undefined;
  autoCreatePerMinute?: number | null | undefined;
};

/** How email leaves the service: `smtp` (SMTP_URL), `outbox` (EMAIL_OUTBOX=1: kept, never sent) or `off`. */
export type EmailDelivery =
  | 'off'
  | 'outbox'
  | 'smtp';

export type EmailSettingsPatch = {
  /** immediate | daily | off */
  defaultReplies?: string | null | undefined;
  /** 0–23 (UTC). */
  digestHour?: number | null | undefined;
  /** An address or "Name <address>"; null: the service's own. */
  from?: string | null | undefined;
  /** 1–1000. */
  maxPerReaderPerDay?: number | null | undefined;
  /** An address; null: none. */
  replyTo?: string | null | undefined;
  /** smtp://user:password@host:587 or smtps://…, stored encrypted; null: the service's SMTP_URL. */
  smtpUrl?: string | null | undefined;
};

export type ErasureMode =
  | 'anonymize'
  | 'delete';

/** An announcement job's state: running (queued or working), succeeded, failed. */
export type FederationAnnouncementState =
  | 'failed'
  | 'running'
  | 'succeeded';

export type FederationSettingsPatch = {
  /** The whole list (at most 1,000); each a domain name such as mastodon.social. */
  blockedDomains?: Array<string> | null | undefined;
  /** A domain name such as blog.example (no scheme, port or path); null: the handle on PUBLIC_URL's host. */
  domain?: string | null | undefined;
  enabled?: boolean | null | undefined;
  /** 1–30 of a-z, 0-9, _; null: none (federation must then be off). */
  handle?: string | null | undefined;
  /** An https URL of at most 2,048 characters, without credentials or fragment; null: none. */
  icon?: string | null | undefined;
  /** pre | post */
  remoteModeration?: string | null | undefined;
  summary?: string | null | undefined;
  /** An http(s) URL of at most 2,048 characters; null: the first of allowedOrigins. */
  url?: string | null | undefined;
};

export type FormattingSettingsPatch = {
  images?: boolean | null | undefined;
  markdown?: boolean | null | undefined;
};

export type IdempotencySettingsPatch = {
  ttlHours?: number | null | undefined;
};

export type IdentityProviderClaimsInput = {
  email?: string | null | undefined;
  name?: string | null | undefined;
  picture?: string | null | undefined;
};

export type IdentityProviderInput = {
  /** RS256 | PS256 | ES256 | EdDSA */
  algorithms?: Array<string> | null | undefined;
  audience: Array<string>;
  claims?: IdentityProviderClaimsInput | null | undefined;
  issuer?: string | null | undefined;
  jwksUri?: string | null | undefined;
  /** 60–2592000; left out: 86400 (24 h). */
  maxTokenLifetimeSeconds?: number | null | undefined;
};

export type IdentitySettingsPatch = {
  /** The whole list (at most 5); [] removes them all. */
  providers?: Array<IdentityProviderInput> | null | undefined;
  secretOverlapHours?: number | null | undefined;
};

export type InboxSettingsPatch = {
  retentionDays?: number | null | undefined;
};

export type Moderation =
  | 'post'
  | 'pre';

export type ModerationHookDecision =
  | 'approve'
  | 'hold'
  | 'reject';

export type ModerationHookFallback =
  | 'approve'
  | 'hold'
  | 'reject';

export type ModerationQueueSort =
  | 'newest'
  | 'oldest';

export type ModerationQueueStatus =
  | 'pending'
  | 'rejected';

export type PrivacySettingsPatch = {
  /** anonymize | delete */
  erasure?: string | null | undefined;
};

export type RateLimitSettingsPatch = {
  publishableKeyRequestsPerMinute?: number | null | undefined;
  readerRequestsPerMinute?: number | null | undefined;
  requestsPerMinute?: number | null | undefined;
  streamConnections?: number | null | undefined;
};

/** A reader's address for reply emails: none, verified (from their identity), or suppressed after an SMTP 5xx. */
export type ReaderEmailStatus =
  | 'none'
  | 'suppressed'
  | 'verified';

export type RedeliverWebhookInput = {
  /** Only count what would be queued (`queued`), queue nothing. */
  dryRun?: boolean | null | undefined;
  eventIds?: Array<string> | null | undefined;
  since?: string | null | undefined;
};

export type ReplaySettingsPatch = {
  maxAgeSeconds?: number | null | undefined;
  maxEvents?: number | null | undefined;
};

/** How often a reader hears of replies by email: each within minutes, in a daily digest, or not at all. */
export type ReplyEmails =
  | 'daily'
  | 'immediate'
  | 'off';

export type ReportAction =
  | 'hold'
  | 'queue';

export type ReportReason =
  | 'abuse'
  | 'off_topic'
  | 'other'
  | 'spam';

export type ReportStatus =
  | 'dismissed'
  | 'open';

export type RetentionSettingsPatch = {
  deliveryLogDays?: number | null | undefined;
};

export type SafetyAkismetSettingsPatch = {
  /** Write-only: stored encrypted, never answered. Required when Akismet is first set. */
  apiKey?: string | null | undefined;
  /** https://host[:port] of Akismet's API; null: https://rest.akismet.com. */
  baseUrl?: string | null | undefined;
  /** The site's URL, as Akismet knows it. */
  blog?: string | null | undefined;
};

export type SafetyHookSettingsPatch = {
  /** hold | approve | reject */
  onTimeout?: string | null | undefined;
  timeoutMs?: number | null | undefined;
  url?: string | null | undefined;
};

export type SafetySettingsPatch = {
  /** null turns Akismet off */
  akismet?: SafetyAkismetSettingsPatch | null | undefined;
  bannedWords?: Array<string> | null | undefined;
  /** null removes the hook */
  hook?: SafetyHookSettingsPatch | null | undefined;
  /** null: no limit */
  maxLinks?: number | null | undefined;
  newReaderHold?: number | null | undefined;
  /** queue | hold */
  reportAction?: string | null | undefined;
  reportThreshold?: number | null | undefined;
  suspectWords?: Array<string> | null | undefined;
};

export type SettingsPatch = {
  /** The whole list (at most 5); [] removes them all. An alert named by its id without url keeps its URL. */
  alerts?: Array<AlertInput> | null | undefined;
  allowedOrigins?: Array<string> | null | undefined;
  /** 0..36500; 0 turns auto-close off. */
  autoLockAfterDays?: number | null | undefined;
  bluesky?: BlueskySettingsPatch | null | undefined;
  delivery?: DeliverySettingsPatch | null | undefined;
  discussions?: DiscussionsSettingsPatch | null | undefined;
  editWindowSeconds?: number | null | undefined;
  email?: EmailSettingsPatch | null | undefined;
  federation?: FederationSettingsPatch | null | undefined;
  formatting?: FormattingSettingsPatch | null | undefined;
  idempotency?: IdempotencySettingsPatch | null | undefined;
  identity?: IdentitySettingsPatch | null | undefined;
  inbox?: InboxSettingsPatch | null | undefined;
  maxBodyLength?: number | null | undefined;
  /** post | pre */
  moderation?: string | null | undefined;
  /** The whole list (at most 32); [] turns page reactions off. */
  pageReactionKinds?: Array<string> | null | undefined;
  privacy?: PrivacySettingsPatch | null | undefined;
  rateLimits?: RateLimitSettingsPatch | null | undefined;
  reactionKinds?: Array<string> | null | undefined;
  replay?: ReplaySettingsPatch | null | undefined;
  retention?: RetentionSettingsPatch | null | undefined;
  safety?: SafetySettingsPatch | null | undefined;
  signIn?: SignInSettingsPatch | null | undefined;
  stream?: StreamSettingsPatch | null | undefined;
  /** off | up | updown */
  votes?: string | null | undefined;
};

export type SignInGuestSettingsPatch = {
  /** pre | post */
  moderation?: string | null | undefined;
  requireEmail?: boolean | null | undefined;
};

export type SignInProviderClaimsInput = {
  avatarUrl?: string | null | undefined;
  email?: string | null | undefined;
  id?: string | null | undefined;
  name?: string | null | undefined;
};

export type SignInProviderInput = {
  authorizationEndpoint?: string | null | undefined;
  claims?: SignInProviderClaimsInput | null | undefined;
  clientId: string;
  /** Write-only: stored encrypted. Required for a new id; left out, the stored one is kept. */
  clientSecret?: string | null | undefined;
  id: string;
  issuer?: string | null | undefined;
  label: string;
  scopes?: Array<string> | null | undefined;
  tokenEndpoint?: string | null | undefined;
  userinfoEndpoint?: string | null | undefined;
};

export type SignInSettingsPatch = {
  guest?: SignInGuestSettingsPatch | null | undefined;
  /** The whole list: email | oidc | guest | passkey. */
  methods?: Array<string> | null | undefined;
  /** The whole list (at most 5); [] removes them all. */
  oidc?: Array<SignInProviderInput> | null | undefined;
  /** 1–365. */
  sessionDays?: number | null | undefined;
};

export type StreamSettingsPatch = {
  heartbeatSeconds?: number | null | undefined;
  maxConnectionSeconds?: number | null | undefined;
};

/** How the write path treats a reader's comments: trusted skips newReaderHold, suspect words, maxLinks, the hook, Akismet and pre-moderation (banned words still reject); premoderated holds every comment; default applies the tenant's rules. */
export type TrustLevel =
  | 'default'
  | 'premoderated'
  | 'trusted';

export type UpdateWebhookInput = {
  delivery?: WebhookDeliveryInput | null | undefined;
  description?: string | null | undefined;
  events?: Array<string> | null | undefined;
  url?: string | null | undefined;
};

/** Votes on comments: off (default), up (upvotes only) or updown (upvotes and downvotes). */
export type VoteMode =
  | 'off'
  | 'up'
  | 'updown';

/** Overrides of the tenant's delivery settings for one endpoint; null removes an override. */
export type WebhookDeliveryInput = {
  attemptTimeoutMs?: number | null | undefined;
  backoffBaseMs?: number | null | undefined;
  breakerCooldownMs?: number | null | undefined;
  breakerThreshold?: number | null | undefined;
  disableThreshold?: number | null | undefined;
  maxAttempts?: number | null | undefined;
};

export type WebhookState =
  | 'active'
  | 'circuit_open'
  | 'disabled';

export type QueueCommentFragment = { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null };

export type PendingCountQueryVariables = Exact<{ [key: string]: never; }>;


export type PendingCountQuery = { pendingCommentCount: number };

export type ModerationQueueQueryVariables = Exact<{
  status?: ModerationQueueStatus | null | undefined;
  sort?: ModerationQueueSort | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type ModerationQueueQuery = { moderationQueue: { edges: Array<{ node: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type PendingCommentsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type PendingCommentsSubscription = { pendingComments: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } };

export type ApproveMutationVariables = Exact<{
  id: string;
}>;


export type ApproveMutation = { approveComment: { id: string, status: CommentStatus } };

export type RejectMutationVariables = Exact<{
  id: string;
}>;


export type RejectMutation = { rejectComment: { id: string, status: CommentStatus } };

export type PinMutationVariables = Exact<{
  id: string;
}>;


export type PinMutation = { pinComment: { id: string, pinned: boolean } };

export type UnpinMutationVariables = Exact<{
  id: string;
}>;


export type UnpinMutation = { unpinComment: { id: string, pinned: boolean } };

export type DeleteCommentMutationVariables = Exact<{
  id: string;
}>;


export type DeleteCommentMutation = { deleteComment: { id: string, status: CommentStatus } };

export type DiscussionsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type DiscussionsQuery = { discussions: { edges: Array<{ node: { id: string, title: string | null, url: string | null, state: DiscussionState, commentCount: number, createdAt: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type DiscussionThreadQueryVariables = Exact<{
  id: string;
  after?: string | null | undefined;
}>;


export type DiscussionThreadQuery = { discussion: { id: string, title: string | null, url: string | null, state: DiscussionState, commentCount: number, reactions: Array<{ kind: string, count: number }> }, discussionCommentCounts: { approved: number, pending: number, rejected: number, deleted: number }, discussionComments: { edges: Array<{ node: { depth: number | null, replyCount: number, id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type LockDiscussionMutationVariables = Exact<{
  id: string;
}>;


export type LockDiscussionMutation = { lockDiscussion: { id: string, state: DiscussionState } };

export type UnlockDiscussionMutationVariables = Exact<{
  id: string;
}>;


export type UnlockDiscussionMutation = { unlockDiscussion: { id: string, state: DiscussionState } };

export type ArchiveDiscussionMutationVariables = Exact<{
  id: string;
}>;


export type ArchiveDiscussionMutation = { archiveDiscussion: { id: string, state: DiscussionState } };

export type KeysQueryVariables = Exact<{ [key: string]: never; }>;


export type KeysQuery = { apiKeys: { edges: Array<{ node: { id: string, label: string, prefix: string, capabilities: Array<Capability>, state: ApiKeyState, expiresAt: string | null, lastUsedAt: string | null, createdAt: string } }> }, publishableKeys: { edges: Array<{ node: { id: string, label: string, prefix: string, state: ApiKeyState, lastUsedAt: string | null, createdAt: string } }> } };

export type CreateKeyMutationVariables = Exact<{
  input: CreateApiKeyInput;
}>;


export type CreateKeyMutation = { createApiKey: { key: string, apiKey: { id: string } } };

export type CreatePublishableKeyMutationVariables = Exact<{
  label: string;
}>;


export type CreatePublishableKeyMutation = { createPublishableKey: { key: string, publishableKey: { id: string } } };

export type RevokeKeyMutationVariables = Exact<{
  id: string;
}>;


export type RevokeKeyMutation = { revokeApiKey: { id: string, state: ApiKeyState } };

export type RevokePublishableKeyMutationVariables = Exact<{
  id: string;
}>;


export type RevokePublishableKeyMutation = { revokePublishableKey: { id: string, state: ApiKeyState } };

export type EndpointFragment = { webhookId: string, url: string, events: Array<string>, description: string | null, verified: boolean, verifying: boolean, state: WebhookState, consecutiveFailures: number, circuitOpenUntil: string | null, kid: string, delivery: unknown, createdAt: string };

export type WebhooksQueryVariables = Exact<{ [key: string]: never; }>;


export type WebhooksQuery = { webhooks: { edges: Array<{ node: { webhookId: string, url: string, events: Array<string>, description: string | null, verified: boolean, verifying: boolean, state: WebhookState, consecutiveFailures: number, circuitOpenUntil: string | null, kid: string, delivery: unknown, createdAt: string } }> } };

export type CreateWebhookMutationVariables = Exact<{
  input: CreateWebhookInput;
}>;


export type CreateWebhookMutation = { createWebhook: { secret: string, standardWebhooksSecret: string, endpoint: { webhookId: string, url: string, events: Array<string>, description: string | null, verified: boolean, verifying: boolean, state: WebhookState, consecutiveFailures: number, circuitOpenUntil: string | null, kid: string, delivery: unknown, createdAt: string } } };

export type UpdateWebhookMutationVariables = Exact<{
  id: string;
  input: UpdateWebhookInput;
}>;


export type UpdateWebhookMutation = { updateWebhook: { webhookId: string, url: string, events: Array<string>, description: string | null, verified: boolean, verifying: boolean, state: WebhookState, consecutiveFailures: number, circuitOpenUntil: string | null, kid: string, delivery: unknown, createdAt: string } };

export type VerifyWebhookMutationVariables = Exact<{
  id: string;
}>;


export type VerifyWebhookMutation = { verifyWebhookEndpoint: { verified: boolean, error: string | null } };

export type RotateWebhookSecretMutationVariables = Exact<{
  id: string;
}>;


export type RotateWebhookSecretMutation = { rotateWebhookSecret: { secret: string, standardWebhooksSecret: string, kid: string, previousKidValidUntil: string } };

export type EnableWebhookMutationVariables = Exact<{
  id: string;
}>;


export type EnableWebhookMutation = { enableWebhook: { webhookId: string, url: string, events: Array<string>, description: string | null, verified: boolean, verifying: boolean, state: WebhookState, consecutiveFailures: number, circuitOpenUntil: string | null, kid: string, delivery: unknown, createdAt: string } };

export type RedeliverWebhookMutationVariables = Exact<{
  id: string;
  input: RedeliverWebhookInput;
}>;


export type RedeliverWebhookMutation = { redeliverWebhook: { queued: number } };

export type DeliveriesQueryVariables = Exact<{
  id: string;
  after?: string | null | undefined;
}>;


export type DeliveriesQuery = { webhookDeliveries: { edges: Array<{ node: { id: string, eventId: string, eventType: string, attempt: number, statusCode: number | null, durationMs: number, error: string | null, createdAt: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type AllSettingsFragment = { moderation: Moderation, editWindowSeconds: number, reactionKinds: Array<string>, pageReactionKinds: Array<string>, votes: VoteMode, maxBodyLength: number, autoLockAfterDays: number, allowedOrigins: Array<string>, formatting: { markdown: boolean, images: boolean }, delivery: { maxAttempts: number, backoffBaseMs: number, attemptTimeoutMs: number, breakerThreshold: number, breakerCooldownMs: number, disableThreshold: number }, replay: { maxEvents: number, maxAgeSeconds: number }, rateLimits: { requestsPerMinute: number, streamConnections: number, publishableKeyRequestsPerMinute: number, readerRequestsPerMinute: number }, stream: { maxConnectionSeconds: number, heartbeatSeconds: number }, retention: { deliveryLogDays: number }, idempotency: { ttlHours: number }, inbox: { retentionDays: number }, identity: { secretOverlapHours: number }, federation: { enabled: boolean, handle: string | null, domain: string | null, url: string | null, icon: string | null, summary: string | null, remoteModeration: Moderation, blockedDomains: Array<string> }, bluesky: { enabled: boolean, handle: string | null, service: string, appView: string, remoteModeration: Moderation, autoPost: boolean, appPasswordSet: boolean } };

export type SettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type SettingsQuery = { settings: { moderation: Moderation, editWindowSeconds: number, reactionKinds: Array<string>, pageReactionKinds: Array<string>, votes: VoteMode, maxBodyLength: number, autoLockAfterDays: number, allowedOrigins: Array<string>, formatting: { markdown: boolean, images: boolean }, delivery: { maxAttempts: number, backoffBaseMs: number, attemptTimeoutMs: number, breakerThreshold: number, breakerCooldownMs: number, disableThreshold: number }, replay: { maxEvents: number, maxAgeSeconds: number }, rateLimits: { requestsPerMinute: number, streamConnections: number, publishableKeyRequestsPerMinute: number, readerRequestsPerMinute: number }, stream: { maxConnectionSeconds: number, heartbeatSeconds: number }, retention: { deliveryLogDays: number }, idempotency: { ttlHours: number }, inbox: { retentionDays: number }, identity: { secretOverlapHours: number }, federation: { enabled: boolean, handle: string | null, domain: string | null, url: string | null, icon: string | null, summary: string | null, remoteModeration: Moderation, blockedDomains: Array<string> }, bluesky: { enabled: boolean, handle: string | null, service: string, appView: string, remoteModeration: Moderation, autoPost: boolean, appPasswordSet: boolean } } };

export type UpdateSettingsMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateSettingsMutation = { updateSettings: { moderation: Moderation, editWindowSeconds: number, reactionKinds: Array<string>, pageReactionKinds: Array<string>, votes: VoteMode, maxBodyLength: number, autoLockAfterDays: number, allowedOrigins: Array<string>, formatting: { markdown: boolean, images: boolean }, delivery: { maxAttempts: number, backoffBaseMs: number, attemptTimeoutMs: number, breakerThreshold: number, breakerCooldownMs: number, disableThreshold: number }, replay: { maxEvents: number, maxAgeSeconds: number }, rateLimits: { requestsPerMinute: number, streamConnections: number, publishableKeyRequestsPerMinute: number, readerRequestsPerMinute: number }, stream: { maxConnectionSeconds: number, heartbeatSeconds: number }, retention: { deliveryLogDays: number }, idempotency: { ttlHours: number }, inbox: { retentionDays: number }, identity: { secretOverlapHours: number }, federation: { enabled: boolean, handle: string | null, domain: string | null, url: string | null, icon: string | null, summary: string | null, remoteModeration: Moderation, blockedDomains: Array<string> }, bluesky: { enabled: boolean, handle: string | null, service: string, appView: string, remoteModeration: Moderation, autoPost: boolean, appPasswordSet: boolean } } };

export type RotateIdentitySecretMutationVariables = Exact<{ [key: string]: never; }>;


export type RotateIdentitySecretMutation = { rotateIdentitySecret: { identitySecret: string, kid: string, previousSecretExpiresAt: string | null } };

export type AnalyticsQueryVariables = Exact<{
  from?: string | null | undefined;
  to?: string | null | undefined;
  interval?: AnalyticsInterval | null | undefined;
}>;


export type AnalyticsQuery = { analytics: { from: string, to: string, interval: AnalyticsInterval, followers: number, totals: { comments: number, replies: number, reactions: unknown, pageReactions: unknown, activeReaders: number, moderationActions: number, newFollowers: number, webhookDeliveries: { ok: number, failed: number } }, buckets: Array<{ start: string, comments: number, replies: number, reactions: unknown, pageReactions: unknown, activeReaders: number, moderationActions: number, newFollowers: number, webhookDeliveries: { ok: number, failed: number } }> } };

export type AuditLogQueryVariables = Exact<{
  actor?: string | null | undefined;
  action?: string | null | undefined;
  after?: string | null | undefined;
}>;


export type AuditLogQuery = { auditLog: { edges: Array<{ node: { id: string, at: string, action: string, actor: { type: string, id: string, label: string | null }, resource: { type: string, id: string | null }, changes: Array<{ field: string, from: unknown, to: unknown }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type SafetyFieldsFragment = { bannedWords: Array<string>, suspectWords: Array<string>, maxLinks: number | null, newReaderHold: number, reportThreshold: number, reportAction: ReportAction, hook: { url: string, timeoutMs: number, onTimeout: ModerationHookFallback } | null, akismet: { blog: string, baseUrl: string } | null };

export type SafetySettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type SafetySettingsQuery = { settings: { moderation: Moderation, safety: { bannedWords: Array<string>, suspectWords: Array<string>, maxLinks: number | null, newReaderHold: number, reportThreshold: number, reportAction: ReportAction, hook: { url: string, timeoutMs: number, onTimeout: ModerationHookFallback } | null, akismet: { blog: string, baseUrl: string } | null } } };

export type UpdateSafetyMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateSafetyMutation = { updateSettings: { moderation: Moderation, safety: { bannedWords: Array<string>, suspectWords: Array<string>, maxLinks: number | null, newReaderHold: number, reportThreshold: number, reportAction: ReportAction, hook: { secret: string | null, url: string, timeoutMs: number, onTimeout: ModerationHookFallback } | null, akismet: { blog: string, baseUrl: string } | null } } };

export type TestSafetyHookMutationVariables = Exact<{ [key: string]: never; }>;


export type TestSafetyHookMutation = { testSafetyHook: { ok: boolean, status: number | null, decision: ModerationHookDecision | null, reason: string | null, latencyMs: number, error: string | null } };

export type VerifyAkismetKeyMutationVariables = Exact<{
  input?: AkismetKeyInput | null | undefined;
}>;


export type VerifyAkismetKeyMutation = { verifyAkismetKey: { valid: boolean, error: string | null, debugHelp: string | null, latencyMs: number } };

export type ReportedFragment = { status: ReportStatus, reportCount: number, lastReportedAt: string | null, dismissedAt: string | null, reasonCounts: Array<{ reason: ReportReason, count: number }>, notes: Array<{ reason: ReportReason, note: string, createdAt: string }>, comment: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } };

export type ReportsQueryVariables = Exact<{
  status?: ReportStatus | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type ReportsQuery = { reports: { edges: Array<{ node: { status: ReportStatus, reportCount: number, lastReportedAt: string | null, dismissedAt: string | null, reasonCounts: Array<{ reason: ReportReason, count: number }>, notes: Array<{ reason: ReportReason, note: string, createdAt: string }>, comment: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type DismissReportsMutationVariables = Exact<{
  commentId: string;
}>;


export type DismissReportsMutation = { dismissReports: { status: ReportStatus, reportCount: number, lastReportedAt: string | null, dismissedAt: string | null, reasonCounts: Array<{ reason: ReportReason, count: number }>, notes: Array<{ reason: ReportReason, note: string, createdAt: string }>, comment: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } } };

export type ReaderPageFragment = { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null };

export type ReaderQueryVariables = Exact<{
  id: string;
}>;


export type ReaderQuery = { reader: { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null } };

export type BanReaderMutationVariables = Exact<{
  id: string;
  input?: BanReaderInput | null | undefined;
}>;


export type BanReaderMutation = { banReader: { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null } };

export type UpdateReaderBadgeMutationVariables = Exact<{
  id: string;
  badge?: string | null | undefined;
}>;


export type UpdateReaderBadgeMutation = { updateReader: { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null } };

export type SetReaderTrustMutationVariables = Exact<{
  id: string;
  level: TrustLevel;
}>;


export type SetReaderTrustMutation = { setReaderTrust: { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null } };

export type LiftReaderBanMutationVariables = Exact<{
  id: string;
}>;


export type LiftReaderBanMutation = { liftReaderBan: { id: string, name: string, avatarUrl: string | null, badge: string | null, badgeSource: string | null, trustLevel: TrustLevel, createdAt: string, openReports: number, emailStatus: ReaderEmailStatus, replyEmails: ReplyEmails, replyEmailsChosen: boolean, followingCount: number, inboxItems: number, inboxUnread: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null, shadow: boolean, createdAt: string } | null, recentComments: Array<{ id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null }>, following: Array<{ discussionId: string, title: string | null, mode: string, since: string }>, signIn: { method: string, provider: string | null, providerLabel: string | null, at: string | null } | null } };

export type IdentityFieldsFragment = { secretOverlapHours: number, providers: Array<{ issuer: string | null, jwksUri: string | null, audience: Array<string>, algorithms: Array<string>, claims: { name: string, picture: string, email: string } }> };

export type IdentitySettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type IdentitySettingsQuery = { settings: { identity: { secretOverlapHours: number, providers: Array<{ issuer: string | null, jwksUri: string | null, audience: Array<string>, algorithms: Array<string>, claims: { name: string, picture: string, email: string } }> } } };

export type UpdateIdentityMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateIdentityMutation = { updateSettings: { identity: { secretOverlapHours: number, providers: Array<{ issuer: string | null, jwksUri: string | null, audience: Array<string>, algorithms: Array<string>, claims: { name: string, picture: string, email: string } }> } } };

export type TestIdentityTokenMutationVariables = Exact<{
  token: string;
}>;


export type TestIdentityTokenMutation = { testIdentityToken: { ok: boolean, error: string | null, claims: unknown, reader: { id: string, name: string, avatarUrl: string | null, email: string | null, emailVerified: boolean } | null, header: { alg: string | null, kid: string | null } | null } };

export type ReaderExportQueryVariables = Exact<{
  id: string;
}>;


export type ReaderExportQuery = { readerExport: unknown };

export type ReaderErasureModeQueryVariables = Exact<{ [key: string]: never; }>;


export type ReaderErasureModeQuery = { settings: { privacy: { erasure: ErasureMode } } };

export type EraseReaderMutationVariables = Exact<{
  id: string;
}>;


export type EraseReaderMutation = { eraseReader: { readerId: string, mode: string, profileRemoved: boolean, commentsAnonymized: number, commentsDeleted: number, commentsTombstoned: number, reactionsRemoved: number, reportsRemoved: number, eventsScrubbed: number } };

export type EmailFieldsFragment = { from: string | null, replyTo: string | null, digestHour: number, defaultReplies: ReplyEmails, maxPerReaderPerDay: number, smtpUrl: string | null };

export type EmailSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type EmailSettingsQuery = { emailStatus: { mode: EmailDelivery, from: string }, settings: { email: { from: string | null, replyTo: string | null, digestHour: number, defaultReplies: ReplyEmails, maxPerReaderPerDay: number, smtpUrl: string | null } } };

export type EmailModeQueryVariables = Exact<{ [key: string]: never; }>;


export type EmailModeQuery = { emailStatus: { mode: EmailDelivery } };

export type UpdateEmailSettingsMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateEmailSettingsMutation = { updateSettings: { email: { from: string | null, replyTo: string | null, digestHour: number, defaultReplies: ReplyEmails, maxPerReaderPerDay: number, smtpUrl: string | null } } };

export type SendTestEmailMutationVariables = Exact<{
  to: string;
}>;


export type SendTestEmailMutation = { sendTestEmail: { sent: boolean, messageId: string | null, error: string | null } };

export type OutboxQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type OutboxQuery = { emailMessages: { edges: Array<{ node: { id: string, subject: string, to: string, kind: string, itemCount: number, createdAt: string, text: string, html: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type MyModerationDigestQueryVariables = Exact<{ [key: string]: never; }>;


export type MyModerationDigestQuery = { myModerationDigest: { frequency: DigestFrequency, nextAt: string | null } };

export type UpdateMyModerationDigestMutationVariables = Exact<{
  frequency: string;
}>;


export type UpdateMyModerationDigestMutation = { updateMyModerationDigest: { frequency: DigestFrequency, nextAt: string | null } };

export type SearchCommentsQueryVariables = Exact<{
  q?: string | null | undefined;
  status?: CommentStatus | null | undefined;
  discussionId?: string | null | undefined;
  readerId?: string | null | undefined;
  hasLinks?: boolean | null | undefined;
  reported?: boolean | null | undefined;
  from?: string | null | undefined;
  to?: string | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type SearchCommentsQuery = { searchComments: { edges: Array<{ node: { id: string, discussionId: string, parentId: string | null, body: string, bodyHtml: string, status: CommentStatus, pinned: boolean, createdAt: string, discussionTitle: string | null, moderationReason: unknown, author: { id: string, name: string, badge: string | null }, parent: { id: string, status: CommentStatus, excerpt: string, author: { id: string, name: string, badge: string | null } } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type SignInFieldsFragment = { methods: Array<string>, sessionDays: number, oidc: Array<{ id: string, label: string, issuer: string | null, authorizationEndpoint: string | null, tokenEndpoint: string | null, userinfoEndpoint: string | null, clientId: string, scopes: Array<string> | null, claims: { id: string | null, name: string | null, avatarUrl: string | null, email: string | null } | null }>, guest: { requireEmail: boolean, moderation: string } };

export type SignInSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type SignInSettingsQuery = { settings: { signIn: { methods: Array<string>, sessionDays: number, oidc: Array<{ id: string, label: string, issuer: string | null, authorizationEndpoint: string | null, tokenEndpoint: string | null, userinfoEndpoint: string | null, clientId: string, scopes: Array<string> | null, claims: { id: string | null, name: string | null, avatarUrl: string | null, email: string | null } | null }>, guest: { requireEmail: boolean, moderation: string } } } };

export type UpdateSignInMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateSignInMutation = { updateSettings: { signIn: { methods: Array<string>, sessionDays: number, oidc: Array<{ id: string, label: string, issuer: string | null, authorizationEndpoint: string | null, tokenEndpoint: string | null, userinfoEndpoint: string | null, clientId: string, scopes: Array<string> | null, claims: { id: string | null, name: string | null, avatarUrl: string | null, email: string | null } | null }>, guest: { requireEmail: boolean, moderation: string } } } };

export type TestSignInProviderMutationVariables = Exact<{
  id: string;
}>;


export type TestSignInProviderMutation = { testSignInProvider: { ok: boolean, latencyMs: number, redirectUri: string | null, checks: Array<{ endpoint: string, url: string, ok: boolean, status: number | null, error: string | null }> } };

export type AlertFieldsFragment = { id: string, kind: AlertKind, url: string, on: Array<AlertTrigger> };

export type AlertSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type AlertSettingsQuery = { settings: { alerts: Array<{ id: string, kind: AlertKind, url: string, on: Array<AlertTrigger> }> } };

export type UpdateAlertsMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type UpdateAlertsMutation = { updateSettings: { alerts: Array<{ id: string, kind: AlertKind, url: string, on: Array<AlertTrigger> }> } };

export type TestAlertMutationVariables = Exact<{
  index: number;
}>;


export type TestAlertMutation = { testAlert: { ok: boolean, status: number | null, latencyMs: number, error: string | null } };

export type BlockedDomainsQueryVariables = Exact<{ [key: string]: never; }>;


export type BlockedDomainsQuery = { settings: { federation: { blockedDomains: Array<string> } } };

export type BlockDomainMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type BlockDomainMutation = { updateSettings: { federation: { blockedDomains: Array<string> } } };

export type FederationStatusQueryVariables = Exact<{ [key: string]: never; }>;


export type FederationStatusQuery = { federationStatus: { enabled: boolean, served: boolean, address: string | null, followers: number } };

export type AnnouncementFragment = { id: string, state: FederationAnnouncementState, announced: number, alreadyAnnounced: number, failure: string | null };

export type AnnounceDiscussionsMutationVariables = Exact<{ [key: string]: never; }>;


export type AnnounceDiscussionsMutation = { announceDiscussions: { id: string, state: FederationAnnouncementState, announced: number, alreadyAnnounced: number, failure: string | null } };

export type FederationAnnouncementQueryVariables = Exact<{
  id: string;
}>;


export type FederationAnnouncementQuery = { federationAnnouncement: { id: string, state: FederationAnnouncementState, announced: number, alreadyAnnounced: number, failure: string | null } };

export type BlueskyLinkRowFragment = { discussionId: string, uri: string | null, url: string | null, posted: boolean, createdAt: string, polledAt: string | null, nextPollAt: string, lastError: string | null, replies: number };

export type BlueskyLinksQueryVariables = Exact<{
  limit?: number | null | undefined;
}>;


export type BlueskyLinksQuery = { blueskyLinks: Array<{ discussionId: string, uri: string | null, url: string | null, posted: boolean, createdAt: string, polledAt: string | null, nextPollAt: string, lastError: string | null, replies: number }> };

export type BlueskyDiscussionQueryVariables = Exact<{
  id: string;
}>;


export type BlueskyDiscussionQuery = { discussion: { id: string, url: string | null } };

export type LinkBlueskyPostMutationVariables = Exact<{
  id: string;
  post?: string | null | undefined;
}>;


export type LinkBlueskyPostMutation = { upsertDiscussion: { discussion: { id: string, bluesky: { uri: string, url: string | null } | null } } };

export type PostDiscussionToBlueskyMutationVariables = Exact<{
  id: string;
}>;


export type PostDiscussionToBlueskyMutation = { postDiscussionToBluesky: { created: boolean, link: { discussionId: string, uri: string | null, url: string | null, posted: boolean, createdAt: string, polledAt: string | null, nextPollAt: string, lastError: string | null, replies: number } } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const EndpointFragmentDoc = new TypedDocumentString(`
    fragment Endpoint on WebhookEndpoint {
  webhookId
  url
  events
  description
  verified
  verifying
  state
  consecutiveFailures
  circuitOpenUntil
  kid
  delivery
  createdAt
}
    `, {"fragmentName":"Endpoint"}) as unknown as TypedDocumentString<EndpointFragment, unknown>;
export const AllSettingsFragmentDoc = new TypedDocumentString(`
    fragment AllSettings on Settings {
  moderation
  editWindowSeconds
  reactionKinds
  pageReactionKinds
  formatting {
    markdown
    images
  }
  votes
  maxBodyLength
  autoLockAfterDays
  delivery {
    maxAttempts
    backoffBaseMs
    attemptTimeoutMs
    breakerThreshold
    breakerCooldownMs
    disableThreshold
  }
  replay {
    maxEvents
    maxAgeSeconds
  }
  rateLimits {
    requestsPerMinute
    streamConnections
    publishableKeyRequestsPerMinute
    readerRequestsPerMinute
  }
  stream {
    maxConnectionSeconds
    heartbeatSeconds
  }
  allowedOrigins
  retention {
    deliveryLogDays
  }
  idempotency {
    ttlHours
  }
  inbox {
    retentionDays
  }
  identity {
    secretOverlapHours
  }
  federation {
    enabled
    handle
    domain
    url
    icon
    summary
    remoteModeration
    blockedDomains
  }
  bluesky {
    enabled
    handle
    service
    appView
    remoteModeration
    autoPost
    appPasswordSet
  }
}
    `, {"fragmentName":"AllSettings"}) as unknown as TypedDocumentString<AllSettingsFragment, unknown>;
export const SafetyFieldsFragmentDoc = new TypedDocumentString(`
    fragment SafetyFields on SafetySettings {
  bannedWords
  suspectWords
  maxLinks
  newReaderHold
  reportThreshold
  reportAction
  hook {
    url
    timeoutMs
    onTimeout
  }
  akismet {
    blog
    baseUrl
  }
}
    `, {"fragmentName":"SafetyFields"}) as unknown as TypedDocumentString<SafetyFieldsFragment, unknown>;
export const QueueCommentFragmentDoc = new TypedDocumentString(`
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
    `, {"fragmentName":"QueueComment"}) as unknown as TypedDocumentString<QueueCommentFragment, unknown>;
export const ReportedFragmentDoc = new TypedDocumentString(`
    fragment Reported on ReportedComment {
  status
  reportCount
  reasonCounts {
    reason
    count
  }
  notes {
    reason
    note
    createdAt
  }
  lastReportedAt
  dismissedAt
  comment {
    ...QueueComment
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`, {"fragmentName":"Reported"}) as unknown as TypedDocumentString<ReportedFragment, unknown>;
export const ReaderPageFragmentDoc = new TypedDocumentString(`
    fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`, {"fragmentName":"ReaderPage"}) as unknown as TypedDocumentString<ReaderPageFragment, unknown>;
export const IdentityFieldsFragmentDoc = new TypedDocumentString(`
    fragment IdentityFields on IdentitySettings {
  providers {
    issuer
    jwksUri
    audience
    algorithms
    claims {
      name
      picture
      email
    }
  }
  secretOverlapHours
}
    `, {"fragmentName":"IdentityFields"}) as unknown as TypedDocumentString<IdentityFieldsFragment, unknown>;
export const EmailFieldsFragmentDoc = new TypedDocumentString(`
    fragment EmailFields on EmailSettings {
  from
  replyTo
  digestHour
  defaultReplies
  maxPerReaderPerDay
  smtpUrl
}
    `, {"fragmentName":"EmailFields"}) as unknown as TypedDocumentString<EmailFieldsFragment, unknown>;
export const SignInFieldsFragmentDoc = new TypedDocumentString(`
    fragment SignInFields on SignInSettings {
  methods
  oidc {
    id
    label
    issuer
    authorizationEndpoint
    tokenEndpoint
    userinfoEndpoint
    clientId
    scopes
    claims {
      id
      name
      avatarUrl
      email
    }
  }
  guest {
    requireEmail
    moderation
  }
  sessionDays
}
    `, {"fragmentName":"SignInFields"}) as unknown as TypedDocumentString<SignInFieldsFragment, unknown>;
export const AlertFieldsFragmentDoc = new TypedDocumentString(`
    fragment AlertFields on AlertSettings {
  id
  kind
  url
  on
}
    `, {"fragmentName":"AlertFields"}) as unknown as TypedDocumentString<AlertFieldsFragment, unknown>;
export const AnnouncementFragmentDoc = new TypedDocumentString(`
    fragment Announcement on FederationAnnouncement {
  id
  state
  announced
  alreadyAnnounced
  failure
}
    `, {"fragmentName":"Announcement"}) as unknown as TypedDocumentString<AnnouncementFragment, unknown>;
export const BlueskyLinkRowFragmentDoc = new TypedDocumentString(`
    fragment BlueskyLinkRow on BlueskyLink {
  discussionId
  uri
  url
  posted
  createdAt
  polledAt
  nextPollAt
  lastError
  replies
}
    `, {"fragmentName":"BlueskyLinkRow"}) as unknown as TypedDocumentString<BlueskyLinkRowFragment, unknown>;
export const PendingCountDocument = new TypedDocumentString(`
    query PendingCount {
  pendingCommentCount
}
    `) as unknown as TypedDocumentString<PendingCountQuery, PendingCountQueryVariables>;
export const ModerationQueueDocument = new TypedDocumentString(`
    query ModerationQueue($status: ModerationQueueStatus, $sort: ModerationQueueSort, $first: Int, $after: String) {
  moderationQueue(status: $status, sort: $sort, first: $first, after: $after) {
    edges {
      node {
        ...QueueComment
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`) as unknown as TypedDocumentString<ModerationQueueQuery, ModerationQueueQueryVariables>;
export const PendingCommentsDocument = new TypedDocumentString(`
    subscription PendingComments {
  pendingComments {
    ...QueueComment
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`) as unknown as TypedDocumentString<PendingCommentsSubscription, PendingCommentsSubscriptionVariables>;
export const ApproveDocument = new TypedDocumentString(`
    mutation Approve($id: String!) {
  approveComment(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<ApproveMutation, ApproveMutationVariables>;
export const RejectDocument = new TypedDocumentString(`
    mutation Reject($id: String!) {
  rejectComment(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<RejectMutation, RejectMutationVariables>;
export const PinDocument = new TypedDocumentString(`
    mutation Pin($id: String!) {
  pinComment(id: $id) {
    id
    pinned
  }
}
    `) as unknown as TypedDocumentString<PinMutation, PinMutationVariables>;
export const UnpinDocument = new TypedDocumentString(`
    mutation Unpin($id: String!) {
  unpinComment(id: $id) {
    id
    pinned
  }
}
    `) as unknown as TypedDocumentString<UnpinMutation, UnpinMutationVariables>;
export const DeleteCommentDocument = new TypedDocumentString(`
    mutation DeleteComment($id: String!) {
  deleteComment(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<DeleteCommentMutation, DeleteCommentMutationVariables>;
export const DiscussionsDocument = new TypedDocumentString(`
    query Discussions($first: Int, $after: String) {
  discussions(first: $first, after: $after) {
    edges {
      node {
        id
        title
        url
        state
        commentCount
        createdAt
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `) as unknown as TypedDocumentString<DiscussionsQuery, DiscussionsQueryVariables>;
export const DiscussionThreadDocument = new TypedDocumentString(`
    query DiscussionThread($id: String!, $after: String) {
  discussion(id: $id) {
    id
    title
    url
    state
    commentCount
    reactions {
      kind
      count
    }
  }
  discussionCommentCounts(discussionId: $id) {
    approved
    pending
    rejected
    deleted
  }
  discussionComments(discussionId: $id, first: 100, after: $after) {
    edges {
      node {
        ...QueueComment
        depth
        replyCount
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`) as unknown as TypedDocumentString<DiscussionThreadQuery, DiscussionThreadQueryVariables>;
export const LockDiscussionDocument = new TypedDocumentString(`
    mutation LockDiscussion($id: String!) {
  lockDiscussion(id: $id) {
    id
    state
  }
}
    `) as unknown as TypedDocumentString<LockDiscussionMutation, LockDiscussionMutationVariables>;
export const UnlockDiscussionDocument = new TypedDocumentString(`
    mutation UnlockDiscussion($id: String!) {
  unlockDiscussion(id: $id) {
    id
    state
  }
}
    `) as unknown as TypedDocumentString<UnlockDiscussionMutation, UnlockDiscussionMutationVariables>;
export const ArchiveDiscussionDocument = new TypedDocumentString(`
    mutation ArchiveDiscussion($id: String!) {
  archiveDiscussion(id: $id) {
    id
    state
  }
}
    `) as unknown as TypedDocumentString<ArchiveDiscussionMutation, ArchiveDiscussionMutationVariables>;
export const KeysDocument = new TypedDocumentString(`
    query Keys {
  apiKeys(first: 100) {
    edges {
      node {
        id
        label
        prefix
        capabilities
        state
        expiresAt
        lastUsedAt
        createdAt
      }
    }
  }
  publishableKeys(first: 100) {
    edges {
      node {
        id
        label
        prefix
        state
        lastUsedAt
        createdAt
      }
    }
  }
}
    `) as unknown as TypedDocumentString<KeysQuery, KeysQueryVariables>;
export const CreateKeyDocument = new TypedDocumentString(`
    mutation CreateKey($input: CreateApiKeyInput!) {
  createApiKey(input: $input) {
    key
    apiKey {
      id
    }
  }
}
    `) as unknown as TypedDocumentString<CreateKeyMutation, CreateKeyMutationVariables>;
export const CreatePublishableKeyDocument = new TypedDocumentString(`
    mutation CreatePublishableKey($label: String!) {
  createPublishableKey(input: {label: $label}) {
    key
    publishableKey {
      id
    }
  }
}
    `) as unknown as TypedDocumentString<CreatePublishableKeyMutation, CreatePublishableKeyMutationVariables>;
export const RevokeKeyDocument = new TypedDocumentString(`
    mutation RevokeKey($id: String!) {
  revokeApiKey(id: $id) {
    id
    state
  }
}
    `) as unknown as TypedDocumentString<RevokeKeyMutation, RevokeKeyMutationVariables>;
export const RevokePublishableKeyDocument = new TypedDocumentString(`
    mutation RevokePublishableKey($id: String!) {
  revokePublishableKey(id: $id) {
    id
    state
  }
}
    `) as unknown as TypedDocumentString<RevokePublishableKeyMutation, RevokePublishableKeyMutationVariables>;
export const WebhooksDocument = new TypedDocumentString(`
    query Webhooks {
  webhooks(first: 100) {
    edges {
      node {
        ...Endpoint
      }
    }
  }
}
    fragment Endpoint on WebhookEndpoint {
  webhookId
  url
  events
  description
  verified
  verifying
  state
  consecutiveFailures
  circuitOpenUntil
  kid
  delivery
  createdAt
}`) as unknown as TypedDocumentString<WebhooksQuery, WebhooksQueryVariables>;
export const CreateWebhookDocument = new TypedDocumentString(`
    mutation CreateWebhook($input: CreateWebhookInput!) {
  createWebhook(input: $input) {
    secret
    standardWebhooksSecret
    endpoint {
      ...Endpoint
    }
  }
}
    fragment Endpoint on WebhookEndpoint {
  webhookId
  url
  events
  description
  verified
  verifying
  state
  consecutiveFailures
  circuitOpenUntil
  kid
  delivery
  createdAt
}`) as unknown as TypedDocumentString<CreateWebhookMutation, CreateWebhookMutationVariables>;
export const UpdateWebhookDocument = new TypedDocumentString(`
    mutation UpdateWebhook($id: String!, $input: UpdateWebhookInput!) {
  updateWebhook(webhookId: $id, input: $input) {
    ...Endpoint
  }
}
    fragment Endpoint on WebhookEndpoint {
  webhookId
  url
  events
  description
  verified
  verifying
  state
  consecutiveFailures
  circuitOpenUntil
  kid
  delivery
  createdAt
}`) as unknown as TypedDocumentString<UpdateWebhookMutation, UpdateWebhookMutationVariables>;
export const VerifyWebhookDocument = new TypedDocumentString(`
    mutation VerifyWebhook($id: String!) {
  verifyWebhookEndpoint(webhookId: $id) {
    verified
    error
  }
}
    `) as unknown as TypedDocumentString<VerifyWebhookMutation, VerifyWebhookMutationVariables>;
export const RotateWebhookSecretDocument = new TypedDocumentString(`
    mutation RotateWebhookSecret($id: String!) {
  rotateWebhookSecret(webhookId: $id) {
    secret
    standardWebhooksSecret
    kid
    previousKidValidUntil
  }
}
    `) as unknown as TypedDocumentString<RotateWebhookSecretMutation, RotateWebhookSecretMutationVariables>;
export const EnableWebhookDocument = new TypedDocumentString(`
    mutation EnableWebhook($id: String!) {
  enableWebhook(webhookId: $id) {
    ...Endpoint
  }
}
    fragment Endpoint on WebhookEndpoint {
  webhookId
  url
  events
  description
  verified
  verifying
  state
  consecutiveFailures
  circuitOpenUntil
  kid
  delivery
  createdAt
}`) as unknown as TypedDocumentString<EnableWebhookMutation, EnableWebhookMutationVariables>;
export const RedeliverWebhookDocument = new TypedDocumentString(`
    mutation RedeliverWebhook($id: String!, $input: RedeliverWebhookInput!) {
  redeliverWebhook(webhookId: $id, input: $input) {
    queued
  }
}
    `) as unknown as TypedDocumentString<RedeliverWebhookMutation, RedeliverWebhookMutationVariables>;
export const DeliveriesDocument = new TypedDocumentString(`
    query Deliveries($id: String!, $after: String) {
  webhookDeliveries(webhookId: $id, first: 20, after: $after) {
    edges {
      node {
        id
        eventId
        eventType
        attempt
        statusCode
        durationMs
        error
        createdAt
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `) as unknown as TypedDocumentString<DeliveriesQuery, DeliveriesQueryVariables>;
export const SettingsDocument = new TypedDocumentString(`
    query Settings {
  settings {
    ...AllSettings
  }
}
    fragment AllSettings on Settings {
  moderation
  editWindowSeconds
  reactionKinds
  pageReactionKinds
  formatting {
    markdown
    images
  }
  votes
  maxBodyLength
  autoLockAfterDays
  delivery {
    maxAttempts
    backoffBaseMs
    attemptTimeoutMs
    breakerThreshold
    breakerCooldownMs
    disableThreshold
  }
  replay {
    maxEvents
    maxAgeSeconds
  }
  rateLimits {
    requestsPerMinute
    streamConnections
    publishableKeyRequestsPerMinute
    readerRequestsPerMinute
  }
  stream {
    maxConnectionSeconds
    heartbeatSeconds
  }
  allowedOrigins
  retention {
    deliveryLogDays
  }
  idempotency {
    ttlHours
  }
  inbox {
    retentionDays
  }
  identity {
    secretOverlapHours
  }
  federation {
    enabled
    handle
    domain
    url
    icon
    summary
    remoteModeration
    blockedDomains
  }
  bluesky {
    enabled
    handle
    service
    appView
    remoteModeration
    autoPost
    appPasswordSet
  }
}`) as unknown as TypedDocumentString<SettingsQuery, SettingsQueryVariables>;
export const UpdateSettingsDocument = new TypedDocumentString(`
    mutation UpdateSettings($input: SettingsPatch!) {
  updateSettings(input: $input) {
    ...AllSettings
  }
}
    fragment AllSettings on Settings {
  moderation
  editWindowSeconds
  reactionKinds
  pageReactionKinds
  formatting {
    markdown
    images
  }
  votes
  maxBodyLength
  autoLockAfterDays
  delivery {
    maxAttempts
    backoffBaseMs
    attemptTimeoutMs
    breakerThreshold
    breakerCooldownMs
    disableThreshold
  }
  replay {
    maxEvents
    maxAgeSeconds
  }
  rateLimits {
    requestsPerMinute
    streamConnections
    publishableKeyRequestsPerMinute
    readerRequestsPerMinute
  }
  stream {
    maxConnectionSeconds
    heartbeatSeconds
  }
  allowedOrigins
  retention {
    deliveryLogDays
  }
  idempotency {
    ttlHours
  }
  inbox {
    retentionDays
  }
  identity {
    secretOverlapHours
  }
  federation {
    enabled
    handle
    domain
    url
    icon
    summary
    remoteModeration
    blockedDomains
  }
  bluesky {
    enabled
    handle
    service
    appView
    remoteModeration
    autoPost
    appPasswordSet
  }
}`) as unknown as TypedDocumentString<UpdateSettingsMutation, UpdateSettingsMutationVariables>;
export const RotateIdentitySecretDocument = new TypedDocumentString(`
    mutation RotateIdentitySecret {
  rotateIdentitySecret {
    identitySecret
    kid
    previousSecretExpiresAt
  }
}
    `) as unknown as TypedDocumentString<RotateIdentitySecretMutation, RotateIdentitySecretMutationVariables>;
export const AnalyticsDocument = new TypedDocumentString(`
    query Analytics($from: String, $to: String, $interval: AnalyticsInterval) {
  analytics(from: $from, to: $to, interval: $interval) {
    from
    to
    interval
    followers
    totals {
      comments
      replies
      reactions
      pageReactions
      activeReaders
      moderationActions
      webhookDeliveries {
        ok
        failed
      }
      newFollowers
    }
    buckets {
      start
      comments
      replies
      reactions
      pageReactions
      activeReaders
      moderationActions
      webhookDeliveries {
        ok
        failed
      }
      newFollowers
    }
  }
}
    `) as unknown as TypedDocumentString<AnalyticsQuery, AnalyticsQueryVariables>;
export const AuditLogDocument = new TypedDocumentString(`
    query AuditLog($actor: String, $action: String, $after: String) {
  auditLog(actor: $actor, action: $action, first: 25, after: $after) {
    edges {
      node {
        id
        at
        actor {
          type
          id
          label
        }
        action
        resource {
          type
          id
        }
        changes {
          field
          from
          to
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `) as unknown as TypedDocumentString<AuditLogQuery, AuditLogQueryVariables>;
export const SafetySettingsDocument = new TypedDocumentString(`
    query SafetySettings {
  settings {
    moderation
    safety {
      ...SafetyFields
    }
  }
}
    fragment SafetyFields on SafetySettings {
  bannedWords
  suspectWords
  maxLinks
  newReaderHold
  reportThreshold
  reportAction
  hook {
    url
    timeoutMs
    onTimeout
  }
  akismet {
    blog
    baseUrl
  }
}`) as unknown as TypedDocumentString<SafetySettingsQuery, SafetySettingsQueryVariables>;
export const UpdateSafetyDocument = new TypedDocumentString(`
    mutation UpdateSafety($input: SettingsPatch!) {
  updateSettings(input: $input) {
    moderation
    safety {
      ...SafetyFields
      hook {
        secret
      }
    }
  }
}
    fragment SafetyFields on SafetySettings {
  bannedWords
  suspectWords
  maxLinks
  newReaderHold
  reportThreshold
  reportAction
  hook {
    url
    timeoutMs
    onTimeout
  }
  akismet {
    blog
    baseUrl
  }
}`) as unknown as TypedDocumentString<UpdateSafetyMutation, UpdateSafetyMutationVariables>;
export const TestSafetyHookDocument = new TypedDocumentString(`
    mutation TestSafetyHook {
  testSafetyHook {
    ok
    status
    decision
    reason
    latencyMs
    error
  }
}
    `) as unknown as TypedDocumentString<TestSafetyHookMutation, TestSafetyHookMutationVariables>;
export const VerifyAkismetKeyDocument = new TypedDocumentString(`
    mutation VerifyAkismetKey($input: AkismetKeyInput) {
  verifyAkismetKey(input: $input) {
    valid
    error
    debugHelp
    latencyMs
  }
}
    `) as unknown as TypedDocumentString<VerifyAkismetKeyMutation, VerifyAkismetKeyMutationVariables>;
export const ReportsDocument = new TypedDocumentString(`
    query Reports($status: ReportStatus, $first: Int, $after: String) {
  reports(status: $status, first: $first, after: $after) {
    edges {
      node {
        ...Reported
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment Reported on ReportedComment {
  status
  reportCount
  reasonCounts {
    reason
    count
  }
  notes {
    reason
    note
    createdAt
  }
  lastReportedAt
  dismissedAt
  comment {
    ...QueueComment
  }
}`) as unknown as TypedDocumentString<ReportsQuery, ReportsQueryVariables>;
export const DismissReportsDocument = new TypedDocumentString(`
    mutation DismissReports($commentId: String!) {
  dismissReports(commentId: $commentId) {
    ...Reported
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment Reported on ReportedComment {
  status
  reportCount
  reasonCounts {
    reason
    count
  }
  notes {
    reason
    note
    createdAt
  }
  lastReportedAt
  dismissedAt
  comment {
    ...QueueComment
  }
}`) as unknown as TypedDocumentString<DismissReportsMutation, DismissReportsMutationVariables>;
export const ReaderDocument = new TypedDocumentString(`
    query Reader($id: String!) {
  reader(id: $id) {
    ...ReaderPage
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}`) as unknown as TypedDocumentString<ReaderQuery, ReaderQueryVariables>;
export const BanReaderDocument = new TypedDocumentString(`
    mutation BanReader($id: String!, $input: BanReaderInput) {
  banReader(id: $id, input: $input) {
    ...ReaderPage
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}`) as unknown as TypedDocumentString<BanReaderMutation, BanReaderMutationVariables>;
export const UpdateReaderBadgeDocument = new TypedDocumentString(`
    mutation UpdateReaderBadge($id: String!, $badge: String) {
  updateReader(id: $id, input: {badge: $badge}) {
    ...ReaderPage
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}`) as unknown as TypedDocumentString<UpdateReaderBadgeMutation, UpdateReaderBadgeMutationVariables>;
export const SetReaderTrustDocument = new TypedDocumentString(`
    mutation SetReaderTrust($id: String!, $level: TrustLevel!) {
  setReaderTrust(id: $id, input: {level: $level}) {
    ...ReaderPage
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}`) as unknown as TypedDocumentString<SetReaderTrustMutation, SetReaderTrustMutationVariables>;
export const LiftReaderBanDocument = new TypedDocumentString(`
    mutation LiftReaderBan($id: String!) {
  liftReaderBan(id: $id) {
    ...ReaderPage
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}
fragment ReaderPage on ReaderProfile {
  id
  name
  avatarUrl
  badge
  badgeSource
  trustLevel
  createdAt
  commentCounts {
    approved
    pending
    rejected
    deleted
  }
  openReports
  sanction {
    until
    reason
    shadow
    createdAt
  }
  recentComments {
    ...QueueComment
  }
  emailStatus
  replyEmails
  replyEmailsChosen
  following {
    discussionId
    title
    mode
    since
  }
  followingCount
  inboxItems
  inboxUnread
  signIn {
    method
    provider
    providerLabel
    at
  }
}`) as unknown as TypedDocumentString<LiftReaderBanMutation, LiftReaderBanMutationVariables>;
export const IdentitySettingsDocument = new TypedDocumentString(`
    query IdentitySettings {
  settings {
    identity {
      ...IdentityFields
    }
  }
}
    fragment IdentityFields on IdentitySettings {
  providers {
    issuer
    jwksUri
    audience
    algorithms
    claims {
      name
      picture
      email
    }
  }
  secretOverlapHours
}`) as unknown as TypedDocumentString<IdentitySettingsQuery, IdentitySettingsQueryVariables>;
export const UpdateIdentityDocument = new TypedDocumentString(`
    mutation UpdateIdentity($input: SettingsPatch!) {
  updateSettings(input: $input) {
    identity {
      ...IdentityFields
    }
  }
}
    fragment IdentityFields on IdentitySettings {
  providers {
    issuer
    jwksUri
    audience
    algorithms
    claims {
      name
      picture
      email
    }
  }
  secretOverlapHours
}`) as unknown as TypedDocumentString<UpdateIdentityMutation, UpdateIdentityMutationVariables>;
export const TestIdentityTokenDocument = new TypedDocumentString(`
    mutation TestIdentityToken($token: String!) {
  testIdentityToken(token: $token) {
    ok
    error
    reader {
      id
      name
      avatarUrl
      email
      emailVerified
    }
    claims
    header {
      alg
      kid
    }
  }
}
    `) as unknown as TypedDocumentString<TestIdentityTokenMutation, TestIdentityTokenMutationVariables>;
export const ReaderExportDocument = new TypedDocumentString(`
    query ReaderExport($id: String!) {
  readerExport(id: $id)
}
    `) as unknown as TypedDocumentString<ReaderExportQuery, ReaderExportQueryVariables>;
export const ReaderErasureModeDocument = new TypedDocumentString(`
    query ReaderErasureMode {
  settings {
    privacy {
      erasure
    }
  }
}
    `) as unknown as TypedDocumentString<ReaderErasureModeQuery, ReaderErasureModeQueryVariables>;
export const EraseReaderDocument = new TypedDocumentString(`
    mutation EraseReader($id: String!) {
  eraseReader(id: $id) {
    readerId
    mode
    profileRemoved
    commentsAnonymized
    commentsDeleted
    commentsTombstoned
    reactionsRemoved
    reportsRemoved
    eventsScrubbed
  }
}
    `) as unknown as TypedDocumentString<EraseReaderMutation, EraseReaderMutationVariables>;
export const EmailSettingsDocument = new TypedDocumentString(`
    query EmailSettings {
  emailStatus {
    mode
    from
  }
  settings {
    email {
      ...EmailFields
    }
  }
}
    fragment EmailFields on EmailSettings {
  from
  replyTo
  digestHour
  defaultReplies
  maxPerReaderPerDay
  smtpUrl
}`) as unknown as TypedDocumentString<EmailSettingsQuery, EmailSettingsQueryVariables>;
export const EmailModeDocument = new TypedDocumentString(`
    query EmailMode {
  emailStatus {
    mode
  }
}
    `) as unknown as TypedDocumentString<EmailModeQuery, EmailModeQueryVariables>;
export const UpdateEmailSettingsDocument = new TypedDocumentString(`
    mutation UpdateEmailSettings($input: SettingsPatch!) {
  updateSettings(input: $input) {
    email {
      ...EmailFields
    }
  }
}
    fragment EmailFields on EmailSettings {
  from
  replyTo
  digestHour
  defaultReplies
  maxPerReaderPerDay
  smtpUrl
}`) as unknown as TypedDocumentString<UpdateEmailSettingsMutation, UpdateEmailSettingsMutationVariables>;
export const SendTestEmailDocument = new TypedDocumentString(`
    mutation SendTestEmail($to: String!) {
  sendTestEmail(to: $to) {
    sent
    messageId
    error
  }
}
    `) as unknown as TypedDocumentString<SendTestEmailMutation, SendTestEmailMutationVariables>;
export const OutboxDocument = new TypedDocumentString(`
    query Outbox($after: String) {
  emailMessages(state: "outbox", first: 20, after: $after) {
    edges {
      node {
        id
        subject
        to
        kind
        itemCount
        createdAt
        text
        html
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    `) as unknown as TypedDocumentString<OutboxQuery, OutboxQueryVariables>;
export const MyModerationDigestDocument = new TypedDocumentString(`
    query MyModerationDigest {
  myModerationDigest {
    frequency
    nextAt
  }
}
    `) as unknown as TypedDocumentString<MyModerationDigestQuery, MyModerationDigestQueryVariables>;
export const UpdateMyModerationDigestDocument = new TypedDocumentString(`
    mutation UpdateMyModerationDigest($frequency: String!) {
  updateMyModerationDigest(frequency: $frequency) {
    frequency
    nextAt
  }
}
    `) as unknown as TypedDocumentString<UpdateMyModerationDigestMutation, UpdateMyModerationDigestMutationVariables>;
export const SearchCommentsDocument = new TypedDocumentString(`
    query SearchComments($q: String, $status: CommentStatus, $discussionId: String, $readerId: String, $hasLinks: Boolean, $reported: Boolean, $from: String, $to: String, $first: Int, $after: String) {
  searchComments(
    q: $q
    status: $status
    discussionId: $discussionId
    readerId: $readerId
    hasLinks: $hasLinks
    reported: $reported
    from: $from
    to: $to
    first: $first
    after: $after
  ) {
    edges {
      node {
        ...QueueComment
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
  }
}
    fragment QueueComment on Comment {
  id
  discussionId
  parentId
  body
  bodyHtml
  status
  pinned
  createdAt
  author {
    id
    name
    badge
  }
  discussionTitle
  moderationReason
  parent {
    id
    status
    excerpt
    author {
      id
      name
      badge
    }
  }
}`) as unknown as TypedDocumentString<SearchCommentsQuery, SearchCommentsQueryVariables>;
export const SignInSettingsDocument = new TypedDocumentString(`
    query SignInSettings {
  settings {
    signIn {
      ...SignInFields
    }
  }
}
    fragment SignInFields on SignInSettings {
  methods
  oidc {
    id
    label
    issuer
    authorizationEndpoint
    tokenEndpoint
    userinfoEndpoint
    clientId
    scopes
    claims {
      id
      name
      avatarUrl
      email
    }
  }
  guest {
    requireEmail
    moderation
  }
  sessionDays
}`) as unknown as TypedDocumentString<SignInSettingsQuery, SignInSettingsQueryVariables>;
export const UpdateSignInDocument = new TypedDocumentString(`
    mutation UpdateSignIn($input: SettingsPatch!) {
  updateSettings(input: $input) {
    signIn {
      ...SignInFields
    }
  }
}
    fragment SignInFields on SignInSettings {
  methods
  oidc {
    id
    label
    issuer
    authorizationEndpoint
    tokenEndpoint
    userinfoEndpoint
    clientId
    scopes
    claims {
      id
      name
      avatarUrl
      email
    }
  }
  guest {
    requireEmail
    moderation
  }
  sessionDays
}`) as unknown as TypedDocumentString<UpdateSignInMutation, UpdateSignInMutationVariables>;
export const TestSignInProviderDocument = new TypedDocumentString(`
    mutation TestSignInProvider($id: String!) {
  testSignInProvider(id: $id) {
    ok
    latencyMs
    redirectUri
    checks {
      endpoint
      url
      ok
      status
      error
    }
  }
}
    `) as unknown as TypedDocumentString<TestSignInProviderMutation, TestSignInProviderMutationVariables>;
export const AlertSettingsDocument = new TypedDocumentString(`
    query AlertSettings {
  settings {
    alerts {
      ...AlertFields
    }
  }
}
    fragment AlertFields on AlertSettings {
  id
  kind
  url
  on
}`) as unknown as TypedDocumentString<AlertSettingsQuery, AlertSettingsQueryVariables>;
export const UpdateAlertsDocument = new TypedDocumentString(`
    mutation UpdateAlerts($input: SettingsPatch!) {
  updateSettings(input: $input) {
    alerts {
      ...AlertFields
    }
  }
}
    fragment AlertFields on AlertSettings {
  id
  kind
  url
  on
}`) as unknown as TypedDocumentString<UpdateAlertsMutation, UpdateAlertsMutationVariables>;
export const TestAlertDocument = new TypedDocumentString(`
    mutation TestAlert($index: Int!) {
  testAlert(index: $index) {
    ok
    status
    latencyMs
    error
  }
}
    `) as unknown as TypedDocumentString<TestAlertMutation, TestAlertMutationVariables>;
export const BlockedDomainsDocument = new TypedDocumentString(`
    query BlockedDomains {
  settings {
    federation {
      blockedDomains
    }
  }
}
    `) as unknown as TypedDocumentString<BlockedDomainsQuery, BlockedDomainsQueryVariables>;
export const BlockDomainDocument = new TypedDocumentString(`
    mutation BlockDomain($input: SettingsPatch!) {
  updateSettings(input: $input) {
    federation {
      blockedDomains
    }
  }
}
    `) as unknown as TypedDocumentString<BlockDomainMutation, BlockDomainMutationVariables>;
export const FederationStatusDocument = new TypedDocumentString(`
    query FederationStatus {
  federationStatus {
    enabled
    served
    address
    followers
  }
}
    `) as unknown as TypedDocumentString<FederationStatusQuery, FederationStatusQueryVariables>;
export const AnnounceDiscussionsDocument = new TypedDocumentString(`
    mutation AnnounceDiscussions {
  announceDiscussions {
    ...Announcement
  }
}
    fragment Announcement on FederationAnnouncement {
  id
  state
  announced
  alreadyAnnounced
  failure
}`) as unknown as TypedDocumentString<AnnounceDiscussionsMutation, AnnounceDiscussionsMutationVariables>;
export const FederationAnnouncementDocument = new TypedDocumentString(`
    query FederationAnnouncement($id: String!) {
  federationAnnouncement(id: $id) {
    ...Announcement
  }
}
    fragment Announcement on FederationAnnouncement {
  id
  state
  announced
  alreadyAnnounced
  failure
}`) as unknown as TypedDocumentString<FederationAnnouncementQuery, FederationAnnouncementQueryVariables>;
export const BlueskyLinksDocument = new TypedDocumentString(`
    query BlueskyLinks($limit: Int) {
  blueskyLinks(limit: $limit) {
    ...BlueskyLinkRow
  }
}
    fragment BlueskyLinkRow on BlueskyLink {
  discussionId
  uri
  url
  posted
  createdAt
  polledAt
  nextPollAt
  lastError
  replies
}`) as unknown as TypedDocumentString<BlueskyLinksQuery, BlueskyLinksQueryVariables>;
export const BlueskyDiscussionDocument = new TypedDocumentString(`
    query BlueskyDiscussion($id: String!) {
  discussion(id: $id) {
    id
    url
  }
}
    `) as unknown as TypedDocumentString<BlueskyDiscussionQuery, BlueskyDiscussionQueryVariables>;
export const LinkBlueskyPostDocument = new TypedDocumentString(`
    mutation LinkBlueskyPost($id: String!, $post: String) {
  upsertDiscussion(id: $id, input: {bluesky: $post}) {
    discussion {
      id
      bluesky {
        uri
        url
      }
    }
  }
}
    `) as unknown as TypedDocumentString<LinkBlueskyPostMutation, LinkBlueskyPostMutationVariables>;
export const PostDiscussionToBlueskyDocument = new TypedDocumentString(`
    mutation PostDiscussionToBluesky($id: String!) {
  postDiscussionToBluesky(id: $id) {
    created
    link {
      ...BlueskyLinkRow
    }
  }
}
    fragment BlueskyLinkRow on BlueskyLink {
  discussionId
  uri
  url
  posted
  createdAt
  polledAt
  nextPollAt
  lastError
  replies
}`) as unknown as TypedDocumentString<PostDiscussionToBlueskyMutation, PostDiscussionToBlueskyMutationVariables>;