// An import: reads a file of one format (Disqus XML, WordPress WXR or our NDJSON export) as a
// stream and writes what it holds with src/modules/portability/import-writer.ts — threads as
// discussions (id from the thread's identifier or its URL, `idFrom`), posts as comments with their
// times, status and thread structure, authors as readers namespaced by source. A bad record is
// reported with its position and skipped, or stops the import (`onError`); what was written before
// it stays, and running the file again continues where it left (ids come from the source's).
// Imported history appends no events, so no stream or webhook hears of it.
import type { Sql } from "../../db/sql.js";
import { ImportWriter, type WriterCounts } from "./import-writer.js";
import { parseDisqus } from "./parse-disqus.js";
import { parseWordpress } from "./parse-wordpress.js";
import { parseNdjson } from "./parse-ndjson.js";
import { importedCommentId, threadDiscussionId, type IdFrom, type ImportFormat, type OnError, type SourceItem } from "./source.js";

export interface ImportOptions {
  tenantId: string;
  format: ImportFormat;
  idFrom: IdFrom;
  onError: OnError;
  /** authors' addresses become their readers' (for reply emails, contract section 15); else none is stored */
  keepEmails?: boolean;
  /** rows per statement (default 1,000) */
  batchSize?: number;
  now: Date;
  /** told as the import goes: after each batch is written, at most every `progressMs` */
  onProgress?: (p: ImportProgress) => void | Promise<void>;
  progressMs?: number;
  /** stops reading (a server shutting down): the import ends failed, with what was written kept */
  signal?: AbortSignal;
}

export interface ImportError {
  position: string;
  message: string;
}

export interface ImportProgress extends WriterCounts {
  skipped: number;
  errors: ImportError[];
}

export interface ImportSummary extends ImportProgress {
  state: "succeeded" | "failed";
  failure: string | null;
}

/** errors kept for the summary; past this only their number grows */
export const MAX_ERRORS = 100;

const PARSERS: Record<ImportFormat, (input: AsyncIterable<Uint8Array | string>) => AsyncGenerator<SourceItem>> = {
  disqus: parseDisqus,
  wordpress: parseWordpress,
  ndjson: parseNdjson,
};

export async function runImport(sql: Sql, input: AsyncIterable<Uint8Array | string>, opts: ImportOptions): Promise<ImportSummary> {
  const errors: ImportError[] = [];
  let skipped = 0;
  const note = (position: string, message: string) => {
    if (errors.length < MAX_ERRORS) errors.push({ position, message });
  };
  const writer = new ImportWriter(sql, opts.tenantId, {
    batchSize: opts.batchSize ?? 1_000,
    now: opts.now,
    warn: note,
    onFlush: () => void report(false),
  });
  const snapshot = (): ImportProgress => ({ ...writer.counts, skipped, errors: [...errors] });
  let lastReport = 0;
  let reporting: Promise<void> | undefined;
  const report = async (force: boolean) => {
    if (!opts.onProgress) return;
    const now = Date.now();
    if (!force && (now - lastReport < (opts.progressMs ?? 500) || reporting)) return;
    lastReport = now;
    try {
      reporting = Promise.resolve(opts.onProgress(snapshot()));
      await reporting;
    } finally {
      reporting = undefined;
    }
  };

  const threads = new Map<string, string>();
  let keepIds = false; // our own export of this same tenant: its comment ids are kept
  const commentId = (key: string) => (keepIds ? key : importedCommentId(opts.tenantId, opts.format, key));
  let failure: string | null = null;

  for await (const item of PARSERS[opts.format](input)) {
    if (opts.signal?.aborted) {
      failure = "stopped: the server is shutting down";
      break;
    }
    switch (item.kind) {
      case "header":
        keepIds = item.tenantId === opts.tenantId;
        break;
      case "thread": {
        const id = threadDiscussionId(item, opts.idFrom);
        if (!id) {
          skipped++;
          note(item.position, "a thread without an identifier or a link");
          if (opts.onError === "stop") failure = `${item.position}: a thread without an identifier or a link`;
          break;
        }
        threads.set(item.key, id);
        writer.addDiscussion({
          id,
          title: item.title?.slice(0, 1_000) ?? null,
          url: item.url?.slice(0, 4_000) ?? null,
          state: item.state ?? "open",
          createdAt: item.createdAt ?? opts.now,
        });
        break;
      }
      case "reader":
        writer.addReader({
          id: item.id,
          name: item.name,
          avatarUrl: item.avatarUrl ?? null,
          email: opts.keepEmails ? (item.email ?? null) : null,
          createdAt: item.createdAt ?? opts.now,
        });
        break;
      case "post": {
        const discussionId = threads.get(item.threadKey) ?? (opts.format === "ndjson" ? item.threadKey : undefined);
        if (!discussionId) {
          const message = `its thread ${item.threadKey} is not in the file (before it)`;
          skipped++;
          note(item.position, message);
          if (opts.onError === "stop") failure = `${item.position}: ${message}`;
          break;
        }
        writer.addReader({
          id: item.author.id,
          name: item.author.name,
          avatarUrl: item.author.avatarUrl ?? null,
          email: opts.keepEmails ? (item.author.email ?? null) : null,
          createdAt: item.createdAt,
        });
        await writer.addComment({
          id: commentId(item.key),
          discussionId,
          parentId: item.parentKey ? commentId(item.parentKey) : null,
          parentKey: item.parentKey,
          authorId: item.author.id,
          body: item.body,
          status: item.status,
          pinned: item.pinned,
          createdAt: item.createdAt,
          editedAt: item.editedAt,
          deletedAt: item.deletedAt,
          position: item.position,
        });
        break;
      }
      case "reaction":
        await writer.addReaction({
          commentId: commentId(item.postKey),
          discussionId: threads.get(item.threadKey) ?? item.threadKey,
          readerId: item.readerId,
          kind: item.reaction,
          createdAt: item.createdAt,
        });
        break;
      case "error":
        skipped++;
        note(item.position, item.message);
        if (item.fatal || opts.onError === "stop") failure = `${item.position}: ${item.message}`;
        break;
    }
    if (failure) break;
  }
  // what was read is written and counted, a stopped import's too: its discussions' counts stay right
  await writer.finish();
  const summary: ImportSummary = { ...snapshot(), state: failure ? "failed" : "succeeded", failure };
  await reporting;
  return summary;
}
