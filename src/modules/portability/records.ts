// The export format, version 2: NDJSON, one record per line, each with a `type`. The first line is
// the header, the last the end record (its counts let a reader check it got everything); between
// them discussions, readers, comments, reactions, votes and page reactions, in that order: everything
// a tenant's threads hold, so that an export imported into an empty tenant and exported again gives
// the same records but for the ids bound to the tenant (test/export-roundtrip.test.ts). `engagement
// import --format ndjson` and POST /api/v1/imports?format=ndjson read it back, and version 1's
// files too (src/modules/portability/parse-ndjson.ts).
import { z } from "zod";
import { CommentKind, CommentStatus, DiscussionState, TrustLevel } from "../../generated/prisma/enums.js";

export const EXPORT_VERSION = 2;

const iso = z.string().datetime({ offset: true });
const isoOrNull = iso.nullable().optional();
const count = z.number().int().min(0).max(2_147_483_647);

export const HeaderRecord = z.object({
  type: z.literal("export"),
  version: z.union([z.literal(1), z.literal(EXPORT_VERSION)]),
  tenantId: z.string().min(1),
  exportedAt: iso,
  since: isoOrNull,
});

export const DiscussionRecord = z.object({
  type: z.literal("discussion"),
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1–128 characters of A-Z a-z 0-9 . _ : -"),
  title: z.string().max(1_000).nullable().optional(),
  url: z.string().max(4_000).nullable().optional(),
  state: z.enum(DiscussionState).default("open"),
  createdAt: iso,
});

/**
 * A reader: the id is the tenant's `sub` (or a namespaced import id, e.g. `disqus:jane`); '' is the
 * erased author. The badge and trust level are given to a reader the import makes.
 */
export const ReaderRecord = z.object({
  type: z.literal("reader"),
  id: z.string().max(255),
  name: z.string().max(1_000),
  avatarUrl: z.string().max(4_000).nullable().optional(),
  badge: z.string().max(100).nullable().optional(),
  trustLevel: z.enum(TrustLevel).default("default"),
  createdAt: iso,
});

export const CommentRecord = z.object({
  type: z.literal("comment"),
  id: z.string().min(1).max(64),
  discussionId: DiscussionRecord.shape.id,
  parentId: z.string().min(1).max(64).nullable().optional(),
  author: z.object({
    id: z.string().max(255),
    name: z.string().max(1_000),
    avatarUrl: z.string().max(4_000).nullable().optional(),
    /** the author's badge as comments carry it (contract section 21): read and left (the reader record gives it) */
    badge: z.string().max(100).nullable().optional(),
  }),
  body: z.string().refine((s) => !s.includes("\u0000"), "must not contain NUL characters"),
  /** the stored rendering, as every comment carries it (contract section 22): read and left (an import renders the body again; HTML from a file is never stored) */
  bodyHtml: z.string().optional(),
  status: z.enum(CommentStatus),
  pinned: z.boolean().default(false),
  kind: z.enum(CommentKind).default("comment"),
  /** the comment's vote totals (its readers' votes, which vote records list, and those its source counted without voters) */
  upvotes: count.default(0),
  downvotes: count.default(0),
  /** its reaction totals by kind (its readers' reactions, which reaction records list, and those its source counted) */
  reactions: z.record(z.string().min(1).max(64), count).default({}),
  createdAt: iso,
  editedAt: isoOrNull,
  deletedAt: isoOrNull,
});

export const ReactionRecord = z.object({
  type: z.literal("reaction"),
  commentId: z.string().min(1).max(64),
  discussionId: DiscussionRecord.shape.id,
  readerId: z.string().max(255),
  kind: z.string().min(1).max(64),
  createdAt: iso,
});

export const VoteRecord = z.object({
  type: z.literal("vote"),
  commentId: z.string().min(1).max(64),
  discussionId: DiscussionRecord.shape.id,
  readerId: z.string().max(255),
  value: z.union([z.literal(1), z.literal(-1)]),
  createdAt: iso,
});

/** A reader's reaction to a page (its discussion: contract section 17's page reactions). */
export const PageReactionRecord = z.object({
  type: z.literal("pageReaction"),
  discussionId: DiscussionRecord.shape.id,
  readerId: z.string().max(255),
  kind: z.string().min(1).max(64),
  createdAt: iso,
});

export const EndRecord = z.object({
  type: z.literal("end"),
  counts: z.object({
    discussions: z.number(),
    readers: z.number(),
    comments: z.number(),
    reactions: z.number(),
    votes: z.number().optional(),
    pageReactions: z.number().optional(),
  }),
});

export const ImportRecord = z.discriminatedUnion("type", [
  DiscussionRecord,
  ReaderRecord,
  CommentRecord,
  ReactionRecord,
  VoteRecord,
  PageReactionRecord,
  EndRecord,
]);

export type HeaderRecord = z.infer<typeof HeaderRecord>;
export type DiscussionRecord = z.input<typeof DiscussionRecord>;
export type ReaderRecord = z.input<typeof ReaderRecord>;
export type CommentRecord = z.input<typeof CommentRecord>;
export type ReactionRecord = z.input<typeof ReactionRecord>;
export type VoteRecord = z.input<typeof VoteRecord>;
export type PageReactionRecord = z.input<typeof PageReactionRecord>;
export type EndRecord = z.infer<typeof EndRecord>;
export type ExportRecord =
  HeaderRecord | DiscussionRecord | ReaderRecord | CommentRecord | ReactionRecord | VoteRecord | PageReactionRecord | EndRecord;
