// GraphQL for comments (moderation mutations: src/modules/moderation/graphql.ts). Resolvers only
// call the domain; capabilities are declared with authScopes. Comment and Reader are plain object
// types over the rows the domain returns: a page or a comment comes with its authors from ONE SQL
// statement (read.ts), and a write returns the row its statement produced — nothing is re-read.
// For moderators (moderate_content): a comment's `discussionTitle` / `parent` (moderation-context.ts);
// their lists (the queue, search, a discussion's every comment) are in moderation-graphql.ts.
import { builder } from "../../graphql/builder.js";
import { CommentKind as CommentKinds, CommentStatus as CommentStatuses } from "../../generated/prisma/enums.js";
import { connectionPage, defineConnection, legacyPageArgs, type ConnectionShape } from "../../graphql/page.js";
import { selectsField } from "../../graphql/selection.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { DiscussionType } from "../discussions/graphql.js";
import { shownComment, type Author, type CommentWithAuthor } from "./dto.js";
import { postComment, editComment, deleteComment } from "./write.js";
import { getComment, listComments, listCommentsWithDiscussion } from "./read.js";
import { COMMENT_SORTS, LIST_STATUSES } from "./list-order.js";
import { moderationContextOf, type ModerationContext } from "./moderation-context.js";
import { commentContext, type CommentContext } from "./permalink.js";
import { canModerate, shownModerationReason } from "./visibility.js";

export const CommentStatus = builder.enumType("CommentStatus", { values: Object.values(CommentStatuses) });
export const CommentKind = builder.enumType("CommentKind", {
  description:
    "comment: written here (or replying from the fediverse); mention: a webmention, another site's post linking to the page; bluesky: a reply to the discussion's Bluesky post (docs/bluesky.md).",
  values: Object.values(CommentKinds),
});
const CommentSort = builder.enumType("CommentSort", { values: COMMENT_SORTS });
const CommentListStatus = builder.enumType("CommentListStatus", { values: LIST_STATUSES });

/** How many readers reacted with one kind. */
export const ReactionCountType = builder.objectRef<{ kind: string; count: number }>("ReactionCount").implement({
  fields: (t) => ({ kind: t.exposeString("kind"), count: t.exposeInt("count") }),
});

/** A counts map as a list, largest first (ties by kind), for the typed field. */
export function reactionCountList(counts: Record<string, number>): { kind: string; count: number }[] {
  return Object.entries(counts)
    .map(([kind, count]) => ({ kind, count }))
    .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
}

/** A reader as every API shows one: an Author, or a comment's public shape's author. */
export const ReaderType = builder.objectRef<Pick<Author, "id" | "name" | "avatarUrl" | "badge">>("Reader").implement({
  description: "A reader of the tenant's site (the `sub` of an identity assertion).",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    avatarUrl: t.exposeString("avatarUrl", { nullable: true }),
    badge: t.exposeString("badge", {
      nullable: true,
      description: "A short label by the name (at most 20 characters): a moderator's, else the identity's `badge` claim; null when none.",
    }),
  }),
});

const CommentParentType = builder.objectRef<NonNullable<ModerationContext["parent"]>>("CommentParent").implement({
  description: "The comment a reply answers, as a moderator sees it beside the reply.",
  fields: (t) => ({
    id: t.exposeID("id"),
    status: t.expose("status", { type: CommentStatus }),
    author: t.field({ type: ReaderType, resolve: (p) => p.author }),
    excerpt: t.exposeString("excerpt", { description: "The start of its body (200 characters); empty when deleted." }),
  }),
});

/** The comment's public shape as the caller is shown it (dto.ts, shownComment): its members are read from it. */
const shown = (c: CommentWithAuthor, ctx: Parameters<typeof canModerate>[0]) => shownComment(c, canModerate(ctx));

