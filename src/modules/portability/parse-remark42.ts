// A remark42 backup or export (`remark42 backup`, the admin's export, the daily automatic backup;
// gzipped or not: decompress.ts expands it), read line by line: the first line is its meta record
// {"version":1,"users":[…],"posts":[{"url","read_only"}]}, then one comment per line as remark42's
// store.Comment writes it: id, pid (the parent, "" for none), text (sanitized HTML) and orig (the
// Markdown its author wrote, when kept), user {id, name, picture}, locator {site, url}, title,
// time, edit {time}, pin, delete, score and votes {voter: true|false}. Each page (locator.url)
// is a thread, announced at its first comment, locked when its post is read_only; each comment a
// post by the reader `remark42:<user id>`; its votes are counted (up and down; who voted is not
// kept). A deleted comment (delete: true) comes as status deleted (the importer skips and counts
// it). A line that is not JSON (a cut file) fails the file at its line; a comment without what
// it needs is a bad record.
import { lines } from "./parse-ndjson.js";
import { asObject, countOf, idOf, textOf, votesOfScore } from "./record-fields.js";
import { htmlToText, outOfRangeDate, parseSourceDate, SourceFailure, type SourceItem } from "./source.js";

/** the meta line lists every user and page of the site: it may be long */
const MAX_META_CHARS = 16 * 1024 * 1024;
/** a comment's line */
const MAX_RECORD_CHARS = 4 * 1024 * 1024;

export async function* parseRemark42(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  /** the pages remark42 keeps read-only */
  const readOnly = new Set<string>();
  const seen = new Set<string>();
  let last = 0;
  try {
    for await (const item of records(input, readOnly, seen, (n) => (last = n))) yield item;
  } catch (err) {
    // a gzip stream that ends early: where, in lines too
    if (err instanceof SourceFailure) throw new SourceFailure(`line ${last + 1} (${err.position})`, err.message);
    throw err;
  }
}

async function* records(
  input: AsyncIterable<Uint8Array | string>,
  readOnly: Set<string>,
  seen: Set<string>,
  at: (line: number) => void,
): AsyncGenerator<SourceItem> {
  let meta = false;
  for await (const line of lines(input, MAX_META_CHARS)) {
    at(line.n);
    const position = `line ${line.n}`;
    if ("tooLong" in line) {
      yield { kind: "error", position, message: `not read: a line longer than ${MAX_META_CHARS} characters`, fatal: true };
      return;
    }
    const text = line.text.replace(/\r$/, "");
    if (!text.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      yield { kind: "error", position, message: "not JSON: the line is cut short or is not a remark42 record", fatal: true };
      return;
    }
    const record = asObject(json);
    if (!meta) {
      if (!record || typeof record.version !== "number") {
        yield {
          kind: "error",
          position,
          message: 'the first line must be remark42\'s meta record {"version":1,"users":[…],"posts":[…]}',
          fatal: true,
        };
        return;
      }
      meta = true;
      for (const p of Array.isArray(record.posts) ? record.posts : []) {
        const post = asObject(p);
        const url = textOf(post?.url);
        if (url && post?.read_only === true) readOnly.add(url);
      }
      continue;
    }
    if (text.length > MAX_RECORD_CHARS) {
      yield { kind: "error", position, message: `a comment longer than ${MAX_RECORD_CHARS} characters` };
      continue;
    }
    const item = comment(record, position);
    if (item.kind === "post" && !seen.has(item.threadKey)) {
      seen.add(item.threadKey);
      yield {
        kind: "thread",
        key: item.threadKey,
        identifier: null,
        url: item.threadKey,
        title: textOf(record?.title)?.trim() || null,
        state: readOnly.has(item.threadKey) ? "locked" : "open",
        createdAt: item.createdAt,
        position,
      };
    }
    yield item;
  }
  if (!meta) yield { kind: "error", position: "line 1", message: "the file is empty: no remark42 meta record", fatal: true };
}

function comment(r: Record<string, unknown> | null, position: string): SourceItem {
  const key = idOf(r?.id);
  const bad = (message: string): SourceItem => ({ kind: "error", position, message: `comment ${key ?? ""}: ${message}` });
  if (!r || !key) return bad("not a remark42 comment (no id)");
  const url = textOf(asObject(r.locator)?.url)?.trim();
  if (!url) return bad("no locator.url");
  const user = asObject(r.user);
  const userId = idOf(user?.id);
  if (!userId) return bad("no user.id");
  const createdAt = parseSourceDate(textOf(r.time));
  if (!createdAt) return bad("time is missing or not a date");
  const deleted = r.delete === true;
  const orig = textOf(r.orig)?.trim();
  const body = deleted ? "" : orig || htmlToText(textOf(r.text) ?? "");
  if (!deleted && !body) return bad("its text is empty");
  const votes = asObject(r.votes);
  const counted = votes ? Object.values(votes) : null;
  const { upvotes, downvotes } = counted
    ? { upvotes: counted.filter((v) => v === true).length, downvotes: counted.filter((v) => v === false).length }
    : votesOfScore(r.score);
  const editedAt = parseSourceDate(textOf(asObject(r.edit)?.time));
  const late = outOfRangeDate({ time: createdAt, "edit.time": editedAt });
  if (late) return bad(late);
  return {
    kind: "post",
    key,
    threadKey: url,
    parentKey: idOf(r.pid),
    author: {
      id: `remark42:${userId}`.slice(0, 255),
      name: (textOf(user?.name)?.trim() || userId).slice(0, 200),
      avatarUrl: textOf(user?.picture) || null,
    },
    body,
    status: deleted ? "deleted" : "approved",
    pinned: r.pin === true,
    createdAt,
    editedAt: editedAt && editedAt.getTime() > createdAt.getTime() ? editedAt : null,
    deletedAt: deleted ? createdAt : null,
    upvotes: countOf(upvotes),
    downvotes: countOf(downvotes),
    position,
  };
}
