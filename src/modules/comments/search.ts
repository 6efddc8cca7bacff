// Comment search for moderators (contract section 21): GET /api/v1/comments/search and the GraphQL
// field searchComments (moderate_content, declared by the field). Matching comments of the tenant,
// newest first, keyset-paginated on (createdAt, id), each with its moderation context
// (moderation-context.ts). One statement per page, two when the words are rare (searchComments).
//
// Words: PostgreSQL full-text search over each comment's search document (comment_search.vector:
// eng_search_vector(body), to_tsvector('simple', eng_unaccent(body)); GIN index
// comment_search_vector_idx): lower-cased, accents removed, no stemming and no stop words. The
// documents are a projection of the event log, written off the write path by the search projector
// (engine/search-projector.ts): a comment is found by its words once the projector has passed its
// event, and a request carrying X-Service-Consistency waits for that first (search-consistency.ts).
// Filters are read from the comments themselves, which are walked by their documents (a comment has
// one from its first event until it is deleted) but for the statuses of the moderation queue's index
// (pending, rejected, deleted): a post writes no index of the tenant's comments by time. `q` is parsed here into terms; user text only ever reaches
// the database as a bound parameter of phraseto_tsquery('simple', eng_unaccent($n)), which reads it
// with the same parser the documents were made with and never interprets operators. The terms are
// joined in SQL with the tsquery operators:
//   word      all words must match (&&)
//   word*     a prefix: the last lexeme of the term's query gets :* (on PostgreSQL's own text of it)
//   "a b c"   a phrase: the words next to each other, in order (phraseto_tsquery's <->)
//   -word     excluded (!!); also -"a phrase" and -prefix*
// A query of exclusions only is refused (it would read every comment of the tenant).
import { sha256 } from "../../lib/sha256.js";
import { type RequestContext, store } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "./comment-row.js";
import { CONTEXT_COLUMNS, CONTEXT_JOINS, contextOf, type CommentInContext, type ContextSqlRow } from "./moderation-context.js";
import type { CommentWithAuthor } from "./dto.js";
import { untilProjected } from "./search-consistency.js";

/** The longest `q` taken, in characters. */
export const Q_MAX_CHARS = 200;
/** The most terms (words, phrases, exclusions) one `q` may hold. */
export const Q_MAX_TERMS = 12;
/** The longest readerId filter (reader ids are the `sub` of an identity assertion). */
const READER_ID_MAX = 256;

export const SEARCH_STATUSES = ["approved", "pending", "rejected", "deleted"] as const;
export type SearchStatus = (typeof SEARCH_STATUSES)[number];

/** One term of `q`. */
export interface SearchTerm {
  /** the words as typed (a phrase's inside, without quotes; a prefix without its `*`) */
  text: string;
  prefix: boolean;
  exclude: boolean;
}

/** Something to search for in a term: a letter or a digit. */
const HAS_WORD = /[\p{L}\p{N}]/u;

/**
 * `q` as terms, or the problems with it (path `q`). Whitespace separates terms; `"…"` is one term
 * (an unclosed quote runs to the end); a leading `-` excludes the term; trailing `*` makes a word a
 * prefix. Terms without a letter or digit (`*`, `--`, `""`) are ignored.
 */
export function parseSearchQuery(q: string): { terms: SearchTerm[]; problems: FieldError[] } {
  const problems: FieldError[] = [];
  if (q.length > Q_MAX_CHARS) problems.push({ path: "q", message: `must be at most ${Q_MAX_CHARS} characters` });
  const terms: SearchTerm[] = [];
  const s = q.normalize("NFC");
  let i = 0;
  while (i < s.length) {
    if (/\s/u.test(s[i]!)) {
      i++;
      continue;
    }
    let exclude = false;
    if (s[i] === "-" && i + 1 < s.length && !/\s/u.test(s[i + 1]!)) {
      exclude = true;
      i++;
    }
    let text: string;
    let prefix = false;
    if (s[i] === '"') {
      const end = s.indexOf('"', i + 1);
      text = s.slice(i + 1, end === -1 ? s.length : end);
      i = end === -1 ? s.length : end + 1;
    } else {
      let end = i;
      while (end < s.length && !/\s/u.test(s[end]!)) end++;
      text = s.slice(i, end);
      i = end;
      const stripped = text.replace(/\*+$/u, "");
      prefix = stripped.length < text.length;
      text = stripped;
    }
    if (HAS_WORD.test(text)) terms.push({ text, prefix, exclude });
  }
  if (terms.length > Q_MAX_TERMS) problems.push({ path: "q", message: `may hold at most ${Q_MAX_TERMS} words, phrases and exclusions` });
  if (q.trim() && !terms.some((t) => !t.exclude)) {
    problems.push({ path: "q", message: "needs at least one word or phrase to look for (not only -excluded ones)" });
  }
  return { terms, problems };
}

