/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
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

export type CommentListStatus =
  | 'approved'
  | 'pending'
  | 'rejected';

export type CommentSort =
  | 'best'
  | 'newest'
  | 'oldest'
  | 'score'
  | 'top';

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

export type DeliverySettingsPatch = {
  attemptTimeoutMs?: number | null | undefined;
  backoffBaseMs?: number | null | undefined;
  breakerCooldownMs?: number | null | undefined;
  breakerThreshold?: number | null | undefined;
  disableThreshold?: number | null | undefined;
  maxAttempts?: number | null | undefined;
};

export type DiscussionInput = {
  /** Links the discussion to a Bluesky post (an at:// URI or a https://bsky.app/profile/…/post/… URL; its replies come in as comments, contract section 30); null unlinks. Needs settings bluesky.enabled and the discussion's url. */
  bluesky?: string | null | undefined;
  title?: string | null | undefined;
  url?: string | null | undefined;
};

export type DiscussionState =
  | 'archived'
  | 'locked'
  | 'open';

export type DiscussionsSettingsPatch = {
  autoCreate?: boolean | null | undefined;
  autoCreatePerMinute?: number | null | undefined;
};

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

export type PostCommentInput = {
  /** 1..maxBodyLength characters (setting, default 10,000). */
  body?: string | null | undefined;
  /** Through a publishable key, from a page of allowedOrigins: the page's URL and title, used when this comment creates the discussion (settings discussions.autoCreate); ignored when it exists. */
  discussion?: PostCommentPageInput | null | undefined;
  /** Reply to this comment of the same discussion. */
  parentId?: string | null | undefined;
};

/** The page a browser's comment comes from, for a discussion its first comment creates (settings discussions.autoCreate). */
export type PostCommentPageInput = {
  /** The page's title (one line, at most 500 characters). */
  title?: string | null | undefined;
  /** The page's URL: http(s), on the origin the request comes from. */
  url?: string | null | undefined;
};

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

export type ReplaySettingsPatch = {
  maxAgeSeconds?: number | null | undefined;
  maxEvents?: number | null | undefined;
};

export type ReportCommentInput = {
  /** Up to 500 characters, for moderators. */
  note?: string | null | undefined;
  /** spam | abuse | off_topic | other */
  reason?: string | null | undefined;
};

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

export type ToggleDiscussionReactionInput = {
  /** One of the tenant's pageReactionKinds. */
  kind?: string | null | undefined;
};

export type ToggleReactionInput = {
  /** One of the tenant's reactionKinds. */
  kind?: string | null | undefined;
};

export type VoteInput = {
  /** 1 (up), -1 (down, only with settings votes "updown") or 0 (take the vote back). */
  value?: number | null | undefined;
};

export type WebhookState =
  | 'active'
  | 'circuit_open'
  | 'disabled';

export type TestCommentsQueryVariables = Exact<{
  discussionId: string;
  sort?: CommentSort | null | undefined;
  status?: CommentListStatus | null | undefined;
  limit?: number | null | undefined;
  cursor?: string | null | undefined;
}>;


export type TestCommentsQuery = { comments: { nextCursor: string | null, items: Array<{ id: string, parentId: string | null, depth: number | null, status: CommentStatus, body: string, replyCount: number, author: { id: string, name: string, avatarUrl: string | null }, reactions: Array<{ kind: string, count: number }> }> } };

export type TestCommentQueryVariables = Exact<{
  id: string;
}>;


export type TestCommentQuery = { comment: { id: string, status: CommentStatus, body: string } };

export type TestPostCommentMutationVariables = Exact<{
  discussionId: string;
  input: PostCommentInput;
}>;


export type TestPostCommentMutation = { postComment: { id: string, discussionId: string, status: CommentStatus, depth: number | null, author: { id: string, name: string } } };

export type TestApproveCommentMutationVariables = Exact<{
  id: string;
}>;


