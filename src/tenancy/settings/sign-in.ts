// Hosted sign-in (contract section 20; src/modules/sign-in/): its methods, OpenID Connect or OAuth 2
// providers, guests, and how long a session lasts.
import { z } from "zod";
import { isSingleLine, SINGLE_LINE_RULE } from "../../lib/single-line.js";
import { group, named, sealed, setting } from "./define.js";
import { httpUrl, noRepeats, uniqueIds } from "./rules.js";

/** Hosted sign-in's methods. */
export const SIGN_IN_METHODS = ["email", "oidc", "guest", "passkey"] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

const claim = (description: string) => setting(z.string().min(1).max(100).optional(), { description });

/**
 * An OpenID Connect provider (discovery from `issuer`) or a plain OAuth 2 one (its three endpoints,
 * GitHub's shape) for hosted sign-in. The client secret is write-only: a PATCH's `clientSecret` is
 * sealed into `clientSecretEnc` (src/modules/sign-in/settings.ts) and never answered.
 */
const signInProviderFields = {
  /** the provider's id: the callback's path segment and the readers' id prefix (`<id>:<sub>`) */
  id: setting(
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "must be 1–32 lower-case letters, digits or hyphens, starting with a letter or digit")
      .refine((v) => !["email", "guest"].includes(v), "must not be email or guest (those name the other methods' readers)"),
    {
      description: "The callback's path segment and the readers' id prefix (`<id>:<sub>`).",
      label: "Id",
      help: "Lower-case letters, digits and hyphens; it names the redirect URI and prefixes its readers' ids.",
    },
  ),
  /** the button's text: "Sign in with <label>" */
  label: setting(z.string().min(1).max(60).refine(isSingleLine, SINGLE_LINE_RULE), {
    description: 'The button says "Sign in with <label>".',
    label: "Label",
    help: 'The button says "Sign in with <label>".',
  }),
  issuer: setting(httpUrl().optional(), {
    label: "Issuer",
    help: "OpenID Connect: the endpoints come from its discovery document. Leave empty for plain OAuth 2 and give the three endpoints.",
  }),
  authorizationEndpoint: setting(httpUrl().optional(), { label: "Authorization endpoint" }),
  tokenEndpoint: setting(httpUrl().optional(), { label: "Token endpoint" }),
  userinfoEndpoint: setting(httpUrl().optional(), { label: "Userinfo endpoint" }),
  clientId: setting(z.string().min(1).max(500), { label: "Client id" }),
  /** default: openid email profile with an issuer; none (the provider's default) without one */
  scopes: setting(
    z
      .array(
        z
          .string()
          .min(1)
          .max(100)
          .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be a scope token"),
      )
      .max(20)
      .optional(),
    {
      description: "null: openid email profile (OIDC), the provider's default (OAuth 2).",
      label: "Scopes (space-separated)",
      help: "Empty: openid email profile with an issuer, the provider's default without one.",
    },
  ),
  /** which claim (or userinfo member) holds the reader's id, name, avatar and address; defaults: sub|id, name|login, picture|avatar_url, email */
  claims: named(
    z
      .object({
        id: claim("Default sub (OIDC), id (OAuth 2)."),
        name: claim("Default name, then login."),
        avatarUrl: claim("Default picture, then avatar_url."),
        email: claim("Default email (kept only when verified)."),
      })
      .strict(),
    {
      name: "SignInProviderClaims",
      patchName: "SignInProviderClaimsInput",
      description: "Which claim (or userinfo member) holds the reader's id, name, avatar and address; null: the default.",
    },
  ).optional(),
};

const endpointsComplete = (p: {
  issuer?: string | undefined;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  userinfoEndpoint?: string | undefined;
}) =>
  p.issuer !== undefined || (p.authorizationEndpoint !== undefined && p.tokenEndpoint !== undefined && p.userinfoEndpoint !== undefined);
const ENDPOINTS_RULE = "needs an issuer (OpenID Connect discovery) or all of authorizationEndpoint, tokenEndpoint and userinfoEndpoint";

