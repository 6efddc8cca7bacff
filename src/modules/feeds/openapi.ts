// The OpenAPI description of the feeds (src/modules/feeds/http-routes.ts), added by
// src/modules/openapi-document.ts to the document generated from the REST table.
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

const KEY = {
  name: "key",
  in: "query",
  required: false,
  description: "A publishable key (pk_…), for feed readers that cannot send a header; other keys go in X-API-Key.",
  schema: { type: "string", pattern: "^pk_" },
};

const feed = (operationId: string, description: string, more: unknown[] = []) => ({
  get: {
    operationId,
    description,
    security: [{ apiKey: [] }, {}],
    parameters: [
      ...more,
      KEY,
      {
        name: "If-None-Match",
        in: "header",
        required: false,
        description: "The ETag of the feed already held: 304 when it has not changed.",
        schema: { type: "string" },
      },
    ],
    responses: {
      "200": {
        description:
          "Atom 1.0: the latest 50 visible comments, each entry its permalink with bodyHtml as html content (ETag; Cache-Control: public, max-age=60)",
        content: { "application/atom+xml": { schema: { type: "string" } } },
      },
      "304": { description: "Not modified (If-None-Match matched the ETag, weakly: W/ is ignored)" },
      "400": problem("A key in the URL that is not a publishable key"),
      "401": problem("No key, or an unknown one"),
      "404": problem("No such discussion"),
      "429": problem("Rate limited"),
    },
  },
});

export const feedPaths: Record<string, Record<string, unknown>> = {
  "/api/v1/feeds/recent.atom": feed("recentCommentsFeed", "The tenant's latest visible comments as an Atom feed."),
  "/api/v1/feeds/discussions/{id}.atom": feed("discussionFeed", "A discussion's latest visible comments as an Atom feed.", [
    { name: "id", in: "path", required: true, description: "The discussion's id.", schema: { type: "string" } },
  ]),
};