export type TestApproveCommentMutation = { approveComment: { id: string, status: CommentStatus } };

export type TestToggleReactionMutationVariables = Exact<{
  commentId: string;
  input: ToggleReactionInput;
}>;


export type TestToggleReactionMutation = { toggleReaction: { commentId: string, readerId: string, kind: string, active: boolean, counts: Array<{ kind: string, count: number }> } };

export type TestModerationReasonQueryVariables = Exact<{
  id: string;
}>;


export type TestModerationReasonQuery = { comment: { id: string, status: CommentStatus, moderationReason: unknown } };

export type TestQueueReasonsQueryVariables = Exact<{ [key: string]: never; }>;


export type TestQueueReasonsQuery = { moderationQueue: { items: Array<{ id: string, moderationReason: unknown }> } };

export type TestCommentContextQueryVariables = Exact<{
  id: string | number;
  sort?: CommentSort | null | undefined;
  topLevel?: boolean | null | undefined;
}>;


export type TestCommentContextQuery = { commentContext: { rootCursor: string, comment: { id: string, depth: number | null }, ancestors: Array<{ id: string, depth: number | null, author: { name: string } }> } };

export type TestVoteMutationVariables = Exact<{
  commentId: string;
  input: VoteInput;
}>;


export type TestVoteMutation = { vote: { commentId: string, readerId: string, kind: string, value: number, score: number, upvotes: number, downvotes: number, comment: { id: string, score: number, upvotes: number, downvotes: number, myVote: number | null } } };

export type TestVotedCommentsQueryVariables = Exact<{
  discussionId: string;
  sort?: CommentSort | null | undefined;
  limit?: number | null | undefined;
  cursor?: string | null | undefined;
}>;


export type TestVotedCommentsQuery = { comments: { nextCursor: string | null, items: Array<{ id: string, score: number, upvotes: number, downvotes: number, myVote: number | null }> } };

export type TestUpsertDiscussionMutationVariables = Exact<{
  id: string;
  input?: DiscussionInput | null | undefined;
}>;


export type TestUpsertDiscussionMutation = { upsertDiscussion: { created: boolean, discussion: { id: string, title: string | null, state: DiscussionState } } };

export type TestToggleDiscussionReactionMutationVariables = Exact<{
  discussionId: string;
  input: ToggleDiscussionReactionInput;
}>;


export type TestToggleDiscussionReactionMutation = { toggleDiscussionReaction: { discussionId: string, readerId: string, kind: string, active: boolean, countMap: unknown, counts: Array<{ kind: string, count: number }>, discussion: { id: string, reactionMap: unknown, myReactions: Array<string> | null } } };

export type TestDiscussionReactionsQueryVariables = Exact<{
  id: string;
}>;


export type TestDiscussionReactionsQuery = { discussion: { id: string, reactionMap: unknown, myReactions: Array<string> | null, reactions: Array<{ kind: string, count: number }> } };

export type TestReaderSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type TestReaderSettingsQuery = { readerSettings: { reactionKinds: Array<string>, pageReactionKinds: Array<string> } };

export type TestFederationSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type TestFederationSettingsQuery = { settings: { federation: { enabled: boolean, handle: string | null, remoteModeration: Moderation, blockedDomains: Array<string>, url: string | null, icon: string | null, summary: string | null, domain: string | null } } };

export type TestUpdateFederationSettingsMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type TestUpdateFederationSettingsMutation = { updateSettings: { federation: { enabled: boolean, handle: string | null, remoteModeration: Moderation, blockedDomains: Array<string>, url: string | null, icon: string | null, summary: string | null, domain: string | null } } };

export type TestIdentityTokenMutationVariables = Exact<{
  token: string;
}>;


export type TestIdentityTokenMutation = { testIdentityToken: { ok: boolean, error: string | null, claims: unknown, reader: { id: string, name: string, avatarUrl: string | null, email: string | null, emailVerified: boolean } | null, header: { alg: string | null, kid: string | null } | null } };

