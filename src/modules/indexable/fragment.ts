// An indexable thread (contract section 23) as the service answers it and the CLI prints it: the
// request's parameters checked (each bad one a 400 naming it), the page read (snapshot.ts) as a reader
// with no identity reads it, and the element, its island and its structured data written (markup.ts).
// One function for both doors (src/modules/indexable/http-routes.ts, `engagement render`), so they
// print the same bytes for the same arguments.
import type { RequestContext } from "../../context/request.js";
import { AppError, errors, type FieldError } from "../../lib/errors.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { COMMENT_SORTS, type CommentSort } from "../comments/read.js";
import { threadIsland } from "./island.js";
import { fragmentHtml } from "./markup.js";
import { readThreadSnapshot } from "./snapshot.js";
import { pageUrlOf } from "./structured-data.js";
import { fragmentWords, threadLanguageOf } from "./words.js";

export interface FragmentRequest {
  discussionId: string;
  /** as asked (null: not given: newest first, the element's default) */
  sort: string | null;
  /** a language tag (null: not given: English, and the element follows the page's language) */
  lang: string | null;
  cursor: string | null;
  /** a comment whose replies the page shows (its replies page: the links where a page's replies stop lead there); null: the top-level list */
  parentId: string | null;
  /** the publishable key the element names; null: the one on the script tag (data-publishable-key) */
  key: string | null;
  /** the service's origin, for the element's api-base and the next page's link */
  apiBase: string;
}

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/;
/** what a comment id can be (`cmt_…`, an import's own ids): anything else is no comment's */
const COMMENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The parameters' problems, all of them (400 invalid_parameter). */
function checkRequest(r: FragmentRequest): FieldError[] {
  const problems: FieldError[] = [];
  if (!DISCUSSION_ID_RE.test(r.discussionId)) problems.push({ path: "discussionId", message: DISCUSSION_ID_RULE });
  if (r.sort !== null && !(COMMENT_SORTS as readonly string[]).includes(r.sort))
    problems.push({ path: "sort", message: `must be one of ${COMMENT_SORTS.join(", ")}` });
  if (r.lang !== null && !LANGUAGE_TAG.test(r.lang)) problems.push({ path: "lang", message: "must be a language tag such as en or de-AT" });
  if (r.cursor !== null && (r.cursor === "" || r.cursor.length > 1000))
    problems.push({ path: "cursor", message: "is not a cursor this list issued" });
  if (r.parentId !== null && !COMMENT_ID.test(r.parentId)) problems.push({ path: "parentId", message: "must be a comment's id" });
  return problems;
}

/**
 * The fragment's HTML, and the discussion's page (http(s), else null) its comments belong to. An
 * unknown discussion is a 404; a cursor of another list a 400.
 */
export async function renderFragment(ctx: RequestContext, r: FragmentRequest): Promise<{ html: string; pageUrl: string | null }> {
  const problems = checkRequest(r);
  if (problems.length) throw errors.invalidParameter(problems);
  const sort = (r.sort ?? "newest") as CommentSort;
  let snapshot;
  try {
    snapshot = await readThreadSnapshot(ctx, r.discussionId, { sort, cursor: r.cursor, parentId: r.parentId });
  } catch (err) {
    // the list's refusal of a cursor it did not issue is about a query parameter here
    if (err instanceof AppError && err.code === "validation_failed" && err.fieldErrors?.every((e) => e.path === "cursor"))
      throw errors.invalidParameter(err.fieldErrors);
    throw err;
  }
  const language = threadLanguageOf(r.lang);
  // a replies page is for links (crawlers, readers without JavaScript): the element on it loads its thread as usual
  const island = snapshot.parentId === null ? threadIsland(ctx, snapshot) : null;
  const html = fragmentHtml(snapshot, island, {
    key: r.key,
    apiBase: r.apiBase.replace(/\/+$/, ""),
    sort: r.sort,
    lang: r.lang,
    words: fragmentWords(language),
    locale: language,
  });
  return { html, pageUrl: pageUrlOf(snapshot.discussion.url) };
}
