// The fediverse's GraphQL side (manage_settings): federateDiscussion (./federate.ts), announceDiscussions
// and federationAnnouncement (./announce.ts), federationStatus (./status.ts).
import { builder } from "../../graphql/builder.js";
import { federateDiscussion, type FederatedDiscussion } from "./federate.js";
import { announceDiscussions, getAnnouncement, type FederationAnnouncement } from "./announce.js";
import { federationStatus, type FederationStatus } from "./status.js";

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
      "Announces an existing discussion with a url to the site's fediverse followers, as a new one is (contract section 24); its later comments go out too. 409 federation_disabled while settings federation is off, 409 federation_unavailable without PUBLIC_URL in production, 409 discussion_without_url without a url.",
    authScopes: { capability: "manage_settings" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => federateDiscussion(ctx, id),
  }),
);

const AnnouncementStateEnum = builder.enumType("FederationAnnouncementState", {
  description: "An announcement job's state: running (queued or working), succeeded, failed.",
  values: ["running", "succeeded", "failed"] as const,
});

const FederationAnnouncementType = builder.objectRef<FederationAnnouncement>("FederationAnnouncement").implement({
  description:
    "A background announcement of every discussion with a url not yet announced to the site's fediverse followers (POST /api/v1/federation/announce).",
  fields: (t) => ({
    id: t.exposeString("id"),
    state: t.field({ type: AnnouncementStateEnum, resolve: (a) => a.state }),
    announced: t.exposeInt("announced", { description: "Discussions whose announcement (Create(Article)) it queued, so far." }),
    alreadyAnnounced: t.exposeInt("alreadyAnnounced", {
      description: "Discussions with a url already announced, or queued to be, when it was asked for: left as they are.",
    }),
    failure: t.exposeString("failure", { nullable: true, description: "Why it failed (state failed), else null." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    finishedAt: t.expose("finishedAt", { type: "DateTime", nullable: true }),
  }),
});

builder.mutationField("announceDiscussions", (t) =>
  t.field({
    type: FederationAnnouncementType,
    description:
      "Announces every discussion with a url not yet announced to the site's fediverse followers, in the background (contract section 28); one runs at a time, and asked again while one runs the answer is that one. 409 federation_disabled while settings federation is off, 409 federation_unavailable without PUBLIC_URL in production.",
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => announceDiscussions(ctx),
  }),
);

builder.queryField("federationAnnouncement", (t) =>
  t.field({
    type: FederationAnnouncementType,
    description: "An announcement job (announceDiscussions): its state and counts. 404 for an id not of this site.",
    authScopes: { capability: "manage_settings" },
    args: {
      id: t.arg.string({
        required: true,
        description: "The announcement's id, as announceDiscussions (POST /federation/announce) answered it.",
      }),
    },
    resolve: (_r, { id }, ctx) => getAnnouncement(ctx, id),
  }),
);

const FederationStatusType = builder.objectRef<FederationStatus>("FederationStatus").implement({
  description: "The site on the fediverse: its address and followers (GET /api/v1/federation).",
  fields: (t) => ({
    enabled: t.exposeBoolean("enabled", { description: "Settings federation.enabled." }),
    served: t.exposeBoolean("served", {
      description: "Whether this deployment serves federation at all: PUBLIC_URL is set, or it is not in production.",
    }),
    address: t.exposeString("address", {
      nullable: true,
      description:
        "@handle@host, the host being settings federation.domain, else PUBLIC_URL's host; null without a handle, or without either (a development server).",
    }),
    followers: t.exposeInt("followers", { description: "The remote actors following the site's actor." }),
  }),
});

builder.queryField("federationStatus", (t) =>
  t.field({
    type: FederationStatusType,
    description: "The site on the fediverse: its address and how many follow it (contract section 28).",
    authScopes: { capability: "manage_settings" },
    resolve: (_r, _a, ctx) => federationStatus(ctx),
  }),
);
