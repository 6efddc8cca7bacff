// The export format, version 1: NDJSON, one record per line, each with a `type`. The first line is
// the header, the last the end record (its counts let a reader check it got everything); between
// them discussions, readers, comments and reactions, in that order. `engagement import --format
// ndjson` and POST /api/v1/imports?format=ndjson read it back (src/modules/portability/parse-ndjson.ts).
import { z } from "zod";
import { CommentStatus, DiscussionState } from "../../generated/prisma/enums.js";

export const EXPORT_VERSION = 1;

const iso = z.string().datetime({ offset: true });
const isoOrNull = iso.nullable().optional();

export const HeaderRecord = z.object({
  type: z.literal("export"),
  version: z.literal(EXPORT_VERSION),
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

/** A reader: the id is the tenant's `sub` (or a namespaced import id, e.g. `disqus:jane`); '' is the erased author. */
export const ReaderRecord = z.object({
  type: z.literal("reader"),
  id: z.string().max(255),
  name: z.string().max(1_000),
  avatarUrl: z.string().max(4_000).nullable().optional(),
  /** the reader's badge (contract section 21): exported; an import does not restore it */
  badge: z.string().max(100).nullable().optional(),
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
    badge: z.string().max(100).nullable().optional(),
  }),
  body: z.string().refine((s) => !s.includes("\u0000"), "must not contain NUL characters"),
  /** the export's rendering of body; an import renders the body again (HTML from a file is never stored) */
  bodyHtml: z.string().optional(),
  status: z.enum(CommentStatus),
  pinned: z.boolean().default(false),
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

export const EndRecord = z.object({
  type: z.literal("end"),
  counts: z.object({ discussions: z.number(), readers: z.number(), comments: z.number(), reactions: z.number() }),
});

export const ImportRecord = z.discriminatedUnion("type", [DiscussionRecord, ReaderRecord, CommentRecord, ReactionRecord, EndRecord]);

export type HeaderRecord = z.infer<typeof HeaderRecord>;
export type DiscussionRecord = z.input<typeof DiscussionRecord>;
export type ReaderRecord = z.input<typeof ReaderRecord>;
export type CommentRecord = z.input<typeof CommentRecord>;
export type ReactionRecord = z.input<typeof ReactionRecord>;
export type EndRecord = z.infer<typeof EndRecord>;
export type ExportRecord = HeaderRecord | DiscussionRecord | ReaderRecord | CommentRecord | ReactionRecord | EndRecord;