export type TestCreateApiKeyMutationVariables = Exact<{
  input: CreateApiKeyInput;
}>;


export type TestCreateApiKeyMutation = { createApiKey: { key: string, apiKey: { id: string, prefix: string, label: string, capabilities: Array<Capability>, state: ApiKeyState, expiresAt: string | null } } };

export type TestListApiKeysQueryVariables = Exact<{
  limit?: number | null | undefined;
  cursor?: string | null | undefined;
}>;


export type TestListApiKeysQuery = { apiKeys: { nextCursor: string | null, items: Array<{ id: string, prefix: string, state: ApiKeyState, capabilities: Array<Capability>, lastUsedAt: string | null }> } };

export type TestRevokeApiKeyMutationVariables = Exact<{
  id: string;
}>;


export type TestRevokeApiKeyMutation = { revokeApiKey: { id: string, state: ApiKeyState, revokedAt: string | null } };

export type TestSetSafetyHookMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type TestSetSafetyHookMutation = { updateSettings: { safety: { hook: { url: string, timeoutMs: number, onTimeout: ModerationHookFallback, secret: string | null } | null } } };

export type TestSafetyHookMutationVariables = Exact<{ [key: string]: never; }>;


export type TestSafetyHookMutation = { testSafetyHook: { ok: boolean, status: number | null, decision: ModerationHookDecision | null, reason: string | null, latencyMs: number, error: string | null } };

export type TestReaderExportQueryVariables = Exact<{
  id: string;
}>;


export type TestReaderExportQuery = { readerExport: unknown };

export type TestMyExportQueryVariables = Exact<{ [key: string]: never; }>;


export type TestMyExportQuery = { myExport: unknown };

export type TestEraseReaderMutationVariables = Exact<{
  id: string;
}>;


export type TestEraseReaderMutation = { eraseReader: { readerId: string, mode: string, commentsAnonymized: number, commentsDeleted: number, commentsTombstoned: number, reactionsRemoved: number, reportsRemoved: number, eventsScrubbed: number, profileRemoved: boolean } };

export type TestEraseMeMutationVariables = Exact<{ [key: string]: never; }>;


export type TestEraseMeMutation = { eraseMe: { readerId: string, mode: string, commentsDeleted: number } };

export type TestReportCommentMutationVariables = Exact<{
  id: string;
  input: ReportCommentInput;
}>;


export type TestReportCommentMutation = { reportComment: { created: boolean, report: { id: string, commentId: string, reason: ReportReason, note: string | null, status: ReportStatus } } };

