// GraphQL for readers as moderators see them (moderate_content): `reader(id)`, the sanctions
// `banReader` (a ban, or a suspension with `until`; either may be a shadow ban) and `liftReaderBan`,
// `setReaderTrust`; and for a reader themself:
// `viewer` (who X-Service-Identity says they are), the export and the erasure.
import { builder } from "../../graphql/builder.js";
import { CommentType, ReaderType } from "../comments/graphql.js";
import { settingsEnum } from "../../graphql/settings-types.js";
import { getReaderProfile, type FollowedDiscussion, type ReaderCommentCounts, type ReaderProfile, type ReaderSignIn } from "./profile.js";
import { banReader, liftReaderBan, type Sanction } from "./sanctions.js";
import { updateReader } from "./badge.js";
import { setReaderTrust, TRUST_LEVELS } from "./trust.js";
import { exportReader } from "./export.js";
import { eraseReader, type ReaderErasure } from "./erasure.js";
import { currentReader, requireReader, tenantIdOf } from "../../context/request.js";

const ReplyEmailsEnum = settingsEnum("ReplyEmails");

const ReaderSanctionType = builder.objectRef<Sanction>("ReaderSanction").implement({
  description: "A ban (until null: until lifted) or a suspension (until a time) of a reader.",
  fields: (t) => ({
    until: t.expose("until", { type: "DateTime", nullable: true }),
    reason: t.exposeString("reason", { nullable: true }),
    shadow: t.exposeBoolean("shadow", {
      description:
        "A shadow ban: nothing is refused; the reader's new comments are stored rejected (reason shadow_ban) and shown as published to them alone.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const ReaderCommentCountsType = builder.objectRef<ReaderCommentCounts>("ReaderCommentCounts").implement({
  description: "How many comments a reader has of each status.",
  fields: (t) => ({
    approved: t.exposeInt("approved"),
    pending: t.exposeInt("pending"),
    rejected: t.exposeInt("rejected"),
    deleted: t.exposeInt("deleted"),
  }),
});

const ReaderEmailStatusEnum = builder.enumType("ReaderEmailStatus", {
  description: "A reader's address for reply emails: none, verified (from their identity), or suppressed after an SMTP 5xx.",
  values: ["none", "verified", "suppressed"] as const,
});

const FollowedDiscussionType = builder.objectRef<FollowedDiscussion>("FollowedDiscussion").implement({
  description: "A discussion a reader follows (mode all) or silenced (mode off).",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    title: t.exposeString("title", { nullable: true }),
    mode: t.exposeString("mode", { description: "all | off" }),
    since: t.expose("since", { type: "DateTime", description: "when the reader chose it" }),
  }),
});

const ReaderSignInType = builder.objectRef<ReaderSignIn>("ReaderSignIn").implement({
  description: "How a reader last signed in through the service's hosted sign-in (contract section 20).",
  fields: (t) => ({
    method: t.exposeString("method", { description: "email | oidc | guest | passkey" }),
    provider: t.exposeString("provider", { nullable: true, description: "The OIDC provider's id (method oidc); null otherwise." }),
    providerLabel: t.exposeString("providerLabel", {
      nullable: true,
      description: "That provider's label in the settings now; null when it is not (or no longer) among them.",
    }),
    at: t.expose("at", {
      type: "DateTime",
      nullable: true,
      description: "When their latest session began; null when every session of theirs was signed out.",
    }),
  }),
});

const TrustLevelEnum = builder.enumType("TrustLevel", {
  description:
    "How the write path treats a reader's comments: trusted skips newReaderHold, suspect words, maxLinks, the hook, Akismet and " +
    "pre-moderation (banned words still reject); premoderated holds every comment; default applies the tenant's rules.",
  values: TRUST_LEVELS,
});

const ReaderProfileType = builder.objectRef<ReaderProfile>("ReaderProfile").implement({
  description: "A reader as a moderator sees them: profile, comment counts, open reports, sanction, latest comments.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    badge: t.exposeString("badge", {
      nullable: true,
      description: "The label shown by the reader's name (at most 20 characters); null when none.",
    }),
    badgeSource: t.exposeString("badgeSource", {
      nullable: true,
      description: "Who set the badge: claim (the identity's `badge` claim) or moderator (which wins until cleared); null when none.",
    }),
    trustLevel: t.field({ type: TrustLevelEnum, resolve: (r) => r.trustLevel }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: "when the service first saw the reader" }),
    commentCounts: t.field({ type: ReaderCommentCountsType, resolve: (r) => r.commentCounts }),
    openReports: t.exposeInt("openReports", { description: "open reports against the reader's comments" }),
    sanction: t.field({
      type: ReaderSanctionType,
      nullable: true,
      description: "The ban or suspension in force; null when none is.",
      resolve: (r) => r.sanction,
    }),
    emailStatus: t.field({
      type: ReaderEmailStatusEnum,
      description:
        "The reader's address for reply emails (never shown): none, verified (from their identity), or suppressed after an SMTP 5xx.",
      resolve: (r) => r.emailStatus,
    }),
    replyEmails: t.field({
      type: ReplyEmailsEnum,
      description: "How often they hear of replies by email: their choice, else the tenant's email.defaultReplies.",
      resolve: (r) => r.replyEmails,
    }),
    replyEmailsChosen: t.exposeBoolean("replyEmailsChosen", { description: "Whether the reader chose replyEmails themself." }),
    recentComments: t.field({
      type: [CommentType],
      description: "The reader's latest 20 comments, any status, newest first.",
      resolve: (r) => r.recentComments,
    }),
    following: t.field({
      type: [FollowedDiscussionType],
      description: "The discussions the reader follows or silenced, latest choice first (at most 50).",
      resolve: (r) => r.following,
    }),
    followingCount: t.exposeInt("followingCount", { description: "How many discussions the reader follows (mode all)." }),
    inboxItems: t.exposeInt("inboxItems", {
      description: "Items the reader's inbox holds (the retention job deletes them after inbox.retentionDays).",
    }),
    inboxUnread: t.exposeInt("inboxUnread", { description: "Of those, the ones not read yet." }),
    signIn: t.field({
      type: ReaderSignInType,
      nullable: true,
      description:
        "How the reader signs in through the hosted sign-in (their latest session; once all are signed out, what their id says: guest:, email:, <provider id>:); null: never — a reader the site's own sign-in identifies.",
      resolve: (r) => r.signIn,
    }),
  }),
});

