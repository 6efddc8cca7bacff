// An import: reads a file of one format (Disqus XML, WordPress WXR, our NDJSON export, a remark42
// backup, a Commento export, an isso database, GitHub's comments JSON, the generic JSON format,
// Artalk's Artrans, a Twikoo export or a Cusdis database, its SQLite file or a pg_dump; any of
// them gzipped: decompress.ts) as a stream and writes what it holds with
// src/modules/portability/engine/import-writer.ts — threads as discussions (id from the thread's
// identifier or its URL, `idFrom`), posts as comments with their times, status and thread
// structure, authors as readers namespaced by source. A bad record is
// reported with its position and skipped, or stops the import (`onError`); what was read before it
// is written, and running the file again continues where it left (ids come from the source's). A
// file that is not well-formed (a fatal error) writes nothing: what was read is only staged
// (import-writer.ts) and let go. A file whose format is not the one asked for fails before it is
// read (sniff.ts). A source comment id met again in one file is a bad record, reported as the
// comments are written (import-writer.ts), whatever `onError` says; a thread the source
// marks deleted is not imported, and its comments are counted as skipped. Each comment keeps the
// author name its source gives it, whichever reader it is merged into. The
// rules the API holds writes to hold here too, whatever the format: a comment body longer than the
// tenant's maxBodyLength is a bad record; a discussion url or an avatar url that is not an http(s)
// URL (isHttpUrl, src/lib/http-url.ts) is dropped (null), as an identity provider's picture is,
// and the record kept.
// A deleted comment of remark42, Commento, isso, Cusdis or the generic JSON (contract section 25)
// is not imported: it is counted as skipped, and a reply to it hangs from its parent instead (Disqus
// and WordPress deleted posts stay deleted rows, as before). Votes and reactions the source counts
// are written as the comment's counts.
// Imported history appends no events, so no stream or webhook hears of it.
import type { Sql } from "../../../db/sql.js";
import { isHttpUrl } from "../../../lib/http-url.js";
import { DEFAULT_SETTINGS } from "../../../tenancy/settings/tree.js";
import { renderBody, type FormattingOptions } from "../../../lib/markdown.js";
import { ImportWriter, type WriterCounts } from "./import-writer.js";
import { openInput } from "../decompress.js";
import { LEGACY_IDS, PARSERS, SCOPED_IDS, SKIPS_DELETED } from "../parsers.js";
import { SQLITE_FORMATS, sniffFormat } from "../sniff.js";
import {
  discussionIdOf,
  importedCommentId,
  outOfRangeDate,
  SourceFailure,
  threadDiscussionId,
  type ImportChoices,
  type SourceItem,
  threadPageUrl,
} from "../source.js";

