// The fediverse (contract section 24; docs/fediverse.md): ActivityPub and Webmention on or off, the
// site actor's handle, how remote comments are moderated, and the domains they are refused from.
import { z } from "zod";
import { DOMAIN_NAME_RULE, normalizeDomain } from "../../lib/domain-name.js";
import { named, setting } from "./define.js";
import { httpUrl, noRepeats } from "./rules.js";
import { ACTOR_ICON_RULE, actorIconOf } from "../../lib/actor-icon.js";

/** A tenant's fediverse handle: its actor's preferredUsername, unique on the server (tenants.federation_handle). */
export const FEDERATION_HANDLE_PATTERN = /^[a-z0-9_]{1,30}$/;
/** How remote comments (ActivityPub replies, webmentions) are moderated: pre holds them (pending), post publishes them as local ones are. */
export const REMOTE_MODERATION = ["pre", "post"] as const;
export type RemoteModeration = (typeof REMOTE_MODERATION)[number];
/** The most domains `federation.blockedDomains` holds. */
export const MAX_BLOCKED_DOMAINS = 1000;

/** A blocked domain, normalised by the URL parser (src/lib/domain-name.ts): stored lower-case and in punycode. */
const blockedDomain = z
  .string()
  .max(300)
  .transform((v, ctx) => {
    const d = normalizeDomain(v);
    if (d === null) {
      ctx.addIssue({ code: "custom", message: DOMAIN_NAME_RULE });
      return z.NEVER;
    }
    return d;
  });

/** The most characters of `federation.summary`. */
export const MAX_ACTOR_SUMMARY = 500;

/** The site's own domain for the handle (`@handle@blog.example`): a bare domain name, normalised as a blocked domain is. */
const handleDomain = z
  .string()
  .max(300)
  .transform((v, ctx) => {
    const d = normalizeDomain(v);
    if (d === null || !d.includes(".")) {
      ctx.addIssue({ code: "custom", message: "must be a domain name such as blog.example (no scheme, port, path or spaces)" });
      return z.NEVER;
    }
    return d;
  });

/** The actor's icon: an https image URL, kept as the URL parser prints it (src/lib/actor-icon.ts). */
const actorIcon = z
  .string()
  .max(2048)
  .transform((v, ctx) => {
    const icon = actorIconOf(v);
    if (icon === null) {
      ctx.addIssue({ code: "custom", message: ACTOR_ICON_RULE });
      return z.NEVER;
    }
    return icon.href;
  });

/** On needs a handle: checked on the whole settings, not on a PATCH alone (which may set both). */
export const FederationSchema = named(
  z
    .object({
      /** ActivityPub and Webmention are served for the tenant (otherwise their routes answer 404) */
      enabled: setting(z.boolean(), {
        default: false,
        description: "ActivityPub and Webmention are served for this site (default false: their routes answer 404). Needs a handle.",
        label: "Federate this site (ActivityPub and Webmention)",
      }),
      handle: setting(z.string().regex(FEDERATION_HANDLE_PATTERN, "must be 1–30 chars of a-z, 0-9, _").nullable(), {
        default: null,
        description: "The site's actor's handle (@handle@<PUBLIC_URL host>): 1–30 of a-z, 0-9, _, unique on the server (409 handle_taken).",
        patchDescription: "1–30 of a-z, 0-9, _; null: none (federation must then be off).",
        label: "Handle",
        help: "The account's name: 1 to 30 of a–z, 0–9 and _, unique on this service. Needed to federate.",
      }),
      remoteModeration: setting(z.enum(REMOTE_MODERATION), {
        default: "pre",
        enumType: { name: "Moderation" },
        description:
          "Comments from the fediverse and webmentions: pre (default) holds them as pending; post publishes them as local ones are.",
        label: "Remote moderation",
        help: "Replies from the fediverse and webmentions.",
        options: { pre: { label: "Hold each for approval" }, post: { label: "Publish at once, as local comments" } },
      }),
      /** remote comments from these domains (and their subdomains) are refused and hidden */
      blockedDomains: setting(z.array(blockedDomain).max(MAX_BLOCKED_DOMAINS).refine(noRepeats, "must not repeat a domain"), {
        default: [],
        description:
          "Domains (and their subdomains) whose remote comments are refused and hidden, lower-case and in punycode (at most 1,000).",
        patchDescription: "The whole list (at most 1,000); each a domain name such as mastodon.social.",
        label: "Blocked domains (one per line)",
        help: "Replies from these domains and their subdomains are refused and hidden, such as spam.example.",
      }),
      url: setting(
        httpUrl()
          .transform((v) => new URL(v).href)
          .nullable(),
        {
          default: null,
          description:
            "The site the actor stands for (its `url`; where a browser asking for the actor is sent): an http(s) URL; null (default): the first of allowedOrigins.",
          patchDescription: "An http(s) URL of at most 2,048 characters; null: the first of allowedOrigins.",
          label: "Site address",
          help: "Where the account's profile links, and where a browser opening it is sent. Empty: the first allowed origin.",
        },
      ),
      icon: setting(actorIcon.nullable(), {
        default: null,
        description: "The actor's avatar (its `icon`): an https URL of an image, without credentials or fragment; null (default): none.",
        patchDescription: "An https URL of at most 2,048 characters, without credentials or fragment; null: none.",
        label: "Icon",
        help: "The https address of an image, shown as the account's avatar. Empty: none.",
      }),
      summary: setting(z.string().trim().min(1, "must not be empty").max(MAX_ACTOR_SUMMARY).nullable(), {
        default: null,
        description: `The actor's profile text (its \`summary\`, plain text, at most ${MAX_ACTOR_SUMMARY} characters); null (default): a sentence naming the site.`,
        label: "Profile text",
        help: `Plain text, at most ${MAX_ACTOR_SUMMARY} characters. Empty: a sentence naming the site.`,
      }),
      domain: setting(handleDomain.nullable(), {
        default: null,
        description:
          "The site's own domain for the handle (@handle@domain), whose /.well-known/webfinger redirects to the service; null (default): the handle is on PUBLIC_URL's host.",
        patchDescription: "A domain name such as blog.example (no scheme, port or path); null: the handle on PUBLIC_URL's host.",
        label: "Domain",
        help: "Your site's own domain for the address, such as blog.example: your site then redirects /.well-known/webfinger here. Empty: this service's host.",
      }),
    })
    .strict()
    .refine((f) => !f.enabled || f.handle !== null, { message: "must be set to turn federation on", path: ["handle"] }),
  { name: "FederationSettings", description: "The fediverse: ActivityPub and Webmention (contract section 24; docs/fediverse.md)." },
);

export type FederationSettings = z.infer<typeof FederationSchema>;

export const federationSettings = {
  /** the fediverse: ActivityPub and Webmention (contract section 24) */
  federation: FederationSchema,
};