const BanReaderInput = builder.inputType("BanReaderInput", {
  fields: (t) => ({
    until: t.string({ required: false, description: "ISO 8601, in the future: a suspension; absent or null: a ban until lifted." }),
    reason: t.string({ required: false, description: "Up to 500 characters, for moderators." }),
    rejectPending: t.boolean({ required: false, description: "Also reject the reader's pending comments (default false)." }),
    shadow: t.boolean({
      required: false,
      description:
        "A shadow ban (default false): nothing is refused; the reader's new comments are stored rejected (reason shadow_ban), " +
        "shown as published to them alone; nobody else sees them and no event leaves for them.",
    }),
  }),
});

const SetReaderTrustInput = builder.inputType("SetReaderTrustInput", {
  fields: (t) => ({ level: t.field({ type: TrustLevelEnum, required: true }) }),
});

const UpdateReaderInput = builder.inputType("UpdateReaderInput", {
  fields: (t) => ({
    badge: t.string({
      required: false,
      description:
        "At most 20 characters, trimmed, no control characters: wins over the identity's claim; null clears it; absent: unchanged.",
    }),
  }),
});

builder.queryField("reader", (t) =>
  t.field({
    type: ReaderProfileType,
    authScopes: { capability: "moderate_content" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => getReaderProfile(ctx, id),
  }),
);

builder.mutationFields((t) => ({
  banReader: t.field({
    type: ReaderProfileType,
    description: "Bans or suspends the reader: their posts, edits, reactions and reports are refused (403 reader_banned).",
    authScopes: { capability: "moderate_content" },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: BanReaderInput, required: false }) },
    resolve: async (_root, { id, input }, ctx) => {
      await banReader(ctx, id, input ?? {});
      return getReaderProfile(ctx, id);
    },
  }),
  updateReader: t.field({
    type: ReaderProfileType,
    description: "Changes what a moderator may change of the reader: their badge (audited as reader.badge).",
    authScopes: { capability: "moderate_content" },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: UpdateReaderInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => {
      await updateReader(ctx, id, input);
      return getReaderProfile(ctx, id);
    },
  }),
  setReaderTrust: t.field({
    type: ReaderProfileType,
    description: "Sets the reader's trust level (audited as reader.trust).",
    authScopes: { capability: "moderate_content" },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: SetReaderTrustInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => {
      await setReaderTrust(ctx, id, input);
      return getReaderProfile(ctx, id);
    },
  }),
  liftReaderBan: t.field({
    type: ReaderProfileType,
    description: "Lifts the reader's ban or suspension (none in force is not an error).",
    authScopes: { capability: "moderate_content" },
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await liftReaderBan(ctx, id);
      return getReaderProfile(ctx, id);
    },
  }),
}));