/** The choices (keepEmails off unless given), and how this run goes. */
export interface ImportOptions extends Omit<ImportChoices, "keepEmails" | "site">, Partial<Pick<ImportChoices, "keepEmails" | "site">> {
  tenantId: string;
  /** the longest comment body: the tenant's maxBodyLength setting (by default, the setting's default) */
  maxBodyLength?: number;
  /** how bodies are rendered (bodyHtml): the tenant's formatting settings (by default, their defaults) */
  formatting?: FormattingOptions;
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

/** how far a reply climbs past deleted ancestors (a cycle in a hostile file ends there) */
const MAX_CLIMB = 1_000;

export async function runImport(sql: Sql, input: AsyncIterable<Uint8Array | string>, opts: ImportOptions): Promise<ImportSummary> {
  const errors: ImportError[] = [];
  const maxBodyLength = opts.maxBodyLength ?? DEFAULT_SETTINGS.maxBodyLength;
  const formatting = opts.formatting ?? DEFAULT_SETTINGS.formatting;
  let skipped = 0;
  const note = (position: string, message: string) => {
    if (errors.length < MAX_ERRORS) errors.push({ position, message });
  };
  let failure: string | null = null;
  /** a bad record: reported and skipped, or where the import stops */
  const refuse = (position: string, message: string) => {
    skipped++;
    note(position, message);
    if (opts.onError === "stop") failure = `${position}: ${message}`;
  };
  const writer = new ImportWriter(sql, opts.tenantId, {
    batchSize: opts.batchSize ?? 1_000,
    now: opts.now,
    warn: note,
    skip: (position, message) => {
      skipped++;
      note(position, message);
    },
    skipped: (n) => {
      skipped += n;
    },
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
  /** the threads the source marks deleted */
  const deletedThreads = new Set<string>();
  let keepIds = false; // our own export of this same tenant: its comment ids are kept
  // a source whose comment ids are numbered per database (isso, WordPress) names a comment by its
  // discussion and id, so that two such files of one tenant never share an id; the id an earlier
  // version gave it (tenant, format and source id) is staged beside, and a row of it there is kept
  const scoped = SCOPED_IDS.has(opts.format);
  const commentId = (discussionId: string, key: string) =>
    keepIds ? key : importedCommentId(opts.tenantId, opts.format, scoped ? `${discussionId}\u0000${key}` : key);
  const legacyId = (key: string) => (LEGACY_IDS.has(opts.format) ? importedCommentId(opts.tenantId, opts.format, key) : null);
  /** a file that cannot be read on: nothing of it is written */
  let fatal = false;

  /** the deleted comments left out (SKIPS_DELETED), with their parents: where their replies go */
  const deletedParents = new Map<string, string | null>();
  /** and their discussions */
  const deletedIn = new Map<string, string>();
  const liveParent = (key: string | null) => {
    for (let i = 0; key !== null && deletedParents.has(key) && i < MAX_CLIMB; i++) key = deletedParents.get(key) ?? null;
    return key;
  };

  let sniffed: Awaited<ReturnType<typeof sniffFormat>>;
  try {
    sniffed = await sniffFormat((await openInput(input)).stream);
  } catch (err) {
    if (!(err instanceof SourceFailure)) throw err;
    note(err.position, err.message);
    await writer.finish(false);
    return { ...snapshot(), state: "failed", failure: `${err.position}: ${err.message}` };
  }
  // what the file is when it is not the format asked for (an SQLite file whose first pages do not
  // say whose it is is still no other format's)
  const other = sniffed.format
    ? sniffed.format !== opts.format && sniffed.name
    : sniffed.sqlite && !SQLITE_FORMATS.has(opts.format) && "an SQLite database";
  if (other) {
    const message = `this file is ${other}, not ${opts.format}`;
    note("line 1, column 1", message);
    return { ...snapshot(), state: "failed", failure: message };
  }

  try {
    for await (const item of PARSERS[opts.format](sniffed.stream, opts.signal)) {
      if (opts.signal?.aborted) {
        failure = "stopped: the server is shutting down";
        break;
      }
      // each parser names a date it cannot take (source.ts, outOfRangeDate); this holds for any other
      const late = lateDate(item);
      if (late !== null) {
        refuse(late.position, late.message);
        if (failure) break;
        continue;
      }
      switch (item.kind) {
        case "header":
          keepIds = item.tenantId === opts.tenantId;
          break;
        case "thread": {
          if (item.deleted) {
            deletedThreads.add(item.key);
            break;
          }
          const id = threadDiscussionId(item, opts.idFrom);
          if (!id) {
            refuse(item.position, "a thread without an identifier or a link");
            break;
          }
          const pageUrl = threadPageUrl(item, opts.site ?? null);
          if (!pageUrl && item.pathNeedsSite) {
            // its page is a path on a site neither the file nor the import names: nothing is written
            const message = `its page is ${JSON.stringify(item.identifier)}, a path, and neither the file nor the import names the site it is on: import the file with the site's origin (--site, ?site=), e.g. https://blog.example`;
            skipped++;
            note(item.position, message);
            fatal = true;
            failure = `${item.position}: ${message}`;
            break;
          }
          const url = httpUrlOrNull(pageUrl);
          const target = await writer.discussionFor(id, url);
          threads.set(item.key, target);
          writer.addDiscussion({
            id: target,
            title: item.title?.slice(0, 1_000) ?? null,
            url,
            state: item.state ?? "open",
            createdAt: item.createdAt ?? opts.now,
          });
          break;
        }
        case "reader":
          writer.addReader({
            id: item.id,
            name: item.name,
            avatarUrl: httpUrlOrNull(item.avatarUrl),
            email: opts.keepEmails ? (item.email ?? null) : null,
            badge: item.badge ?? null,
            trustLevel: item.trustLevel ?? null,
            createdAt: item.createdAt ?? opts.now,
          });
          break;
        case "post": {
          if (deletedThreads.has(item.threadKey)) {
            skipped++;
            break;
          }
          if (item.status === "deleted" && SKIPS_DELETED.has(opts.format)) {
            skipped++;
            deletedParents.set(item.key, item.parentKey);
            deletedIn.set(item.key, threads.get(item.threadKey) ?? item.threadKey);
            break;
          }
          // our export and the generic JSON may name a discussion without a record of it
          const discussionId =
            threads.get(item.threadKey) ??
            (opts.format === "ndjson"
              ? item.threadKey
              : opts.format === "json"
                ? (discussionIdOf(item.threadKey) ?? undefined)
                : undefined);
          if (!discussionId) {
            refuse(item.position, `its thread ${item.threadKey} is not in the file (before it)`);
            break;
          }
          if (item.body.length > maxBodyLength) {
            refuse(item.position, `its body is ${item.body.length} characters, longer than maxBodyLength (${maxBodyLength})`);
            break;
          }
          writer.addReader(
            {
              id: item.author.id,
              name: item.author.name,
              avatarUrl: httpUrlOrNull(item.author.avatarUrl),
              email: opts.keepEmails ? (item.author.email ?? null) : null,
              createdAt: item.createdAt,
            },
            item.author.provisional === true,
          );
          const parentKey = liveParent(item.parentKey);
          await writer.addComment({
            id: commentId(discussionId, item.key),
            legacyId: legacyId(item.key),
            discussionId,
            parentId: parentKey ? commentId(discussionId, parentKey) : null,
            parentKey,
            authorId: item.author.id,
            authorName: item.shownName !== undefined ? item.shownName : item.author.name,
            body: item.body,
            bodyHtml: item.body === "" ? "" : renderBody(item.body, formatting).html,
            status: item.status,
            pinned: item.pinned,
            createdAt: item.createdAt,
            editedAt: item.editedAt,
            deletedAt: item.deletedAt,
            upvotes: item.upvotes ?? 0,
            downvotes: item.downvotes ?? 0,
            reactionCounts: item.reactionCounts ?? null,
            kind: item.commentKind ?? "comment",
            position: item.position,
          });
          break;
        }
        case "reaction":
          await writer.addReaction({
            commentId: commentId(threads.get(item.threadKey) ?? item.threadKey, item.postKey),
            discussionId: threads.get(item.threadKey) ?? item.threadKey,
            readerId: item.readerId,
            kind: item.reaction,
            createdAt: item.createdAt,
          });
          break;
        case "vote":
          await writer.addVote({
            commentId: commentId(threads.get(item.threadKey) ?? item.threadKey, item.postKey),
            discussionId: threads.get(item.threadKey) ?? item.threadKey,
            readerId: item.readerId,
            value: item.value,
            createdAt: item.createdAt,
          });
          break;
        case "pageReaction":
          await writer.addPageReaction({
            discussionId: threads.get(item.threadKey) ?? item.threadKey,
            readerId: item.readerId,
            kind: item.reaction,
            createdAt: item.createdAt,
          });
          break;
        case "error":
          skipped++;
          note(item.position, item.message);
          fatal ||= item.fatal === true;
          if (item.fatal || opts.onError === "stop") failure = `${item.position}: ${item.message}`;
          break;
      }
      if (failure) break;
    }
  } catch (err) {
    // a file that cannot be read on, found below its parser (a cut gzip stream, a damaged database)
    if (!(err instanceof SourceFailure)) {
      await writer.finish(false).catch(() => undefined);
      throw err;
    }
    if (opts.signal?.aborted) failure = "stopped: the server is shutting down";
    else {
      skipped++;
      note(err.position, err.message);
      fatal = true;
      failure = `${err.position}: ${err.message}`;
    }
  }
  // replies that came before the deleted comment they answer hang from its nearest live ancestor too
  writer.reparent(
    [...deletedParents.keys()].map((key) => {
      const parentKey = liveParent(deletedParents.get(key) ?? null);
      const discussionId = deletedIn.get(key)!;
      return { id: commentId(discussionId, key), parentId: parentKey ? commentId(discussionId, parentKey) : null, parentKey };
    }),
  );
  // what was read is written and counted, a stopped import's too (its discussions' counts stay
  // right); a file that is not well-formed writes nothing
  await writer.finish(!fatal);
  const summary: ImportSummary = { ...snapshot(), state: failure ? "failed" : "succeeded", failure };
  await reporting;
  return summary;
}

/** A date of an item outside years 1 to 9999, with the item's position; null when all are in range. */
function lateDate(item: SourceItem): { position: string; message: string } | null {
  const message =
    item.kind === "post"
      ? outOfRangeDate({ createdAt: item.createdAt, editedAt: item.editedAt, deletedAt: item.deletedAt })
      : item.kind === "thread" || item.kind === "reader" || item.kind === "reaction" || item.kind === "vote" || item.kind === "pageReaction"
        ? outOfRangeDate({ createdAt: item.createdAt })
        : null;
  return message !== null && "position" in item ? { position: item.position, message } : null;
}

const httpUrlOrNull = (url: string | null | undefined): string | null => (isHttpUrl(url) ? url : null);
