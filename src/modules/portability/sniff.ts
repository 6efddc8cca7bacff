// Which format a file is, from its first characters (a gzip file's, once expanded: decompress.ts):
// our NDJSON export starts with its header object {"type":"export",…}, a remark42 backup with its
// meta line {"version":…,"users":…}, a Commento export is an object with "comments" of
// "commentHex"es, an isso or a Cusdis database is an SQLite file whose schema (on its first pages)
// names isso's tables (threads, remove_stale_threads) or Cusdis's columns (by_nickname, pageId), a
// plain-format pg_dump (its first lines `--` and `-- PostgreSQL database dump`) is Cusdis's (the
// one format read from PostgreSQL),
// GitHub's REST answers, the generic JSON format and Artalk's Artrans are arrays (of GitHub's
// comments or issues, of records with a "type", of comments with a "page_key"), a Twikoo export
// is an array, a {"results": […]} or one document a line, of comments with "_id", "comment" and
// "url", a Disqus export's root element is <disqus>, and a WordPress export (WXR) is an <rss> that
// names the WordPress export namespace. src/modules/portability/engine/importer.ts refuses a file
// whose format is not the one asked for.
import { isPgDump } from "./pg-dump.js";
import type { ImportFormat } from "./source.js";

/** what is read of a file to tell its format */
const HEAD_CHARS = 16 * 1024;

export const FORMAT_NAMES: Record<ImportFormat, string> = {
  disqus: "a Disqus export",
  wordpress: "a WordPress export (WXR)",
  ndjson: "an NDJSON export of this service",
  remark42: "a remark42 backup",
  commento: "a Commento export",
  isso: "an SQLite database (isso's)",
  github: "GitHub's JSON of issue or discussion comments",
  json: "a file of the generic JSON import format",
  artalk: "an Artalk export (Artrans)",
  twikoo: "a Twikoo export",
  cusdis: "an SQLite database (Cusdis's)",
};

/** what a pg_dump is called where the format it was sent as is refused */
export const PG_DUMP_NAME = "a PostgreSQL dump (pg_dump)";

/** What a file of `format` whose start is `head` is called where another format is asked for. */
export const formatNameOf = (format: ImportFormat, head: string) =>
  format === "cusdis" && isPgDump(head) ? PG_DUMP_NAME : FORMAT_NAMES[format];

/** The formats that are SQLite databases. */
export const SQLITE_FORMATS: ReadonlySet<ImportFormat> = new Set(["isso", "cusdis"]);

/** The first bytes of every SQLite database file. */
export const SQLITE_MAGIC = "SQLite format 3\u0000";

/** The format `head` (a file's start) is, or null when it is none of them (or cannot tell yet). */
export function formatOf(head: string): ImportFormat | null {
  if (isPgDump(head)) return "cusdis";
  if (head.startsWith(SQLITE_MAGIC)) {
    // the schema's text: CREATE TABLE statements on the database's first pages
    if (/"by_nickname"/.test(head) && /"pageId"/.test(head)) return "cusdis";
    if (/remove_stale_threads|CREATE TABLE threads\b/i.test(head)) return "isso";
    return null;
  }
  const text = head.replace(/^[\s\uFEFF]+/, "");
  const start = text.slice(0, 4096);
  // the first records' members, wherever a long first comment puts them (a Twikoo comment: _id,
  // comment, url or href; an Artalk one: page_key after its content)
  const twikoo = /"_id"\s*:/.test(text) && /"comment"\s*:/.test(text) && /"(url|href)"\s*:/.test(text);
  if (text.startsWith("{")) {
    if (/^\{\s*"type"\s*:\s*"export"/.test(text)) return "ndjson";
    const firstLine = text.split("\n", 1)[0]!;
    if (/^\{\s*"version"\s*:\s*\d+\s*,\s*"users"\s*:/.test(firstLine)) return "remark42";
    if (/^\{\s*"version"\s*:\s*\d+\s*,\s*"comments"\s*:/.test(text) && /"commentHex"|"commenters"|"comments"\s*:\s*\[\s*\]/.test(text))
      return "commento";
    // a one-line object with "type": our export, its members in another order
    if (/^\{[^\n]*"type"\s*:\s*"export"/.test(firstLine)) return "ndjson";
    // Twikoo's {"results": […]}, or its first document on the first line
    return twikoo && (/^\{\s*"results"\s*:\s*\[/.test(text) || /"_id"\s*:/.test(firstLine)) ? "twikoo" : null;
  }
  if (text.startsWith("[")) {
    const first = /^\[\s*\{\s*"([^"]*)"\s*:\s*("?)([^",}]*)/.exec(text);
    if (!first) return null;
    if (first[1] === "type" && ["discussion", "reader", "comment"].includes(first[3]!)) return "json";
    if (/"(issue_url|discussion_id|author_association|node_id|html_url)"\s*:/.test(start)) return "github";
    if (/"page_key"\s*:/.test(text) && /"(nick|content|rid)"\s*:/.test(text)) return "artalk";
    if (twikoo) return "twikoo";
    return null;
  }
  if (!text.startsWith("<")) return null;
  // the root element: the first tag that is not a declaration, a comment, a doctype or an instruction
  const body = text.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<![A-Za-z][^>]*>/g, "").trimStart();
  const root = /^<([A-Za-z_][\w.:-]*)/.exec(body)?.[1];
  if (root === "disqus") return "disqus";
  if (root === "rss" && /wordpress\.org\/export\//.test(text)) return "wordpress";
  return null;
}

/**
 * The start of `input` as text (`chars` characters, or all of it when shorter), with a stream
 * that yields the whole input again.
 */
export async function peekText(
  input: AsyncIterable<Uint8Array | string>,
  chars: number,
): Promise<{ text: string; stream: AsyncIterable<Uint8Array | string> }> {
  const iterator = input[Symbol.asyncIterator]();
  const head: (Uint8Array | string)[] = [];
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let done = false;
  while (text.length < chars) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head.push(next.value);
    text += typeof next.value === "string" ? next.value : decoder.decode(next.value, { stream: true });
  }
  const stream = (async function* () {
    yield* head;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
  return { text, stream };
}

/**
 * Reads the start of `input` (HEAD_CHARS characters, or all of it when shorter) and answers its
 * format, what such a file is called (formatNameOf), and whether it is an SQLite file (one whose
 * tables do not say which), with a stream that yields the whole input again.
 */
export async function sniffFormat(
  input: AsyncIterable<Uint8Array | string>,
): Promise<{ format: ImportFormat | null; name: string | null; sqlite: boolean; stream: AsyncIterable<Uint8Array | string> }> {
  const { text, stream } = await peekText(input, HEAD_CHARS);
  const format = formatOf(text);
  return { format, name: format && formatNameOf(format, text), sqlite: text.startsWith(SQLITE_MAGIC), stream };
}
