// The OpenAPI description of the unsubscribe link (src/modules/email/http-routes.ts), added by
// src/app.ts to the document generated from the REST table.
const token = {
  name: "token",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The signed token from the email's List-Unsubscribe header",
};
const html = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});
const invalid = problem("Not an unsubscribe link this service made (nothing changes)");

export const unsubscribePaths = {
  "/api/v1/unsubscribe/{token}": {
    get: {
      operationId: "unsubscribePage",
      summary: "A page whose button unsubscribes (what a person who clicks the link sees)",
      tags: ["email"],
      security: [],
      parameters: [token],
      responses: { "200": html("The page"), "400": invalid },
    },
    post: {
      operationId: "unsubscribe",
      summary: "One-click unsubscribe (RFC 8058): the reader's reply emails are turned off",
      tags: ["email"],
      security: [],
      parameters: [token],
      requestBody: {
        required: true,
        description: "Exactly `List-Unsubscribe=One-Click`, as RFC 8058 mail clients and the page's button send it",
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              properties: { "List-Unsubscribe": { type: "string", enum: ["One-Click"] } },
              required: ["List-Unsubscribe"],
              additionalProperties: false,
            },
          },
        },
      },
      responses: {
        "200": html("Unsubscribed"),
        "400": problem(
          "Not an unsubscribe link this service made (`invalid_parameter`), or any other body (`one_click_required`): nothing changes",
        ),
      },
    },
  },
};
