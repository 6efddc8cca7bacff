// GraphQL of body formatting: `preview` renders a body as a comment would show it (any key,
// publishable included; REST: POST /api/v1/preview runs it).
import { builder } from "../../graphql/builder.js";
import { previewBody, type BodyPreview } from "./preview.js";

const PreviewType = builder.objectRef<BodyPreview>("Preview").implement({
  description: "A body rendered as a comment with it would show (nothing is stored).",
  fields: (t) => ({
    bodyHtml: t.exposeString("bodyHtml", {
      description: "The sanitized HTML of the body (Markdown or plain text as the tenant's formatting settings say).",
    }),
    links: t.exposeInt("links", { description: "How many links the rendering shows (what safety.maxLinks counts)." }),
  }),
});

builder.queryField("preview", (t) =>
  t.field({
    type: PreviewType,
    description: "Renders a body as a comment would show it; the same length limit and problems as a post. Any key, publishable included.",
    authScopes: { browser: true },
    args: { body: t.arg.string({ required: true, description: "1..maxBodyLength characters (setting, default 10,000)." }) },
    resolve: (_r, { body }, ctx) => previewBody(ctx, body),
  }),
);
