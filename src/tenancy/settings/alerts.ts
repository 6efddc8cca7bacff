// Chat alerts to the moderators' Slack or Discord (contract section 21; src/modules/alerts/): at most 5.
import { z } from "zod";
import { named, sealed, setting } from "./define.js";
import { noRepeats, outboundUrl, uniqueIds } from "./rules.js";

/** Where a chat alert goes: a Slack or a Discord incoming webhook. */
export const ALERT_KINDS = ["slack", "discord"] as const;
/** When an alert is sent: a new comment held (by the hook: hook_hold; else pending), a comment reaching reportThreshold. */
export const ALERT_TRIGGERS = ["pending", "reported", "hook_hold"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type AlertTrigger = (typeof ALERT_TRIGGERS)[number];

const alertId = setting(z.string().regex(/^alr_[A-Za-z0-9_-]{1,40}$/, "must be the id of one of the site's alerts (alr_…)"), {
  description: "Given when the alert is first set; a patch names an alert by it to keep its URL.",
  patchDescription: "An existing alert's id: left out, a new alert.",
});
const alertFields = {
  kind: setting(z.enum(ALERT_KINDS), {
    enumType: { name: "AlertKind", description: "Where a chat alert goes: a Slack or a Discord incoming webhook." },
    label: "Chat",
    help: "The message is written in this chat's format.",
    options: { slack: { label: "Slack" }, discord: { label: "Discord" } },
  }),
  on: setting(z.array(z.enum(ALERT_TRIGGERS)).min(1).max(ALERT_TRIGGERS.length).refine(noRepeats, "must not repeat a trigger"), {
    enumType: {
      name: "AlertTrigger",
      description:
        "When an alert is sent: pending (a new comment held, but not by the hook), hook_hold (a new comment the moderation hook held), reported (a comment's open reports reaching safety.reportThreshold).",
    },
    patchDescription: "pending | reported | hook_hold (at least one)",
    label: "Send when",
    options: {
      pending: { label: "A new comment is held for review" },
      hook_hold: { label: "The moderation hook holds a new comment" },
      reported: { label: "Readers report a comment (at the report threshold)" },
    },
  }),
};

/** A stored alert: its URL sealed with the app's SecretBox (the URL is its secret), never answered. */
export const AlertSchema = named(z.object({ id: alertId, ...alertFields, urlEnc: sealed(z.string()) }).strict(), {
  name: "AlertSettings",
  description: "A chat alert (contract section 21; docs/safety.md): its URL is write-only, answered masked.",
  computed: {
    url: {
      type: "String",
      description: "The incoming webhook's scheme and host, the rest masked (`https://hooks.slack.com/…`): the URL is the alert's secret.",
    },
  },
});

/** A PATCH's alert: `url` in the clear (required for a new alert; left out, the one stored under `id` is kept). */
export const AlertPatchSchema = named(
  z
    .object({
      id: alertId.optional(),
      ...alertFields,
      url: setting(outboundUrl("http").optional(), {
        patchDescription:
          "The incoming webhook URL (https), stored encrypted and never answered. Required for a new alert; left out (or as read, masked) the stored one is kept.",
        label: "Incoming webhook URL",
        help: "The channel's incoming webhook (https), stored encrypted and never shown again.",
        storedHelp: "Saved, shown masked: {shown}. Leave empty to keep it; type a new URL to replace it.",
      }),
    })
    .strict(),
  { name: "AlertInput", patchName: "AlertInput" },
);

export type AlertSettings = z.infer<typeof AlertSchema>;

export const alertsSettings = {
  alerts: setting(z.array(AlertSchema).max(5).refine(uniqueIds, "must not repeat an alert id"), {
    default: [],
    description: "Chat alerts to the moderators' Slack or Discord (at most 5; docs/safety.md).",
    /** the whole list; an alert without `url` keeps the one stored under its `id` */
    patch: setting(
      z
        .array(AlertPatchSchema)
        .max(5)
        .refine((a) => uniqueIds(a.filter((x): x is typeof x & { id: string } => x.id !== undefined)), "must not repeat an alert id"),
      { patchDescription: "The whole list (at most 5); [] removes them all. An alert named by its id without url keeps its URL." },
    ),
  }),
};
