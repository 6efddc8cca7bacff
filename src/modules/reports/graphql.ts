// GraphQL for reader reports: `reportComment` (a reader action: any key, publishable included, with
// the reader's identity), and for moderators (moderate_content) `reports` and `dismissReports`.
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { CommentType } from "../comments/graphql.js";
import { REPORT_REASONS, REPORT_STATUSES, reportComment, type CommentReport } from "./reports.js";
import { dismissReports, listReported, type ReportNote, type ReportedComment } from "./reported.js";

const ReportReasonType = builder.enumType("ReportReason", { values: REPORT_REASONS });
const ReportStatusType = builder.enumType("ReportStatus", { values: REPORT_STATUSES });

const CommentReportType = builder.objectRef<CommentReport>("CommentReport").implement({
  description: "A reader's report of a comment (one per reader and comment).",
  fields: (t) => ({
    id: t.exposeID("id"),
    commentId: t.exposeString("commentId"),
    reason: t.expose("reason", { type: ReportReasonType }),
    note: t.exposeString("note", { nullable: true }),
    status: t.expose("status", { type: ReportStatusType, description: "open until a moderator dismisses it" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const ReportCommentPayload = builder.objectRef<{ report: CommentReport; created: boolean }>("ReportCommentPayload").implement({
  fields: (t) => ({
    report: t.field({ type: CommentReportType, resolve: (p) => p.report }),
    created: t.exposeBoolean("created", { description: "false: this reader had reported the comment already (the same report)" }),
  }),
});

const ReportNoteType = builder.objectRef<ReportNote>("ReportNote").implement({
  fields: (t) => ({
    reason: t.expose("reason", { type: ReportReasonType }),
    note: t.exposeString("note"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const ReportReasonCountType = builder.objectRef<{ reason: (typeof REPORT_REASONS)[number]; count: number }>("ReportReasonCount").implement({
  fields: (t) => ({ reason: t.expose("reason", { type: ReportReasonType }), count: t.exposeInt("count") }),
});

const ReportedCommentType = builder.objectRef<ReportedComment>("ReportedComment").implement({
  description: "A comment with its reports of one status: how many, per reason, the latest notes.",
  fields: (t) => ({
    comment: t.field({ type: CommentType, resolve: (r) => r.comment }),
    status: t.expose("status", { type: ReportStatusType }),
    reportCount: t.exposeInt("reportCount", { description: "reports of this status (one per reader)" }),
    reasons: t.field({
      type: "JSON",
      description: 'Per reason, the reasons given at least once, e.g. {"spam": 2, "abuse": 1}.',
      resolve: (r) => r.reasons,
    }),
    reasonCounts: t.field({
      type: [ReportReasonCountType],
      description: "The same counts as a list, most first.",
      resolve: (r) =>
        Object.entries(r.reasons)
          .map(([reason, count]) => ({ reason: reason as (typeof REPORT_REASONS)[number], count }))
          .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    }),
    notes: t.field({ type: [ReportNoteType], description: "The latest notes (up to 5), newest first.", resolve: (r) => r.notes }),
    lastReportedAt: t.expose("lastReportedAt", { type: "DateTime", nullable: true }),
    dismissedAt: t.expose("dismissedAt", { type: "DateTime", nullable: true }),
  }),
});

const ReportedCommentConnection = defineConnection("ReportedComment", ReportedCommentType);

const ReportCommentInput = builder.inputType("ReportCommentInput", {
  fields: (t) => ({
    reason: t.string({ required: false, description: "spam | abuse | off_topic | other" }),
    note: t.string({ required: false, description: "Up to 500 characters, for moderators." }),
  }),
});

builder.queryField("reports", (t) =>
  t.connection(
    {
      type: ReportedCommentType,
      description:
        "Reported comments, newest report first: `open` (default) those whose open reports reached safety.reportThreshold, " +
        "`dismissed` those with dismissed reports.",
      authScopes: { capability: "moderate_content" },
      args: { status: t.arg({ type: ReportStatusType }), ...legacyPageArgs(t.arg) },
      resolve: (_root, args, ctx) => connectionPage(args, (page) => listReported(ctx, { status: args.status, ...page })),
    },
    ReportedCommentConnection,
  ),
);

builder.mutationFields((t) => ({
  reportComment: t.field({
    type: ReportCommentPayload,
    description: "The reader of X-Service-Identity reports a comment (once; a repeat answers the same report).",
    authScopes: { browser: true },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: ReportCommentInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => reportComment(ctx, id, input),
  }),
  dismissReports: t.field({
    type: ReportedCommentType,
    description: "Closes the comment's open reports (status dismissed); its own status stays as it is.",
    authScopes: { capability: "moderate_content" },
    args: { commentId: t.arg.string({ required: true }) },
    resolve: (_root, { commentId }, ctx) => dismissReports(ctx, commentId),
  }),
}));