// Privacy (contract section 13, docs/privacy.md): a reader's data export and erasure, by someone with
// manage_readers (a console owner) or by the reader themself with their identity.

const ReaderErasureType = builder.objectRef<ReaderErasure>("ReaderErasure").implement({
  description: "What erasing a reader did (all zero and profileRemoved false when nothing was left: erasure is idempotent).",
  fields: (t) => ({
    readerId: t.exposeID("readerId"),
    mode: t.exposeString("mode", { description: "anonymize | delete (settings privacy.erasure)" }),
    commentsAnonymized: t.exposeInt("commentsAnonymized"),
    commentsDeleted: t.exposeInt("commentsDeleted"),
    commentsTombstoned: t.exposeInt("commentsTombstoned", {
      description: "deleted comments kept as tombstones for the replies under them",
    }),
    reactionsRemoved: t.exposeInt("reactionsRemoved"),
    votesRemoved: t.exposeInt("votesRemoved", { description: "the reader's votes, taken out of the comments' tallies" }),
    reportsRemoved: t.exposeInt("reportsRemoved"),
    eventsScrubbed: t.exposeInt("eventsScrubbed", {
      description: "event-log entries rewritten (replays and webhook deliveries read them)",
    }),
    profileRemoved: t.exposeBoolean("profileRemoved"),
  }),
});

builder.queryFields((t) => ({
  readerExport: t.field({
    type: "JSON",
    description: "Every datum held about the reader (docs/privacy.md), as one JSON document. Unknown reader: not_found.",
    authScopes: { capability: "manage_readers" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => exportReader(ctx, id, { forModerators: true, mustExist: true }),
  }),
  myExport: t.field({
    type: "JSON",
    description: "Every datum held about the reader of X-Service-Identity, as one JSON document.",
    authScopes: { browser: true },
    resolve: async (_root, _args, ctx) => exportReader(ctx, (await requireReader(ctx)).id, { forModerators: false, mustExist: false }),
  }),
}));

builder.mutationFields((t) => ({
  eraseReader: t.field({
    type: ReaderErasureType,
    description: "Erases the reader (settings privacy.erasure): profile, comments, reactions, reports, and their data in the event log.",
    authScopes: { capability: "manage_readers" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => eraseReader(ctx, id, { self: false }),
  }),
  eraseMe: t.field({
    type: ReaderErasureType,
    description: "Erases the reader of X-Service-Identity, as eraseReader does.",
    authScopes: { browser: true },
    resolve: async (_root, _args, ctx) => eraseReader(ctx, (await requireReader(ctx)).id, { self: true }),
  }),
}));

builder.queryField("viewer", (t) =>
  t.field({
    type: ReaderType,
    nullable: true,
    description:
      "The reader X-Service-Identity names (verified; 401 invalid_identity when it does not verify), or null without one: how a reader-facing client knows which comments are the reader's own.",
    authScopes: { browser: true },
    resolve: async (_r, _a, ctx) => {
      const reader = await currentReader(ctx);
      return reader
        ? { tenantId: tenantIdOf(ctx), id: reader.id, name: reader.name, avatarUrl: reader.avatarUrl, badge: reader.badge ?? null }
        : null;
    },
  }),
);
