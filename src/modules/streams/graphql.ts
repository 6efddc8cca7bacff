// Stream tickets over GraphQL (REST: POST /api/v1/stream/ticket runs this mutation).
import { builder } from "../../graphql/builder.js";
import { mintStreamTicket, type MintedTicket } from "./ticket-minting.js";

const StreamTicketType = builder.objectRef<MintedTicket>("StreamTicket").implement({
  description: "A single-use ticket for GET /api/v1/stream/{discussionId}?ticket=… (or the subscription's `ticket`), valid 60 s.",
  fields: (t) => ({
    ticket: t.exposeString("ticket"),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
  }),
});

builder.mutationField("createStreamTicket", (t) =>
  t.field({
    type: StreamTicketType,
    description: "Mints a stream ticket bound to the tenant, the discussion and, with X-Service-Identity, the reader.",
    authScopes: { browser: true },
    args: { discussionId: t.arg.string({ required: true }) },
    resolve: (_r, { discussionId }, ctx) => mintStreamTicket(ctx, discussionId),
  }),
);
