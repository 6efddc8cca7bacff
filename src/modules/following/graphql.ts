// GraphQL of following a discussion (contract section 19): `mySubscription(discussionId)` and
// `setMySubscription(discussionId, input: {mode})` for the reader of X-Service-Identity (any key,
// publishable included; REST: GET and PUT /api/v1/discussions/{id}/subscription run them).
import { builder } from "../../graphql/builder.js";
import { FOLLOW_MODES, getMySubscription, setMySubscription, type DiscussionSubscription } from "./following.js";

const FollowModeEnum = builder.enumType("FollowMode", {
  description:
    "`all`: every new visible comment by someone else becomes a new_comment inbox item; `replies` (default): only replies; `off`: not even replies.",
  values: FOLLOW_MODES,
});

const DiscussionSubscriptionType = builder.objectRef<DiscussionSubscription>("DiscussionSubscription").implement({
  description: "How the reader of X-Service-Identity follows a discussion.",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    mode: t.expose("mode", { type: FollowModeEnum }),
  }),
});

const DiscussionSubscriptionInput = builder.inputType("DiscussionSubscriptionInput", {
  fields: (t) => ({ mode: t.string({ description: "all | replies | off" }) }),
});

builder.queryField("mySubscription", (t) =>
  t.field({
    type: DiscussionSubscriptionType,
    description: "How the reader of X-Service-Identity follows a discussion (`replies` when never set). Any key, publishable included.",
    authScopes: { browser: true },
    args: { discussionId: t.arg.string({ required: true }) },
    resolve: (_r, { discussionId }, ctx) => getMySubscription(ctx, discussionId),
  }),
);

builder.mutationField("setMySubscription", (t) =>
  t.field({
    type: DiscussionSubscriptionType,
    description: "The reader of X-Service-Identity follows a discussion (`all`), hears only of replies (`replies`) or silences it (`off`).",
    authScopes: { browser: true },
    args: { discussionId: t.arg.string({ required: true }), input: t.arg({ type: DiscussionSubscriptionInput, required: true }) },
    resolve: (_r, { discussionId, input }, ctx) => setMySubscription(ctx, discussionId, input),
  }),
);
