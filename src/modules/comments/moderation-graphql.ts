// GraphQL of the moderators' comment lists (moderate_content): the queue and its live feed of new
// pending comments (`pendingComments`), search across every discussion (contract section 21), and a
// discussion's every comment whatever its status with its counts. The types are graphql.ts's; the
// reads are the domain's (queue.ts, search.ts, moderation-read.ts).
import { builder } from "../../graphql/builder.js";
import { connectionPage, legacyPageArgs } from "../../graphql/page.js";
import type { CommentWithAuthor } from "./dto.js";
import { CommentConnection, CommentStatus, CommentType } from "./graphql.js";
import { QUEUE_SORTS, QUEUE_STATUSES, listQueue } from "./queue.js";
import { countDiscussionComments, listDiscussionComments, type CommentStatusCounts } from "./moderation-read.js";
import { Q_MAX_CHARS, searchComments } from "./search.js";

const QueueStatus = builder.enumType("ModerationQueueStatus", { values: QUEUE_STATUSES });
const QueueSort = builder.enumType("ModerationQueueSort", { values: QUEUE_SORTS });

const CommentStatusCountsType = builder.objectRef<CommentStatusCounts>("CommentStatusCounts").implement({
  description: "How many comments a discussion has of each status.",
  fields: (t) => ({
    approved: t.exposeInt("approved"),
    pending: t.exposeInt("pending"),
    rejected: t.exposeInt("rejected"),
    deleted: t.exposeInt("deleted"),
  }),
});

builder.queryFields((t) => ({
  moderationQueue: t.connection(
    {
      type: CommentType,
      description: "Pending (or rejected) comments across every discussion, oldest first by default.",
      authScopes: { capability: "moderate_content" },
      args: { status: t.arg({ type: QueueStatus }), sort: t.arg({ type: QueueSort }), ...legacyPageArgs(t.arg) },
      resolve: (_root, args, ctx) => connectionPage(args, (page) => listQueue(ctx, { status: args.status, sort: args.sort, ...page })),
    },
    CommentConnection,
  ),
  searchComments: t.connection(
    {
      type: CommentType,
      description:
        "Comments of every discussion matching the words and filters, newest first (contract section 21). `q`: words " +
        '(all must match), `word*` a prefix, `"a phrase"`, `-excluded`; case- and accent-insensitive. Deleted comments ' +
        "only with status: deleted.",
      authScopes: { capability: "moderate_content" },
      args: {
        q: t.arg.string({ description: `The words to look for (at most ${Q_MAX_CHARS} characters).` }),
        status: t.arg({ type: CommentStatus }),
        discussionId: t.arg.string(),
        readerId: t.arg.string({ description: "The author." }),
        hasLinks: t.arg.boolean({ description: "Whether the rendered body shows a link." }),
        reported: t.arg.boolean({ description: "Whether the comment has an open report." }),
        from: t.arg.string({ description: "ISO 8601: created at or after." }),
        to: t.arg.string({ description: "ISO 8601: created before." }),
        ...legacyPageArgs(t.arg),
      },
      resolve: (_root, args, ctx) =>
        connectionPage(args, (page) =>
          searchComments(ctx, {
            q: args.q,
            status: args.status,
            discussionId: args.discussionId,
            readerId: args.readerId,
            hasLinks: args.hasLinks,
            reported: args.reported,
            from: args.from,
            to: args.to,
            ...page,
          }),
        ),
    },
    CommentConnection,
  ),
  discussionComments: t.connection(
    {
      type: CommentType,
      description: "Every comment of a discussion whatever its status (deleted ones as tombstones), oldest first: what a moderator sees.",
      authScopes: { capability: "moderate_content" },
      args: { discussionId: t.arg.string({ required: true }), ...legacyPageArgs(t.arg) },
      resolve: (_root, args, ctx) => connectionPage(args, (page) => listDiscussionComments(ctx, args.discussionId, page)),
    },
    CommentConnection,
  ),
  discussionCommentCounts: t.field({
    type: CommentStatusCountsType,
    description: "How many comments the discussion has of each status.",
    authScopes: { capability: "moderate_content" },
    args: { discussionId: t.arg.string({ required: true }) },
    resolve: (_root, { discussionId }, ctx) => countDiscussionComments(ctx, discussionId),
  }),
}));

/** How often the moderation feed looks for new pending comments. */
const QUEUE_POLL_MS = 1_500;
/** How far before its start a subscription looks back (the race between loading a queue and subscribing). */
const QUEUE_OVERLAP_MS = 10_000;

builder.subscriptionField("pendingComments", (t) =>
  t.field({
    type: CommentType,
    description:
      "New pending comments across every discussion, as they arrive (the console's live moderation queue). " +
      "Read from the queue every 1.5 s on the server; each comment is sent once. The first answer also carries " +
      "the comments that arrived in the 10 s before the subscription began, so one posted while a client was " +
      "loading its queue and subscribing is not missed (a client drops those it already shows, by id).",
    authScopes: { capability: "moderate_content" },
    subscribe: async function* (_root, _args, ctx) {
      const overlapFrom = ctx.app.clock.now().getTime() - QUEUE_OVERLAP_MS;
      const seen = new Set(
        (await listQueue(ctx, { status: "pending", sort: "newest", limit: 100 })).items
          .filter((c) => c.createdAt.getTime() < overlapFrom)
          .map((c) => c.id),
      );
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, QUEUE_POLL_MS));
        const page = await listQueue(ctx, { status: "pending", sort: "newest", limit: 100 });
        for (const c of [...page.items].reverse()) {
          if (seen.has(c.id)) continue;
          seen.add(c.id);
          yield c;
        }
      }
    },
    resolve: (c: CommentWithAuthor) => c,
  }),
);