export type TestReportsQueryVariables = Exact<{
  status?: ReportStatus | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type TestReportsQuery = { reports: { edges: Array<{ node: { reportCount: number, reasons: unknown, comment: { id: string, status: CommentStatus, moderationReason: unknown }, reasonCounts: Array<{ reason: ReportReason, count: number }>, notes: Array<{ reason: ReportReason, note: string }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type TestDismissReportsMutationVariables = Exact<{
  commentId: string;
}>;


export type TestDismissReportsMutation = { dismissReports: { status: ReportStatus, reportCount: number, comment: { id: string, status: CommentStatus } } };

export type TestReaderQueryVariables = Exact<{
  id: string;
}>;


export type TestReaderQuery = { reader: { id: string, name: string, openReports: number, commentCounts: { approved: number, pending: number, rejected: number, deleted: number }, sanction: { until: string | null, reason: string | null } | null, recentComments: Array<{ id: string, status: CommentStatus }> } };

export type TestBanReaderMutationVariables = Exact<{
  id: string;
  input?: BanReaderInput | null | undefined;
}>;


export type TestBanReaderMutation = { banReader: { id: string, sanction: { until: string | null, reason: string | null } | null } };

export type TestLiftReaderBanMutationVariables = Exact<{
  id: string;
}>;


export type TestLiftReaderBanMutation = { liftReaderBan: { id: string, sanction: { until: string | null } | null } };

export type TestGetSettingsQueryVariables = Exact<{ [key: string]: never; }>;


export type TestGetSettingsQuery = { settings: { moderation: Moderation, editWindowSeconds: number, reactionKinds: Array<string>, pageReactionKinds: Array<string>, delivery: { maxAttempts: number, backoffBaseMs: number }, rateLimits: { requestsPerMinute: number } } };

export type TestUpdateSettingsMutationVariables = Exact<{
  input: SettingsPatch;
}>;


export type TestUpdateSettingsMutation = { updateSettings: { moderation: Moderation, editWindowSeconds: number, pageReactionKinds: Array<string>, delivery: { maxAttempts: number, backoffBaseMs: number } } };

export type TestRotateIdentitySecretMutationVariables = Exact<{ [key: string]: never; }>;


export type TestRotateIdentitySecretMutation = { rotateIdentitySecret: { identitySecret: string } };

export type TestWebhooksQueryVariables = Exact<{
  limit?: number | null | undefined;
}>;


export type TestWebhooksQuery = { webhooks: { nextCursor: string | null, items: Array<{ webhookId: string, url: string, verified: boolean, state: WebhookState, kid: string }> } };

export type TestEnableWebhookMutationVariables = Exact<{
  webhookId: string;
}>;


export type TestEnableWebhookMutation = { enableWebhook: { webhookId: string, state: WebhookState } };


export const TestCommentsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestComments"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sort"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CommentSort"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CommentListStatus"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comments"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"discussionId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}}},{"kind":"Argument","name":{"kind":"Name","value":"sort"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sort"}}},{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"cursor"},"value":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"parentId"}},{"kind":"Field","name":{"kind":"Name","value":"depth"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"author"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"avatarUrl"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reactions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"count"}}]}},{"kind":"Field","name":{"kind":"Name","value":"replyCount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nextCursor"}}]}}]}}]} as unknown as DocumentNode<TestCommentsQuery, TestCommentsQueryVariables>;
export const TestCommentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestComment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"body"}}]}}]}}]} as unknown as DocumentNode<TestCommentQuery, TestCommentQueryVariables>;
export const TestPostCommentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestPostComment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PostCommentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"postComment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"discussionId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"discussionId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"depth"}},{"kind":"Field","name":{"kind":"Name","value":"author"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<TestPostCommentMutation, TestPostCommentMutationVariables>;
export const TestApproveCommentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestApproveComment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"approveComment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]} as unknown as DocumentNode<TestApproveCommentMutation, TestApproveCommentMutationVariables>;
export const TestToggleReactionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestToggleReaction"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ToggleReactionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"toggleReaction"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"commentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"commentId"}},{"kind":"Field","name":{"kind":"Name","value":"readerId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"active"}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"count"}}]}}]}}]}}]} as unknown as DocumentNode<TestToggleReactionMutation, TestToggleReactionMutationVariables>;
export const TestModerationReasonDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestModerationReason"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"moderationReason"}}]}}]}}]} as unknown as DocumentNode<TestModerationReasonQuery, TestModerationReasonQueryVariables>;
export const TestQueueReasonsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestQueueReasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"moderationQueue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"EnumValue","value":"pending"}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"moderationReason"}}]}}]}}]}}]} as unknown as DocumentNode<TestQueueReasonsQuery, TestQueueReasonsQueryVariables>;
export const TestCommentContextDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestCommentContext"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sort"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CommentSort"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"topLevel"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"commentContext"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"sort"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sort"}}},{"kind":"Argument","name":{"kind":"Name","value":"topLevel"},"value":{"kind":"Variable","name":{"kind":"Name","value":"topLevel"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comment"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"depth"}}]}},{"kind":"Field","name":{"kind":"Name","value":"ancestors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"depth"}},{"kind":"Field","name":{"kind":"Name","value":"author"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"rootCursor"}}]}}]}}]} as unknown as DocumentNode<TestCommentContextQuery, TestCommentContextQueryVariables>;
export const TestVoteDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestVote"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"VoteInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vote"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"commentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"commentId"}},{"kind":"Field","name":{"kind":"Name","value":"readerId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"score"}},{"kind":"Field","name":{"kind":"Name","value":"upvotes"}},{"kind":"Field","name":{"kind":"Name","value":"downvotes"}},{"kind":"Field","name":{"kind":"Name","value":"comment"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"score"}},{"kind":"Field","name":{"kind":"Name","value":"upvotes"}},{"kind":"Field","name":{"kind":"Name","value":"downvotes"}},{"kind":"Field","name":{"kind":"Name","value":"myVote"}}]}}]}}]}}]} as unknown as DocumentNode<TestVoteMutation, TestVoteMutationVariables>;
export const TestVotedCommentsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestVotedComments"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sort"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CommentSort"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comments"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"discussionId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}}},{"kind":"Argument","name":{"kind":"Name","value":"sort"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sort"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"cursor"},"value":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"score"}},{"kind":"Field","name":{"kind":"Name","value":"upvotes"}},{"kind":"Field","name":{"kind":"Name","value":"downvotes"}},{"kind":"Field","name":{"kind":"Name","value":"myVote"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nextCursor"}}]}}]}}]} as unknown as DocumentNode<TestVotedCommentsQuery, TestVotedCommentsQueryVariables>;
export const TestUpsertDiscussionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestUpsertDiscussion"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DiscussionInput"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"upsertDiscussion"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"discussion"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]} as unknown as DocumentNode<TestUpsertDiscussionMutation, TestUpsertDiscussionMutationVariables>;
export const TestToggleDiscussionReactionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestToggleDiscussionReaction"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ToggleDiscussionReactionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"toggleDiscussionReaction"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"discussionId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"discussionId"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"discussionId"}},{"kind":"Field","name":{"kind":"Name","value":"readerId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"active"}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"count"}}]}},{"kind":"Field","name":{"kind":"Name","value":"countMap"}},{"kind":"Field","name":{"kind":"Name","value":"discussion"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"reactionMap"}},{"kind":"Field","name":{"kind":"Name","value":"myReactions"}}]}}]}}]}}]} as unknown as DocumentNode<TestToggleDiscussionReactionMutation, TestToggleDiscussionReactionMutationVariables>;
export const TestDiscussionReactionsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestDiscussionReactions"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"discussion"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"reactions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"count"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reactionMap"}},{"kind":"Field","name":{"kind":"Name","value":"myReactions"}}]}}]}}]} as unknown as DocumentNode<TestDiscussionReactionsQuery, TestDiscussionReactionsQueryVariables>;
export const TestReaderSettingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestReaderSettings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"readerSettings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reactionKinds"}},{"kind":"Field","name":{"kind":"Name","value":"pageReactionKinds"}}]}}]}}]} as unknown as DocumentNode<TestReaderSettingsQuery, TestReaderSettingsQueryVariables>;
export const TestFederationSettingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestFederationSettings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"settings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"federation"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"handle"}},{"kind":"Field","name":{"kind":"Name","value":"remoteModeration"}},{"kind":"Field","name":{"kind":"Name","value":"blockedDomains"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"summary"}},{"kind":"Field","name":{"kind":"Name","value":"domain"}}]}}]}}]}}]} as unknown as DocumentNode<TestFederationSettingsQuery, TestFederationSettingsQueryVariables>;
export const TestUpdateFederationSettingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestUpdateFederationSettings"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SettingsPatch"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateSettings"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"federation"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"handle"}},{"kind":"Field","name":{"kind":"Name","value":"remoteModeration"}},{"kind":"Field","name":{"kind":"Name","value":"blockedDomains"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"icon"}},{"kind":"Field","name":{"kind":"Name","value":"summary"}},{"kind":"Field","name":{"kind":"Name","value":"domain"}}]}}]}}]}}]} as unknown as DocumentNode<TestUpdateFederationSettingsMutation, TestUpdateFederationSettingsMutationVariables>;
export const TestIdentityTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestIdentityToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"token"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"testIdentityToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"token"},"value":{"kind":"Variable","name":{"kind":"Name","value":"token"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ok"}},{"kind":"Field","name":{"kind":"Name","value":"reader"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"avatarUrl"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"emailVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"claims"}},{"kind":"Field","name":{"kind":"Name","value":"header"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"alg"}},{"kind":"Field","name":{"kind":"Name","value":"kid"}}]}}]}}]}}]} as unknown as DocumentNode<TestIdentityTokenMutation, TestIdentityTokenMutationVariables>;
export const TestCreateApiKeyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestCreateApiKey"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateApiKeyInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createApiKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"apiKey"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"prefix"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}}]}}]}}]}}]} as unknown as DocumentNode<TestCreateApiKeyMutation, TestCreateApiKeyMutationVariables>;
export const TestListApiKeysDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestListApiKeys"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"apiKeys"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"cursor"},"value":{"kind":"Variable","name":{"kind":"Name","value":"cursor"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"prefix"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"}},{"kind":"Field","name":{"kind":"Name","value":"lastUsedAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nextCursor"}}]}}]}}]} as unknown as DocumentNode<TestListApiKeysQuery, TestListApiKeysQueryVariables>;
export const TestRevokeApiKeyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestRevokeApiKey"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeApiKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}}]}}]}}]} as unknown as DocumentNode<TestRevokeApiKeyMutation, TestRevokeApiKeyMutationVariables>;
export const TestSetSafetyHookDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestSetSafetyHook"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SettingsPatch"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateSettings"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"safety"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hook"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"timeoutMs"}},{"kind":"Field","name":{"kind":"Name","value":"onTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"secret"}}]}}]}}]}}]}}]} as unknown as DocumentNode<TestSetSafetyHookMutation, TestSetSafetyHookMutationVariables>;
export const TestSafetyHookDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestSafetyHook"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"testSafetyHook"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ok"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"decision"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"latencyMs"}},{"kind":"Field","name":{"kind":"Name","value":"error"}}]}}]}}]} as unknown as DocumentNode<TestSafetyHookMutation, TestSafetyHookMutationVariables>;
export const TestReaderExportDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestReaderExport"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"readerExport"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}]}]}}]} as unknown as DocumentNode<TestReaderExportQuery, TestReaderExportQueryVariables>;
export const TestMyExportDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestMyExport"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"myExport"}}]}}]} as unknown as DocumentNode<TestMyExportQuery, TestMyExportQueryVariables>;
export const TestEraseReaderDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestEraseReader"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eraseReader"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"readerId"}},{"kind":"Field","name":{"kind":"Name","value":"mode"}},{"kind":"Field","name":{"kind":"Name","value":"commentsAnonymized"}},{"kind":"Field","name":{"kind":"Name","value":"commentsDeleted"}},{"kind":"Field","name":{"kind":"Name","value":"commentsTombstoned"}},{"kind":"Field","name":{"kind":"Name","value":"reactionsRemoved"}},{"kind":"Field","name":{"kind":"Name","value":"reportsRemoved"}},{"kind":"Field","name":{"kind":"Name","value":"eventsScrubbed"}},{"kind":"Field","name":{"kind":"Name","value":"profileRemoved"}}]}}]}}]} as unknown as DocumentNode<TestEraseReaderMutation, TestEraseReaderMutationVariables>;
export const TestEraseMeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestEraseMe"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eraseMe"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"readerId"}},{"kind":"Field","name":{"kind":"Name","value":"mode"}},{"kind":"Field","name":{"kind":"Name","value":"commentsDeleted"}}]}}]}}]} as unknown as DocumentNode<TestEraseMeMutation, TestEraseMeMutationVariables>;
export const TestReportCommentDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestReportComment"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ReportCommentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reportComment"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"report"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"commentId"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"note"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<TestReportCommentMutation, TestReportCommentMutationVariables>;
export const TestReportsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestReports"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ReportStatus"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reports"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"comment"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"moderationReason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reportCount"}},{"kind":"Field","name":{"kind":"Name","value":"reasons"}},{"kind":"Field","name":{"kind":"Name","value":"reasonCounts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"count"}}]}},{"kind":"Field","name":{"kind":"Name","value":"notes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"note"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<TestReportsQuery, TestReportsQueryVariables>;
export const TestDismissReportsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestDismissReports"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"dismissReports"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"commentId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"commentId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"reportCount"}},{"kind":"Field","name":{"kind":"Name","value":"comment"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<TestDismissReportsMutation, TestDismissReportsMutationVariables>;
export const TestReaderDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestReader"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reader"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"commentCounts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"approved"}},{"kind":"Field","name":{"kind":"Name","value":"pending"}},{"kind":"Field","name":{"kind":"Name","value":"rejected"}},{"kind":"Field","name":{"kind":"Name","value":"deleted"}}]}},{"kind":"Field","name":{"kind":"Name","value":"openReports"}},{"kind":"Field","name":{"kind":"Name","value":"sanction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"until"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"recentComments"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<TestReaderQuery, TestReaderQueryVariables>;
export const TestBanReaderDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestBanReader"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"BanReaderInput"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"banReader"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"sanction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"until"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]}}]}}]} as unknown as DocumentNode<TestBanReaderMutation, TestBanReaderMutationVariables>;
export const TestLiftReaderBanDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestLiftReaderBan"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"liftReaderBan"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"sanction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"until"}}]}}]}}]}}]} as unknown as DocumentNode<TestLiftReaderBanMutation, TestLiftReaderBanMutationVariables>;
export const TestGetSettingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestGetSettings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"settings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"moderation"}},{"kind":"Field","name":{"kind":"Name","value":"editWindowSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"reactionKinds"}},{"kind":"Field","name":{"kind":"Name","value":"pageReactionKinds"}},{"kind":"Field","name":{"kind":"Name","value":"delivery"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxAttempts"}},{"kind":"Field","name":{"kind":"Name","value":"backoffBaseMs"}}]}},{"kind":"Field","name":{"kind":"Name","value":"rateLimits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"requestsPerMinute"}}]}}]}}]}}]} as unknown as DocumentNode<TestGetSettingsQuery, TestGetSettingsQueryVariables>;
export const TestUpdateSettingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestUpdateSettings"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SettingsPatch"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateSettings"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"moderation"}},{"kind":"Field","name":{"kind":"Name","value":"editWindowSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"pageReactionKinds"}},{"kind":"Field","name":{"kind":"Name","value":"delivery"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxAttempts"}},{"kind":"Field","name":{"kind":"Name","value":"backoffBaseMs"}}]}}]}}]}}]} as unknown as DocumentNode<TestUpdateSettingsMutation, TestUpdateSettingsMutationVariables>;
export const TestRotateIdentitySecretDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestRotateIdentitySecret"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rotateIdentitySecret"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"identitySecret"}}]}}]}}]} as unknown as DocumentNode<TestRotateIdentitySecretMutation, TestRotateIdentitySecretMutationVariables>;
export const TestWebhooksDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TestWebhooks"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"webhooks"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"items"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"webhookId"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"verified"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"kid"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nextCursor"}}]}}]}}]} as unknown as DocumentNode<TestWebhooksQuery, TestWebhooksQueryVariables>;
export const TestEnableWebhookDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestEnableWebhook"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"webhookId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"enableWebhook"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"webhookId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"webhookId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"webhookId"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]} as unknown as DocumentNode<TestEnableWebhookMutation, TestEnableWebhookMutationVariables>;