// Field order = the comment JSON (eng_comment_json, commentJson in src/events/write-results.ts), so REST responses and events match.
// The members of that JSON resolve from the comment's public shape (shownComment); the others (depth, myVote, moderationReason, …) from the row.
export const CommentType = builder.objectRef<CommentWithAuthor>("Comment").implement({
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    id: t.id({ resolve: (c, _a, ctx) => shown(c, ctx).id }),
    discussionId: t.string({ resolve: (c, _a, ctx) => shown(c, ctx).discussionId }),
    parentId: t.string({ nullable: true, resolve: (c, _a, ctx) => shown(c, ctx).parentId }),
    depth: t.int({
      nullable: true,
      description: "Nesting depth (0 = top level); null in event payloads, which carry the REST shape.",
      resolve: (c) => (typeof c.depth === "number" ? c.depth : null),
    }),
    author: t.field({
      type: ReaderType,
      description: "Who wrote it; a deleted comment's (a tombstone's) is empty (id and name \"\", no avatar or badge) but to moderators.",
      resolve: (c, _a, ctx) => shown(c, ctx).author,
    }),
    authorName: t.string({
      description:
        "The name shown for this comment: an imported comment keeps its source's name even when readers were merged by email, so " +
        "one reader's comments may show different names; a client that caches readers by id (Apollo, urql) shows this, not author.name.",
      resolve: (c, _a, ctx) => shown(c, ctx).author.name,
    }),
    body: t.string({
      description: "The source as written (Markdown); empty for deleted comments (tombstones).",
      resolve: (c, _a, ctx) => shown(c, ctx).body,
    }),
    bodyHtml: t.string({
      description:
        "The body rendered and sanitized by the service (contract section 18), as the tenant's formatting settings said when it " +
        "was written: safe to insert as HTML. Empty for deleted comments.",
      resolve: (c, _a, ctx) => shown(c, ctx).bodyHtml,
    }),
    status: t.field({
      type: CommentStatus,
      description:
        "A shadow-banned reader's comment (stored rejected, reason shadow_ban) reads as approved to everyone but moderators: only its " +
        "author is ever shown it.",
      resolve: (c, _a, ctx) => shown(c, ctx).status,
    }),
    kind: t.field({
      type: CommentKind,
      description: "comment, mention (a webmention: docs/fediverse.md) or bluesky (a reply on Bluesky: docs/bluesky.md).",
      resolve: (c, _a, ctx) => shown(c, ctx).kind,
    }),
    pinned: t.boolean({ resolve: (c, _a, ctx) => shown(c, ctx).pinned }),
    // the row's own times (the shape as shown changes no time): the DateTime scalar formats a Date
    // once, where the shape's ISO string would be parsed into a Date and formatted again
    editedAt: t.field({ type: "DateTime", nullable: true, resolve: (c) => c.editedAt }),
    createdAt: t.field({ type: "DateTime", resolve: (c) => c.createdAt }),
    reactions: t.field({
      type: [ReactionCountType],
      description: "Reaction counts by kind (kinds with at least one reaction), most first.",
      resolve: (c, _a, ctx) => reactionCountList(shown(c, ctx).reactions),
    }),
    reactionMap: t.field({
      type: "JSON",
      description: 'The same counts as a map, e.g. {"like": 3}: the shape REST and events use.',
      resolve: (c, _a, ctx) => shown(c, ctx).reactions,
    }),
    replyCount: t.int({ resolve: (c, _a, ctx) => shown(c, ctx).replyCount }),
    score: t.int({
      description: "upvotes − downvotes (settings votes; 0 while nobody voted).",
      resolve: (c, _a, ctx) => shown(c, ctx).score,
    }),
    upvotes: t.int({ resolve: (c, _a, ctx) => shown(c, ctx).upvotes }),
    downvotes: t.int({ resolve: (c, _a, ctx) => shown(c, ctx).downvotes }),
    moderationReason: t.field({
      type: "JSON",
      nullable: true,
      description:
        'Why a safety rule or a moderator decided the status (moderate_content; null for other callers): {"source":"rule",' +
        '"rule":"bannedWords|suspectWords|maxLinks","words":[…] or "links":n,"maxLinks":n}, {"source":"new_reader",…}, ' +
        '{"source":"akismet"} (Akismet called it spam), {"source":"trust","trustLevel":"premoderated"}, {"source":"shadow_ban"} or ' +
        '{"source":"moderator","decision":…,"previous":…}; null when none did.',
      resolve: (c, _a, ctx) => shownModerationReason(ctx, c),
    }),
    discussionTitle: t.string({
      nullable: true,
      description: "The discussion's title (moderate_content): moderation context.",
      authScopes: { capability: "moderate_content" },
      resolve: async (c, _a, ctx) => (await moderationContextOf(ctx, c)).discussionTitle,
    }),
    parent: t.field({
      type: CommentParentType,
      nullable: true,
      description: "The comment this one replies to, whatever its status (moderate_content); null at the top level.",
      authScopes: { capability: "moderate_content" },
      resolve: async (c, _a, ctx) => (await moderationContextOf(ctx, c)).parent,
    }),
  }),
});

export const CommentConnection = defineConnection("Comment", CommentType);

/** A page of a discussion's comments with the discussion as the page's own statement read it (root `comments`). */
type PageWithDiscussion = ConnectionShape<CommentWithAuthor> & { discussion?: Discussion };

builder.objectField(CommentConnection, "discussion", (t) =>
  t.field({
    type: DiscussionType,
    nullable: true,
    description:
      "On `comments(discussionId)`: the discussion as the statement that read the page read it (the same snapshot), so its commentCount and seq agree with the page: its stream's events after seq are what the page does not show yet. Null on every other list.",
    resolve: (c) => (c as unknown as PageWithDiscussion).discussion ?? null,
  }),
);

const CommentContextType = builder.objectRef<CommentContext>("CommentContext").implement({
  description: "A comment's permalink: the comment, the comments it answers, and where its thread begins in the discussion's list.",
  fields: (t) => ({
    comment: t.field({ type: CommentType, resolve: (c) => c.comment }),
    ancestors: t.field({
      type: [CommentType],
      description:
        "The comments it answers that the caller may see, the top-level one first (deleted ones as tombstones); empty at the top level.",
      resolve: (c) => c.ancestors,
    }),
    rootCursor: t.exposeString("rootCursor", {
      description:
        "A cursor of `comments(discussionId, sort)` (the default list: approved, every level; with topLevel: true, of " +
        "`comments(discussionId, sort, topLevel: true)`) with the same sort whose page begins with " +
        "the top-level ancestor (the comment itself when top-level), pinned or not.",
    }),
  }),
});

