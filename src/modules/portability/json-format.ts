// The generic JSON import format (`--format json`, docs/import.md): one JSON array of records, each
// with a "type": discussions, readers and comments, in any order (a comment may come before its
// discussion, its reader or its parent). docs/import.schema.json is this schema as JSON Schema
// (`z.toJSONSchema(GenericImportFile)`; test/unit/import-json-schema.test.ts keeps the file equal to it).
import { z } from "zod";
import { CommentStatus, DiscussionState } from "../../generated/prisma/enums.js";

const iso = z.iso.datetime({ offset: true }).describe("ISO 8601 date-time, e.g. 2024-01-02T03:04:05Z");
const httpUrl = z.string().max(4_000).describe("an http(s) URL; any other is imported as null");

export const GenericDiscussion = z
  .strictObject({
    type: z.literal("discussion"),
    id: z
      .string()
      .min(1)
      .max(512)
      .describe("the page's id in your system: kept when it is 1–128 of A-Z a-z 0-9 . _ : -, else made one (other characters become -)"),
    title: z.string().max(1_000).nullable().optional(),
    url: httpUrl.nullable().optional(),
    state: z.enum(DiscussionState).default("open").optional(),
    createdAt: iso.nullable().optional(),
  })
  .describe("a discussion (a page's comment thread)");

export const GenericReader = z
  .strictObject({
    type: z.literal("reader"),
    id: z
      .string()
      .min(1)
      .max(255)
      .describe("the reader's id: the sub your identity assertions will give them, so they find their comments"),
    name: z.string().min(1).max(200),
    avatarUrl: httpUrl.nullable().optional(),
    email: z.string().max(254).nullable().optional().describe("kept only with keepEmails"),
    createdAt: iso.nullable().optional(),
  })
  .describe("a reader (a comment's author)");

export const GenericComment = z
  .strictObject({
    type: z.literal("comment"),
    id: z.string().min(1).max(255).describe("the comment's id in your system (importing again finds it by this id)"),
    discussionId: z.string().min(1).max(512).describe("a discussion's id (a discussion record, or one that is already there)"),
    parentId: z.string().min(1).max(255).nullable().optional().describe("the id of the comment it replies to, in the same discussion"),
    authorId: z.string().min(1).max(255).describe("a reader's id (a reader record, or else a reader named authorName is made)"),
    authorName: z.string().min(1).max(200).nullable().optional().describe("the name shown on this comment, when it is not its reader's"),
    body: z.string().min(1).describe("Markdown"),
    status: z.enum(CommentStatus).default("approved").optional().describe("deleted comments are skipped (and counted)"),
    pinned: z.boolean().default(false).optional(),
    createdAt: iso,
    editedAt: iso.nullable().optional(),
    upvotes: z.int().min(0).max(2_147_483_647).optional(),
    downvotes: z.int().min(0).max(2_147_483_647).optional(),
    reactions: z
      .record(z.string().min(1).max(64), z.int().min(0).max(2_147_483_647))
      .optional()
      .describe('reaction counts by kind, e.g. {"like": 3}'),
  })
  .describe("a comment");

export const GenericRecord = z.discriminatedUnion("type", [GenericDiscussion, GenericReader, GenericComment]);

export const GenericImportFile = z.array(GenericRecord).meta({
  title: "Generic comments import (engagement import --format json)",
  description: "One JSON array of discussion, reader and comment records, in any order.",
});

export type GenericRecord = z.infer<typeof GenericRecord>;
