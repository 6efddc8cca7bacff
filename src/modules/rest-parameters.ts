// What each path and query parameter of the REST route table means, for the OpenAPI document
// (src/http/rest/openapi.ts), where the GraphQL argument the parameter feeds has no description of
// its own (an argument's description wins, so a parameter is described once). Path parameters are
// named by the segment before them (`/comments/{id}` → "comments"); query parameters by their name,
// or by `METHOD /path name` where one name means something else on one route.
import { MAX_COUNT_IDS } from "./discussions/discussions.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../lib/pagination.js";

const PATH_PARAMETERS: Record<string, string> = {
  discussions: "The discussion's id: your own (an article's slug, a page's id), as the discussion was created with.",
  comments: "The comment's id (cmt_…).",
  keys: "The API key's id (key_…).",
  "publishable-keys": "The publishable key's id (pkey_…).",
  alerts: "The chat alert's position in the settings' `alerts` list, from 0.",
  webhooks: "The webhook endpoint's id (wh_…).",
  readers: "The reader's id: the identity assertion's `sub`, or the id the service gave a reader it signed in.",
  providers: "The sign-in provider's id, as the settings' `signIn.providers` list it.",
  stream: "The discussion's id.",
  passkeys: "The passkey's id (pk_…), as GET /api/v1/me/passkeys lists it.",
};

const QUERY_PARAMETERS: Record<string, string> = {
  limit: `Items per page, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
  cursor:
    "The previous page's `nextCursor`, for the page after it; absent for the first page. A cursor is good only for the list (and sort, status and filters) that issued it.",
  ids: `Comma-separated discussion ids (at most ${MAX_COUNT_IDS}); an unknown id counts 0.`,
  parentId: "Only the replies to this comment (its id).",
  discussionId: "Only this discussion.",
  interval: "The buckets' width.",
  actor: "Only entries by this actor: an operator's email, an API key's id or an admin token's `sub`.",
  action: "Only this action (`comment.delete`), or the actions under a prefix ending in `.` (`comment.`).",
};

const ROUTE_QUERY_PARAMETERS: Record<string, string> = {
  "GET /discussions/:id/comments status":
    "approved (default: the visible comments, with the tombstones of deleted ones that still have visible replies); pending or rejected lists those instead (moderate_content).",
  "GET /discussions/:id/comments sort": "The order of the thread's comments (default newest).",
  "GET /comments status": "The moderation queue to list (default pending).",
  "GET /comments sort": "The queue's order (default oldest).",
  "GET /comments/search status": "Only comments in this state.",
  "GET /reports status": "Only reports in this state (default open).",
};

/** The description of a REST route's parameter, when the table has one. */
export function describeRestParameter(method: string, path: string, where: "path" | "query", name: string): string | undefined {
  if (where === "path") {
    const segments = path.split("/");
    const at = segments.indexOf(`:${name}`);
    return at > 0 ? PATH_PARAMETERS[segments[at - 1]!] : undefined;
  }
  return ROUTE_QUERY_PARAMETERS[`${method} ${path} ${name}`] ?? QUERY_PARAMETERS[name];
}
