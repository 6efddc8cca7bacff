// An indexable thread (contract section 23) as the service answers it and the CLI prints it: the
// request's parameters checked (each bad one a 400 naming it), the page read (snapshot.ts) as a reader
// with no identity reads it, and the element, its island and its structured data written (markup.ts).
// One function for both doors (src/modules/indexable/http-routes.ts, `engagement render`), so they
// print the same bytes for the same arguments.
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { HTTP_URL_RULE, isHttpUrl } from "../../lib/http-url.js";
import { discussionIdForKey, urlKey } from "../discussions/url-key.js";
import { getSettings } from "../settings/settings.js";
import { AppError, errors, type FieldError } from "../../lib/errors.js";
import { DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { COMMENT_SORTS, type CommentSort } from "../comments/list-order.js";
import { threadIsland } from "./island.js";
import { fragmentHtml } from "./markup.js";
import { readThreadSnapshot, type ThreadSnapshot } from "./snapshot.js";
import { pageUrlOf } from "./structured-data.js";
import { fragmentWords, threadLanguageOf } from "./words.js";

export interface FragmentRequest {
  /** the discussion; null: the discussion of `url` (contract section 27) */
  discussionId: string | null;
  /** a page's address, when the discussion is named by it instead (an absolute http(s) URL) */
  url?: string | null | undefined;
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
  if (r.discussionId !== null && !DISCUSSION_ID_RE.test(r.discussionId))
    problems.push({ path: "discussionId", message: DISCUSSION_ID_RULE });
  if (r.discussionId === null && !(typeof r.url === "string" && isHttpUrl(r.url) && urlKey(r.url) !== null))
    problems.push({ path: "url", message: `${HTTP_URL_RULE}, absolute: the page whose thread it is` });
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
 * unknown discussion is a 404; a cursor of another list a 400. Asked by url: the discussion of that
 * page, else, for a page of one of the tenant's allowedOrigins, an empty thread for it (its first
 * comment creates the discussion, named as the thread element names it: discussionIdForKey); else 404.
 */
export async function renderFragment(ctx: RequestContext, r: FragmentRequest): Promise<{ html: string; pageUrl: string | null }> {
  const problems = checkRequest(r);
  if (problems.length) throw errors.invalidParameter(problems);
  const sort = (r.sort ?? "newest") as CommentSort;
  let snapshot;
  try {
    snapshot =
      r.discussionId !== null
        ? await readThreadSnapshot(ctx, r.discussionId, { sort, cursor: r.cursor, parentId: r.parentId })
        : await snapshotOfPage(ctx, r.url!, { sort, cursor: r.cursor, parentId: r.parentId });
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

/** The thread of the discussion whose url is the page's; a page of an allowed origin without one: an empty thread, unsaved. */
async function snapshotOfPage(
  ctx: RequestContext,
  url: string,
  args: { sort: CommentSort; cursor: string | null; parentId: string | null },
): Promise<ThreadSnapshot> {
  const key = urlKey(url)!;
  // the page's discussion: the one with its url, else the one its first comment made from another
  // address of it (a canonical link of another origin, say) under the id the element names it with
  const found =
    (await db(ctx).discussion.findFirst({ where: { urlKey: key }, select: { id: true } })) ??
    (await db(ctx).discussion.findFirst({ where: { id: discussionIdForKey(key) }, select: { id: true } }));
  if (found) return readThreadSnapshot(ctx, found.id, args);
  const settings = await getSettings(ctx);
  // a page of another site, or a later page of a thread that has no comments: nothing to show
  if (!settings.allowedOrigins.includes(new URL(url).origin) || args.cursor !== null || args.parentId !== null)
    throw errors.notFound("Discussion");
  const at = new Date(0);
  const discussion: Discussion = {
    tenantId: tenantIdOf(ctx),
    id: discussionIdForKey(key),
    title: null,
    url,
    urlKey: key,
    state: "open",
    seq: 0,
    commentCount: 0,
    reactionCounts: {},
    createdAt: at,
    updatedAt: at,
  };
  return {
    discussion,
    settings,
    sort: args.sort,
    cursor: null,
    parentId: null,
    top: [],
    topEnd: { hasNextPage: false, endCursor: null },
    unsaved: true,
    blueskyUrl: null,
  };
}
