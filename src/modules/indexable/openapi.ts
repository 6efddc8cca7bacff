// The OpenAPI description of the indexable thread (src/modules/indexable/http-routes.ts), added by
// src/modules/openapi-document.ts to the document generated from the REST table.
import { COMMENT_SORTS } from "../comments/list-order.js";
import { THREAD_LANGUAGES } from "./words.js";

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

export const indexablePaths: Record<string, Record<string, unknown>> = {
  "/embed/v1/discussions/{id}.html": {
    get: {
      operationId: "indexableThread",
      description:
        "A discussion's first page of comments (20 top-level comments with their replies, visible ones only) as HTML a page includes " +
        "(with parentId, one comment's replies page): " +
        "one <engagement-thread> element whose light DOM holds them as semantic HTML with microformats2 classes (and the thread " +
        "element's data, so it upgrades without asking again), an <a rel=\"next\"> to the next page's fragment, and a schema.org " +
        "DiscussionForumPosting as JSON-LD beside it. No identity: what every reader sees.",
      security: [{}],
      parameters: [
        { name: "id", in: "path", required: true, description: "The discussion's id.", schema: { type: "string" } },
        {
          name: "key",
          in: "query",
          required: true,
          description: "A publishable key (pk_…): the element names it. A secret key here is refused (400); none is 401.",
          schema: { type: "string", pattern: "^pk_" },
        },
        {
          name: "sort",
          in: "query",
          required: false,
          description: "The order of the top-level comments (default newest).",
          schema: { type: "string", enum: [...COMMENT_SORTS] },
        },
        {
          name: "lang",
          in: "query",
          required: false,
          description: `A language tag for the words and dates (${THREAD_LANGUAGES.join(", ")}; another is English); the element gets it as its lang.`,
          schema: { type: "string" },
        },
        {
          name: "cursor",
          in: "query",
          required: false,
          description: 'A later page: the cursor of the rel="next" link (or of a comment\'s "more replies" link, with its parentId).',
          schema: { type: "string" },
        },
        {
          name: "parentId",
          in: "query",
          required: false,
          description:
            "A comment's replies page: the comment (a visible one of this discussion) with a page of its direct replies, oldest first, " +
            "each with its own replies; with cursor, the page after it. Where a page's replies stop short of a comment's (20 per comment, " +
            "200 per page), the comment links here, so every visible comment is reachable through plain links. No island on it: the " +
            "element there loads its thread as usual.",
          schema: { type: "string" },
        },
        {
          name: "If-None-Match",
          in: "header",
          required: false,
          description: "The ETag of the fragment already held: 304 when it has not changed.",
          schema: { type: "string" },
        },
      ],
      responses: {
        "200": {
          description:
            "The fragment (ETag; Cache-Control: public, max-age=60, stale-while-revalidate=300; Link rel=canonical: the discussion's page when it has one)",
          content: { "text/html": { schema: { type: "string" } } },
        },
        "304": { description: "Not modified (If-None-Match matched the ETag, weakly: W/ is ignored)" },
        "400": problem("A secret key in the URL, a bad sort, lang, cursor or parentId, or a query parameter the route does not take"),
        "401": problem("No key, or an unknown one"),
        "404": problem("No such discussion, or (parentId) no such visible comment in it"),
        "429": problem("Rate limited"),
      },
    },
  },
  "/embed/v1/discussions.html": {
    get: {
      operationId: "indexableThreadOfPage",
      description:
        "The indexable thread of a page: the fragment of the discussion whose url is the page's (compared normalized, as " +
        "GET /api/v1/discussions/lookup compares them), the same bytes as by its id; for a page of one of the site's " +
        "allowedOrigins that has no discussion yet, an empty thread for it (200: a static build including it does not fail) whose " +
        "element names the discussion the page's first comment creates. No identity: what every reader sees.",
      security: [{}],
      parameters: [] as Record<string, unknown>[],
      responses: {
        "200": {
          description:
            "The fragment (ETag; Cache-Control: public, max-age=60, stale-while-revalidate=300; Link rel=canonical: the discussion's page)",
          content: { "text/html": { schema: { type: "string" } } },
        },
        "304": { description: "Not modified (If-None-Match matched the ETag, weakly: W/ is ignored)" },
        "400": problem(
          "A missing or bad url, a secret key in the URL, a bad sort, lang, cursor or parentId, or a query parameter the route does not take",
        ),
        "401": problem("No key, or an unknown one"),
        "404": problem(
          "No discussion has the page, and it is no page of the site's allowedOrigins (or a later page or replies page of a thread that has none)",
        ),
        "429": problem("Rate limited"),
      },
    },
  },
};

// the page's door takes the url where the other has the id, and every other parameter as it does
const byId = indexablePaths["/embed/v1/discussions/{id}.html"]!.get as { parameters: Record<string, unknown>[] };
(indexablePaths["/embed/v1/discussions.html"]!.get as { parameters: Record<string, unknown>[] }).parameters = [
  {
    name: "url",
    in: "query",
    required: true,
    description: "The page's absolute http(s) URL (its canonical address).",
    schema: { type: "string" },
  },
  ...byId.parameters.filter((p) => p.name !== "id"),
];
