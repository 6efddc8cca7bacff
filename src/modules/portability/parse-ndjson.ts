// Our own export (src/modules/portability/records.ts) read back line by line: the header first
// (version 2, or 1), then discussions, readers, comments, reactions, votes and page reactions in any
// order; a line that is not
// JSON or not a valid record is an error at its line. Discussion and reader ids are kept as they
// are; comment ids too when the file was exported from the same tenant (see importer.ts).
import { CommentRecord, HeaderRecord, ImportRecord, EXPORT_VERSION } from "./records.js";
import { outOfRangeDate, parseSourceDate, type SourceItem } from "./source.js";

/** a longer line is refused rather than buffered (a comment body is at most a few hundred KB) */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/**
 * The lines of `input` with their numbers, never more than one line (of at most `maxLine`
 * characters) in memory. A line's pieces are kept apart until its end is found, so each character
 * is looked at once however long the line.
 */
export async function* lines(
  input: AsyncIterable<Uint8Array | string>,
  maxLine = MAX_LINE_BYTES,
): AsyncGenerator<{ n: number; text: string } | { n: number; tooLong: true }> {
  const decoder = new TextDecoder("utf-8");
  let parts: string[] = [];
  let held = 0;
  let n = 0;
  let skipping = false;
  for await (const chunk of input) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let at: number;
    while ((at = text.indexOf("\n", start)) >= 0) {
      const line = parts.length ? parts.join("") + text.slice(start, at) : text.slice(start, at);
      parts = [];
      held = 0;
      start = at + 1;
      n++;
      if (skipping) {
        skipping = false;
        continue;
      }
      yield { n, text: line };
    }
    if (skipping || start === text.length) continue;
    parts.push(text.slice(start));
    held += text.length - start;
    if (held > maxLine) {
      yield { n: n + 1, tooLong: true };
      skipping = true;
      parts = [];
      held = 0;
    }
  }
  const rest = parts.join("") + decoder.decode();
  if (rest.length && !skipping) yield { n: n + 1, text: rest };
}

const date = (s: string | null | undefined) => parseSourceDate(s ?? null);

export async function* parseNdjson(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  let header = false;
  for await (const line of lines(input)) {
    const position = `line ${line.n}`;
    if ("tooLong" in line) {
      yield { kind: "error", position, message: `longer than ${MAX_LINE_BYTES} bytes` };
      continue;
    }
    const text = line.text.replace(/\r$/, "");
    if (!text.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      yield { kind: "error", position, message: "not JSON", fatal: !header };
      continue;
    }
    if (!header) {
      const h = HeaderRecord.safeParse(json);
      if (!h.success) {
        yield {
          kind: "error",
          position,
          message: `the first line must be the export header {"type":"export","version":${EXPORT_VERSION},"tenantId",…}`,
          fatal: true,
        };
        return;
      }
      header = true;
      yield { kind: "header", tenantId: h.data.tenantId };
      continue;
    }
    const parsed = ImportRecord.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      yield { kind: "error", position, message: `${issue?.path.join(".") || "record"}: ${issue?.message ?? "not a record"}` };
      continue;
    }
    const r = parsed.data;
    const late =
      r.type === "end"
        ? null
        : outOfRangeDate({
            createdAt: date(r.createdAt),
            editedAt: r.type === "comment" ? date(r.editedAt) : null,
            deletedAt: r.type === "comment" ? date(r.deletedAt) : null,
          });
    if (late) {
      yield { kind: "error", position, message: `${r.type}: ${late}` };
      continue;
    }
    switch (r.type) {
      case "discussion":
        yield {
          kind: "thread",
          key: r.id,
          discussionId: r.id,
          identifier: r.id,
          url: r.url ?? null,
          title: r.title ?? null,
          state: r.state,
          createdAt: date(r.createdAt),
          position,
        };
        break;
      case "reader":
        yield {
          kind: "reader",
          id: r.id,
          name: r.name,
          avatarUrl: r.avatarUrl ?? null,
          badge: r.badge ?? null,
          ...(r.trustLevel ? { trustLevel: r.trustLevel } : {}),
          createdAt: date(r.createdAt),
          position,
        };
        break;
      case "comment":
        yield comment(r, position);
        break;
      case "reaction":
        yield {
          kind: "reaction",
          postKey: r.commentId,
          threadKey: r.discussionId,
          readerId: r.readerId,
          reaction: r.kind,
          createdAt: date(r.createdAt)!,
          position,
        };
        break;
      case "vote":
        yield {
          kind: "vote",
          postKey: r.commentId,
          threadKey: r.discussionId,
          readerId: r.readerId,
          value: r.value,
          createdAt: date(r.createdAt)!,
          position,
        };
        break;
      case "pageReaction":
        yield {
          kind: "pageReaction",
          threadKey: r.discussionId,
          readerId: r.readerId,
          reaction: r.kind,
          createdAt: date(r.createdAt)!,
          position,
        };
        break;
      case "end":
        break;
    }
  }
  if (!header) yield { kind: "error", position: "line 1", message: "the file is empty: no export header", fatal: true };
}

function comment(r: CommentRecord, position: string): SourceItem {
  const parsed = CommentRecord.parse(r);
  return {
    kind: "post",
    key: parsed.id,
    threadKey: parsed.discussionId,
    parentKey: parsed.parentId ?? null,
    author: parsed.author,
    body: parsed.body,
    status: parsed.status,
    pinned: parsed.pinned,
    createdAt: date(parsed.createdAt)!,
    editedAt: date(parsed.editedAt),
    deletedAt: date(parsed.deletedAt),
    upvotes: parsed.upvotes,
    downvotes: parsed.downvotes,
    reactionCounts: Object.keys(parsed.reactions).length ? parsed.reactions : null,
    commentKind: parsed.kind,
    position,
  };
}