builder.objectField(CommentType, "replies", (t) =>
  t.connection(
    {
      type: CommentType,
      description:
        "The comment's direct replies a reader sees (approved, and tombstones that still have replies), oldest first by default: a thread in one request.",
      authScopes: { browser: true },
      args: { sort: t.arg({ type: CommentSort }) },
      resolve: (c, args, ctx) =>
        connectionPage(args, (page) => listComments(ctx, c.discussionId, { sort: args.sort ?? "oldest", parentId: c.id, ...page })),
    },
    CommentConnection,
  ),
);

const PostCommentPageInput = builder.inputType("PostCommentPageInput", {
  description: "The page a browser's comment comes from, for a discussion its first comment creates (settings discussions.autoCreate).",
  fields: (t) => ({
    title: t.string({ required: false, description: "The page's title (one line, at most 500 characters)." }),
    url: t.string({ required: false, description: "The page's URL: http(s), on the origin the request comes from." }),
  }),
});

const PostCommentInput = builder.inputType("PostCommentInput", {
  fields: (t) => ({
    body: t.string({ required: false, description: "1..maxBodyLength characters (setting, default 10,000)." }),
    parentId: t.string({ required: false, description: "Reply to this comment of the same discussion." }),
    discussion: t.field({
      type: PostCommentPageInput,
      required: false,
      description:
        "Through a publishable key, from a page of allowedOrigins: the page's URL and title, used when this comment creates the discussion (settings discussions.autoCreate); ignored when it exists.",
    }),
  }),
});

const EditCommentInput = builder.inputType("EditCommentInput", {
  fields: (t) => ({ body: t.string({ required: false }) }),
});

builder.queryFields((t) => ({
  comments: t.connection(
    {
      type: CommentType,
      // Listing pending or rejected comments is moderation: it needs moderate_content.
      authScopes: (_root, args) =>
        args.status === "pending" || args.status === "rejected" ? { capability: "moderate_content" } : { browser: true },
      args: {
        discussionId: t.arg.string({ required: true }),
        sort: t.arg({ type: CommentSort }),
        parentId: t.arg.string(),
        topLevel: t.arg.boolean({
          description: "Only comments that reply to none (a thread's first level; each carries replyCount). Not with parentId.",
        }),
        status: t.arg({ type: CommentListStatus }),
        ...legacyPageArgs(t.arg),
      },
      resolve: async (_root, args, ctx, info) => {
        // the discussion beside the page only when asked for: one statement either way
        if (!selectsField(info, "discussion"))
          return connectionPage(args, (page) => listComments(ctx, args.discussionId, { ...args, ...page }));
        let discussion: Discussion | undefined;
        const connection = await connectionPage(args, async (page) => {
          const read = await listCommentsWithDiscussion(ctx, args.discussionId, { ...args, ...page });
          discussion = read.discussion;
          return read.page;
        });
        return Object.assign(connection, { discussion });
      },
    },
    CommentConnection,
  ),
  comment: t.field({
    type: CommentType,
    authScopes: { browser: true },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => getComment(ctx, id),
  }),
  commentContext: t.field({
    type: CommentContextType,
    description: "A comment with its ancestors and the list cursor that opens its thread (visibility as comment(id:)).",
    authScopes: { browser: true },
    args: {
      id: t.arg.id({ required: true }),
      sort: t.arg({ type: CommentSort, description: "The list's sort (default newest)." }),
      topLevel: t.arg.boolean({
        description:
          "rootCursor is then a cursor of `comments(discussionId, sort, topLevel: true)` (the first level) instead of every level.",
      }),
    },
    resolve: (_root, { id, sort, topLevel }, ctx) => commentContext(ctx, String(id), sort, topLevel),
  }),
}));

builder.mutationFields((t) => ({
  postComment: t.field({
    type: CommentType,
    description: "Posts as the reader of X-Service-Identity; creates the discussion when unknown.",
    authScopes: { browser: true },
    args: { discussionId: t.arg.string({ required: true }), input: t.arg({ type: PostCommentInput, required: true }) },
    resolve: (_root, { discussionId, input }, ctx) => postComment(ctx, discussionId, input),
  }),
  editComment: t.field({
    type: CommentType,
    description: "The author (X-Service-Identity) edits the body within the edit window.",
    authScopes: { browser: true },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: EditCommentInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => editComment(ctx, id, input),
  }),
  deleteComment: t.field({
    type: CommentType,
    description: "Soft delete by the author (X-Service-Identity) or with moderate_content; returns the tombstone.",
    authScopes: { browser: true },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => deleteComment(ctx, id),
  }),
}));
