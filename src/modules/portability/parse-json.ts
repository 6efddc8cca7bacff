// The generic JSON format (json-format.ts, docs/import.md) read as a stream (json-reader.ts): each
// element of the array is checked against its record's schema (a bad one is a bad record at its
// position) and becomes a thread, a reader or a post. Readers are kept by the ids the file gives
// them; a comment's author without a reader record becomes a reader named by the comment's
// authorName. Comment ids are the file's (made the tenant's own by the importer).
import { readJson } from "./json-reader.js";
import { GenericRecord } from "./json-format.js";
import { emailOf, outOfRangeDate, parseSourceDate, type SourceItem } from "./source.js";

export async function* parseJson(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  for await (const r of readJson(input, { paths: ["$.*"], recordDepth: 2 })) {
    if (r.kind === "error") {
      yield r;
      return;
    }
    if (typeof r.path[0] !== "number") {
      yield { kind: "error", position: r.position, message: "not an array: the file is one JSON array of records", fatal: true };
      return;
    }
    const parsed = GenericRecord.safeParse(r.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      yield { kind: "error", position: r.position, message: `${issue?.path.join(".") || "record"}: ${issue?.message ?? "not a record"}` };
      continue;
    }
    const v = parsed.data;
    const position = r.position;
    const late = outOfRangeDate({
      createdAt: parseSourceDate(v.createdAt),
      editedAt: v.type === "comment" ? parseSourceDate(v.editedAt) : null,
    });
    if (late) {
      yield { kind: "error", position, message: `${v.type} ${v.id}: ${late}` };
      continue;
    }
    if (v.type === "discussion") {
      yield {
        kind: "thread",
        key: v.id,
        identifier: v.id,
        url: v.url ?? null,
        title: v.title ?? null,
        state: v.state ?? "open",
        createdAt: parseSourceDate(v.createdAt),
        position,
      };
    } else if (v.type === "reader") {
      yield {
        kind: "reader",
        id: v.id,
        name: v.name,
        avatarUrl: v.avatarUrl ?? null,
        email: emailOf(v.email),
        createdAt: parseSourceDate(v.createdAt),
        position,
      };
    } else {
      const createdAt = parseSourceDate(v.createdAt)!;
      const status = v.status ?? "approved";
      const editedAt = parseSourceDate(v.editedAt);
      yield {
        kind: "post",
        key: v.id,
        threadKey: v.discussionId,
        parentKey: v.parentId ?? null,
        author: { id: v.authorId, name: v.authorName ?? "Anonymous", provisional: true },
        shownName: v.authorName ?? null,
        body: status === "deleted" ? "" : v.body,
        status,
        pinned: v.pinned ?? false,
        createdAt,
        editedAt,
        deletedAt: status === "deleted" ? (editedAt ?? createdAt) : null,
        upvotes: v.upvotes ?? 0,
        downvotes: v.downvotes ?? 0,
        reactionCounts: v.reactions && Object.keys(v.reactions).length ? v.reactions : null,
        position,
      };
    }
  }
}
