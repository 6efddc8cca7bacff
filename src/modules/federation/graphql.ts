// The fediverse's GraphQL side: federateDiscussion (manage_settings), ./federate.ts.
import { builder } from "../../graphql/builder.js";
import { federateDiscussion, type FederatedDiscussion } from "./federate.js";

const FederatedDiscussionType = builder.objectRef<FederatedDiscussion>("FederatedDiscussion").implement({
  description: "A discussion queued to be announced to the site's fediverse followers (Create(Article)).",
  fields: (t) => ({
    discussionId: t.exposeString("discussionId"),
    articleId: t.exposeString("articleId", { description: "The discussion's ActivityPub Article id (on PUBLIC_URL)." }),
    followers: t.exposeInt("followers", { description: "Followers the announcement goes to, counted now." }),
  }),
});

builder.mutationField("federateDiscussion", (t) =>
  t.field({
    type: FederatedDiscussionType,
    description:
      "Announces an existing discussion with a url to the site's fediverse followers, as a new one is (contract section 24); its later comments go out too. 409 federation_disabled while settings federation is off, 409 discussion_without_url without a url.",
    authScopes: { capability: "manage_settings" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => federateDiscussion(ctx, id),
  }),
);