export const SignInProviderSchema = named(
  z
    .object({ ...signInProviderFields, clientSecretEnc: sealed(z.string()) })
    .strict()
    .refine(endpointsComplete, { message: ENDPOINTS_RULE, path: ["issuer"] }),
  {
    name: "SignInProvider",
    description:
      "An OpenID Connect (issuer: discovery) or plain OAuth 2 (its three endpoints) provider readers sign in with; its client secret is write-only: never answered.",
  },
);

/** A PATCH's provider: `clientSecret` in the clear (required for a new id; absent keeps the stored one). */
export const SignInProviderPatchSchema = named(
  z
    .object({
      ...signInProviderFields,
      clientSecret: setting(z.string().min(1).max(500).optional(), {
        patchDescription: "Write-only: stored encrypted. Required for a new id; left out, the stored one is kept.",
        label: "Client secret",
        help: "Required: stored encrypted and never shown again.",
        storedHelp: "A secret is stored (it is never shown): leave this empty to keep it, or type a new one to replace it.",
      }),
    })
    .strict()
    .refine(endpointsComplete, { message: ENDPOINTS_RULE, path: ["issuer"] }),
  { name: "SignInProviderInput", patchName: "SignInProviderInput" },
);

export const SignInSchema = group(
  {
    name: "SignInSettings",
    description: "Sign-in hosted by the service for sites with no identity provider (contract section 20; docs/sign-in.md).",
  },
  {
    /** the methods the hosted pages offer; none: hosted sign-in is off */
    methods: setting(z.array(z.enum(SIGN_IN_METHODS)).max(4).refine(noRepeats, "must not repeat a method"), {
      default: [],
      description: "email | oidc | guest | passkey; [] (default): hosted sign-in is off.",
      patchDescription: "The whole list: email | oidc | guest | passkey.",
      label: "Methods",
      options: {
        email: { label: "Email link", help: "A one-time link sent to the reader's address (through your tenant's email settings)." },
        oidc: {
          label: "Sign in with a provider (OpenID Connect / OAuth 2)",
          help: "A button for each provider below, such as GitHub, Google or your own OpenID Connect server.",
        },
        guest: {
          label: "Guests",
          help: "A name (and an address if you ask for one) behind a proof-of-work check instead of a captcha.",
        },
        passkey: {
          label: "Passkeys",
          help: "A reader signed in by any method may add a passkey, then sign in with it from the browser's autofill, without waiting for an email.",
        },
      },
    }),
    oidc: setting(z.array(SignInProviderSchema).max(5).refine(uniqueIds, "must not repeat a provider id"), {
      default: [],
      description: "At most 5.",
      label: "Providers",
      patch: setting(z.array(SignInProviderPatchSchema).max(5).refine(uniqueIds, "must not repeat a provider id"), {
        patchDescription: "The whole list (at most 5); [] removes them all.",
      }),
    }),
    guest: group(
      { name: "SignInGuestSettings" },
      {
        /** a guest must give an address (for reply emails once a link confirms it) */
        requireEmail: setting(z.boolean(), {
          default: false,
          description: "A guest must give an address (default false).",
          label: "Guests must give an email address",
        }),
        /** pre: guests' comments are held (pending); post: published as others' are */
        moderation: setting(z.enum(["pre", "post"]), {
          default: "pre",
          description: "pre (default): guests' comments are held; post: published as others' are.",
          // the console's checkbox: ticked is pre
          label: "Hold guests' comments for review",
          help: "Held comments wait in the moderation queue until approved; unticked, guests' comments follow the tenant's moderation setting.",
        }),
      },
    ),
    /** how long a session token lasts */
    sessionDays: setting(z.number().int().min(1).max(365), {
      default: 30,
      description: "How long a reader session lasts (default 30, 1–365).",
      patchDescription: "1–365.",
      label: "Session length (days)",
      help: "How long a reader stays signed in, 1 to 365 days. Signing out ends a session at once; so does a ban.",
    }),
  },
);

export type SignInSettings = z.infer<typeof SignInSchema>;
export type SignInProvider = z.infer<typeof SignInProviderSchema>;

export const signInSettings = { signIn: SignInSchema };
