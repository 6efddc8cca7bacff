// The OpenAPI description of POST /webmention (src/modules/webmention/http-routes.ts), added by
// src/modules/openapi-document.ts to the document generated from the REST table.
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

export const webmentionPaths = {
  "/webmention": {
    post: {
      operationId: "receiveWebmention",
      summary:
        "Receive a webmention (W3C Webmention): another page links to a discussion's page; verified later, it becomes a comment of kind mention",
      tags: ["fediverse"],
      security: [],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              properties: {
                source: { type: "string", format: "uri", maxLength: 2048, description: "The page that links to the target" },
                target: { type: "string", format: "uri", maxLength: 2048, description: "A discussion's url, on a site with federation on" },
              },
              required: ["source", "target"],
            },
          },
        },
      },
      responses: {
        "202": {
          description: "Queued: the source is fetched and checked later",
          content: { "text/plain": { schema: { type: "string" } } },
        },
        "400": problem(
          "source or target missing or not an http(s) URL, or the same page (`invalid_parameter`); the target no discussion's url (`webmention_target_unsupported`); the source's domain blocked (`webmention_source_blocked`)",
        ),
        "404": problem("The target is the page of a site that does not federate (`not_found`)"),
        "415": problem("Another body type than a form (`unsupported_media_type`)"),
        "429": problem(
          "Too many webmentions from the client address, or every site the target reaches has taken all the source domain's mentions it may in 10 minutes (`rate_limited`, with Retry-After)",
        ),
      },
    },
  },
};