export interface SearchArgs extends PageArgs {
  q?: string | null | undefined;
  status?: SearchStatus | null | undefined;
  discussionId?: string | null | undefined;
  readerId?: string | null | undefined;
  hasLinks?: boolean | null | undefined;
  reported?: boolean | null | undefined;
  /** ISO 8601: comments created at or after */
  from?: string | null | undefined;
  /** ISO 8601: comments created before */
  to?: string | null | undefined;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

function parseTime(value: string | null | undefined, path: string, problems: FieldError[]): Date | null {
  if (value === null || value === undefined || value === "") return null;
  const at = ISO_8601.test(value) ? new Date(value) : null;
  if (!at || Number.isNaN(at.getTime())) {
    problems.push({ path, message: "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-25T10:00:00Z" });
    return null;
  }
  return at;
}

/** How many documents of the range the first read walks before the GIN index is asked instead. */
const SEARCH_WALK = 5_000;

/**
 * The newest SEARCH_WALK documents of the range (`where`, on `s`), in order: an index of comment_search
 * read in order (the tenant's, a discussion's or a reader's, each newest first), every document with
 * its words in the row.
 */
const walked = (where: string[]) => `SELECT s.* FROM comment_search s WHERE ${where.join(" AND ")}
     ORDER BY s.created_at DESC, s.comment_id DESC LIMIT ${SEARCH_WALK}`;

/** The SQL of one term's tsquery, its text bound as `param`. */
function termSql(term: SearchTerm, param: string): string {
  const words = `phraseto_tsquery('simple', eng_unaccent(${param}))`;
  const query = term.prefix ? `regexp_replace(${words}::text, '''$', ''':*')::tsquery` : words;
  return term.exclude ? `(!! ${query})` : query;
}

/**
 * Matching comments, newest first (createdAt, then id). Default status: every one but deleted
 * (a deleted comment's body is empty). `reported`: whether the comment has an open report (any
 * number: the reported queue's reportThreshold does not apply). `hasLinks`: whether its rendered
 * body shows a link. A cursor is good only for the same q and filters.
 */
export async function searchComments(ctx: RequestContext, args: SearchArgs): Promise<Page<CommentInContext>> {
  const problems: FieldError[] = [];
  const { terms, problems: qProblems } = parseSearchQuery(args.q ?? "");
  problems.push(...qProblems);
  if (args.status && !(SEARCH_STATUSES as readonly string[]).includes(args.status)) {
    problems.push({ path: "status", message: `must be one of ${SEARCH_STATUSES.join(", ")}` });
  }
  if (args.discussionId && !DISCUSSION_ID_RE.test(args.discussionId)) problems.push({ path: "discussionId", message: DISCUSSION_ID_RULE });
  if (args.readerId && args.readerId.length > READER_ID_MAX) {
    problems.push({ path: "readerId", message: `must be at most ${READER_ID_MAX} characters` });
  }
  const from = parseTime(args.from, "from", problems);
  const to = parseTime(args.to, "to", problems);
  if (from && to && from.getTime() >= to.getTime()) problems.push({ path: "from", message: "must be before 'to'" });
  if (problems.length) throw errors.validation(problems);
  const limit = checkLimit(args.limit);

  const filters = {
    terms,
    status: args.status ?? null,
    discussionId: args.discussionId || null,
    readerId: args.readerId || null,
    hasLinks: args.hasLinks ?? null,
    reported: args.reported ?? null,
    from: from?.getTime() ?? null,
    to: to?.getTime() ?? null,
  };
  const tag = `search:${sha256(JSON.stringify(filters), "base64url").slice(0, 12)}`;
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;

  const values: unknown[] = [];
  const bind = (v: unknown) => {
    values.push(v);
    return `$${values.length + 1}`; // $1 is the tenant
  };
  // where the comments are walked from, newest first: the discussion's, the reader's or the tenant's
  // (each an index in that order), from the cursor on, within from/to; said of a comment (`c`) and of
  // its document (`s`, which has the same discussion, author and creation time)
  const ranges: ((of: "c" | "s") => string)[] = [];
  const on = (sql: (of: "c" | "s", id: string) => string) => ranges.push((of) => sql(of, of === "c" ? "c.id" : "s.comment_id"));
  if (filters.discussionId) {
    const d = bind(filters.discussionId);
    on((of) => `${of}.discussion_id = ${d}`);
  }
  if (filters.readerId) {
    const r = bind(filters.readerId);
    on((of) => `${of}.author_id = ${r}`);
  }
  if (from) {
    const f = bind(from);
    on((of) => `${of}.created_at >= ${f}`);
  }
  if (to) {
    const t = bind(to);
    on((of) => `${of}.created_at < ${t}`);
  }
  if (after) {
    const [at, id] = [bind(after[0]), bind(after[1])];
    on((of, ofId) => `(${of}.created_at, ${ofId}) < (${at}, ${id})`);
  }
  const range = ranges.map((r) => r("c"));
  const docRange = ["s.tenant_id = $1", ...ranges.map((r) => r("s"))];
  // the words, as one tsquery over the comment's document
  const words = terms.length ? `(${terms.map((t) => termSql(t, bind(t.text))).join(" && ")})` : null;
  // what each comment of the range must be besides its words
  const match: string[] = [];
  // the status as a literal of the checked list, not a parameter: a parameter cast to the enum is not a
  // constant when the statement is planned (enum_in is STABLE), and comments_queue_idx, partial on the
  // status, is then never chosen (a search by status=deleted read the tenant's every comment)
  match.push(filters.status ? `c.status = '${SEARCH_STATUSES.find((x) => x === filters.status)!}'` : "c.status <> 'deleted'");
  // literals, not parameters: `s.has_links` is what the partial index comment_search_links_idx covers
  // (the walk of the documents), `c.has_links` what the comment shows now
  if (filters.hasLinks !== null) match.push(filters.hasLinks ? "c.has_links" : "NOT c.has_links");
  if (filters.reported !== null) {
    match.push(
      `${filters.reported ? "" : "NOT "}EXISTS (SELECT 1 FROM comment_reports cr WHERE cr.tenant_id = $1 AND cr.comment_id = c.id AND cr.status = 'open')`,
    );
  }
  const take = bind(limit + 1);
  const page = (source: string, where: string[]) => `SELECT ${COMMENT_COLUMNS}, ${CONTEXT_COLUMNS} FROM ${source} c
      JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
      ${CONTEXT_JOINS}
     ${where.length ? `WHERE ${where.join("\n       AND ")}` : ""}
     ORDER BY c.created_at DESC, c.id DESC LIMIT ${take}`;
  const inRange = ["c.tenant_id = $1", ...range];
  // the statuses without a document (deleted) or held by few comments (pending, rejected: the queue's)
  // are walked on comments_queue_idx, which holds those three; every other search on the documents
  const byQueue = words === null && filters.status !== null && filters.status !== "approved";
  if (ctx.readsItsWrites && !byQueue) await untilProjected(ctx);
  let rows: (CommentSqlRow & ContextSqlRow)[];
  if (byQueue) {
    // filters alone, on a status of the queue's index: its comments walked newest first until a page matches
    rows = await store(ctx).sql.query(page("comments", [...inRange, ...match]), values);
  } else {
    // Words, or filters alone: first the newest WALK documents of the range (an index read in order:
    // the tenant's, a discussion's or a reader's index of comment_search, each newest first; with
    // links, the tenant's documents that show one, comment_search_links_idx), each document's words in
    // its row, each match then joined to its comment for the filters. That holds the page whenever
    // the words (or the filters) are common there; a page short of them means they are rare here, and
    // then every match is read: the words' through the GIN index (comment_search_vector_idx), sorted;
    // the filters' by walking the whole range. The planner cannot tell the two apart (a word's
    // frequency is estimated from the documents' most common words, and a joined comment's tenant test
    // as if it were independent of its document's): one plan for both walks the whole tenant for a
    // word no comment has, or starts a parallel worker for a page of the newest comments (5 ms, where
    // the bounded walk takes 0.5). comments has no index of the tenant's comments by time: a post
    // writes none. (c.tenant_id = $1 again beside a subquery's rows and outside: what ties the joined
    // rows to the tenant for the tenant guard)
    const onDocs = [...docRange, ...(filters.hasLinks ? ["s.has_links"] : [])];
    const matched = [...(words === null ? [] : [`s.vector @@ ${words}`]), ...match];
    // the matching comments of these documents (`docs`, named s; `where`: what else s must be), newest first
    const joined = (
      docs: string,
      where: string[],
    ) => `(SELECT c.* FROM ${docs} s JOIN comments c ON c.tenant_id = s.tenant_id AND c.id = s.comment_id
       WHERE c.tenant_id = $1 AND ${[...where, ...matched].join(" AND ")}
       ORDER BY s.created_at DESC, s.comment_id DESC LIMIT ${take})`;
    rows = await store(ctx).sql.query(page(joined(`(${walked(onDocs)})`, []), ["c.tenant_id = $1"]), values);
    if (rows.length <= limit) {
      rows = await store(ctx).sql.query(
        words === null
          ? page(joined("comment_search", onDocs), ["c.tenant_id = $1"])
          : `WITH m AS MATERIALIZED (SELECT c.* FROM comment_search s JOIN comments c ON c.tenant_id = s.tenant_id AND c.id = s.comment_id
                                  WHERE ${[...onDocs, ...matched].join(" AND ")})
         ${page("m", ["c.tenant_id = $1"])}`,
        values,
      );
    }
  }
  const comments = rows.map((r): CommentInContext => ({ ...rowToComment(r), moderation: contextOf(r) }));
  return toPage(comments, limit, (c: CommentWithAuthor) => timeIdCursor(c.createdAt, c.id, tag));
}
