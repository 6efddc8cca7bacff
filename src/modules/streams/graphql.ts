// Stream tickets over GraphQL (REST: POST /api/v1/stream/ticket runs this mutation).
import { builder } from "../../graphql/builder.js";
import { mintStreamTicket, type MintedTicket } from "./ticket-minting.js";

const StreamTicketType = builder.objectRef<MintedTicket>("StreamTicket").implement({
  description:
    "A single-use ticket for GET /api/v1/stream/{discussionId}?ticket=… (or GET /api/v1/stream/me?ticket=… for scope me; or the " +
    "subscriptions' `ticket`), valid 60 s.",
  fields: (t) => ({
    ticket: t.exposeString("ticket"),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
  }),
});

builder.mutationField("createStreamTicket", (t) =>
  t.field({
    type: StreamTicketType,
    description:
      "Mints a stream ticket bound to the tenant, the discussion and, with X-Service-Identity, the reader; or, with " +
      '`scope: "me"` (instead of discussionId) and X-Service-Identity, to the reader\'s own stream (GET /api/v1/stream/me, myInbox).',
    authScopes: { browser: true },
    args: {
      discussionId: t.arg.string({ required: false }),
      scope: t.arg.string({
        required: false,
        description: '"me": the reader\'s own stream (needs X-Service-Identity). Not with discussionId.',
      }),
    },
    resolve: (_r, args, ctx) => mintStreamTicket(ctx, args),
  }),
);
