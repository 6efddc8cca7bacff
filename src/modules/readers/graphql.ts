// GraphQL for readers as moderators see them (moderate_content): `reader(id)`, and the sanctions
// `banReader` (a ban, or a suspension with `until`) and `liftReaderBan`.
import { builder } from "../../graphql/builder.js";
import { CommentType } from "../comments/graphql.js";
import { getReaderProfile, type ReaderCommentCounts, type ReaderProfile } from "./profile.js";
import { banReader, liftReaderBan, type Sanction } from "./sanctions.js";

const ReaderSanctionType = builder.objectRef<Sanction>("ReaderSanction").implement({
  description: "A ban (until null: until lifted) or a suspension (until a time) of a reader.",
  fields: (t) => ({
    until: t.expose("until", { type: "DateTime", nullable: true }),
    reason: t.exposeString("reason", { nullable: true }),
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

const ReaderProfileType = builder.objectRef<ReaderProfile>("ReaderProfile").implement({
  description: "A reader as a moderator sees them: profile, comment counts, open reports, sanction, latest comments.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: "when the service first saw the reader" }),
    commentCounts: t.field({ type: ReaderCommentCountsType, resolve: (r) => r.commentCounts }),
    openReports: t.exposeInt("openReports", { description: "open reports against the reader's comments" }),
    sanction: t.field({
      type: ReaderSanctionType,
      nullable: true,
      description: "The ban or suspension in force; null when none is.",
      resolve: (r) => r.sanction,
    }),
    recentComments: t.field({
      type: [CommentType],
      description: "The reader's latest 20 comments, any status, newest first.",
      resolve: (r) => r.recentComments,
    }),
  }),
});

const BanReaderInput = builder.inputType("BanReaderInput", {
  fields: (t) => ({
    until: t.string({ required: false, description: "ISO 8601, in the future: a suspension; absent or null: a ban until lifted." }),
    reason: t.string({ required: false, description: "Up to 500 characters, for moderators." }),
    rejectPending: t.boolean({ required: false, description: "Also reject the reader's pending comments (default false)." }),
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
