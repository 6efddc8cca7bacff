// Bluesky (contract section 30; docs/bluesky.md): the site's account (handle and app password, the
// password write-only and sealed), where it signs in and where replies are read, how replies are
// moderated, and whether new discussions are posted there.
import { z } from "zod";
import { group, sealed, setting } from "./define.js";
import { REMOTE_MODERATION } from "./federation.js";
import { parseOutboundUrl } from "../../lib/outbound-url.js";
import { isHttpUrl } from "../../lib/http-url.js";

/** A handle as the AT Protocol writes one: a domain name of two labels at least (alice.bsky.social). */
export const BLUESKY_HANDLE_PATTERN = /^(?=.{3,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const BLUESKY_ORIGIN_RULE =
  "must be an http(s) origin such as https://bsky.social (scheme, host and optional port; no path or query)";

/** An XRPC service's address: scheme, host and port alone (its routes are `/xrpc/…` under it), kept without the trailing slash. */
const xrpcOrigin = () =>
  z
    .string()
    .max(2048)
    .refine((v) => {
      const parsed = parseOutboundUrl(v, "http");
      return parsed.ok && isHttpUrl(v) && parsed.target.path === "/";
    }, BLUESKY_ORIGIN_RULE)
    .transform((v) => new URL(v).origin);

const appPasswordPatch = setting(z.string().min(1).max(200).nullable(), {
  patchDescription:
    "Write-only: an app password of the account (Settings › Privacy and security › App passwords), stored encrypted, never answered; null removes it.",
  label: "App password",
  help: "An app password of the site's account (never its main password): stored encrypted, never shown again.",
  storedHelp: "A password is stored; it is never shown. Leave this empty to keep it, or type a new one to replace it.",
});

export const BlueskySchema = group(
  {
    name: "BlueskySettings",
    description: "Bluesky: a discussion linked to a post there, its replies brought in as comments (contract section 30; docs/bluesky.md).",
    patchOnly: { appPassword: appPasswordPatch },
    computed: {
      appPasswordSet: { type: "Boolean", description: "Whether an app password is stored (it is never answered)." },
    },
  },
  {
    enabled: setting(z.boolean(), {
      default: false,
      description: "Replies of linked posts are read, and discussions may be posted from the site's account (default false).",
      label: "Bring in replies from Bluesky",
    }),
    handle: setting(z.string().toLowerCase().regex(BLUESKY_HANDLE_PATTERN, "must be a handle such as blog.bsky.social").nullable(), {
      default: null,
      description:
        "The site's account (its handle, such as blog.bsky.social): what posts discussions; null: none (linking by URI still works).",
      patchDescription: "A handle such as blog.bsky.social; null: none.",
      label: "Handle",
      help: "The site's Bluesky account, such as blog.bsky.social. Needed to post discussions from the site.",
    }),
    service: setting(xrpcOrigin(), {
      default: "https://bsky.social",
      description: "The account's PDS, where it signs in and posts (default https://bsky.social).",
      label: "Account's server",
      help: "Where the account signs in and posts: https://bsky.social unless it is hosted elsewhere.",
    }),
    appView: setting(xrpcOrigin(), {
      default: "https://public.api.bsky.app",
      description: "The AppView replies are read from (app.bsky.feed.getPostThread; default https://public.api.bsky.app).",
      label: "AppView",
      help: "Where replies are read from: https://public.api.bsky.app unless you run your own.",
    }),
    remoteModeration: setting(z.enum(REMOTE_MODERATION), {
      default: "pre",
      enumType: { name: "Moderation" },
      description: "Replies from Bluesky: pre (default) holds them as pending; post publishes them as local ones are.",
      label: "Moderation of replies",
      options: { pre: { label: "Hold each for approval" }, post: { label: "Publish at once, as local comments" } },
    }),
    autoPost: setting(z.boolean(), {
      default: false,
      description:
        "Every new discussion with a url is posted from the site's account and linked (default false). Needs a handle and app password.",
      label: "Post each new discussion",
      help: "Each new discussion with a page is posted from the site's account, and its replies come back here.",
    }),
    /** the app password sealed with the app's SecretBox: set by a PATCH's `appPassword`, never answered */
    appPasswordEnc: sealed(z.string().optional()),
  },
);

export type BlueskySettings = z.infer<typeof BlueskySchema>;

export const blueskySettings = {
  /** Bluesky (contract section 30) */
  bluesky: BlueskySchema,
};
