// Readers signed in at the tenant's own identity providers (contract section 13;
// src/auth/identity-providers.ts), and the identity secret's overlap after a rotation.
import { z } from "zod";
import { group, named, setting } from "./define.js";
import { outboundUrl } from "./rules.js";

/** how long a provider's token may live unless the provider's `maxTokenLifetimeSeconds` says otherwise */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 86_400;

/** the asymmetric algorithms an identity provider may sign with: never `none`, never HS* (a public key is no HMAC secret) */
export const PROVIDER_ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"] as const;

/** a claim name of a provider's token (`name`, `nickname`, `https://example.com/name`) */
const claimName = z.string().min(1).max(200);

/**
 * One of the tenant's identity providers: named by its `issuer` (OIDC discovery finds its key set) or
 * by its `jwksUri` (then any issuer those keys sign for), with the audience its tokens must carry, the
 * algorithms it may sign with and which claims hold the reader's name, picture and email.
 */
export const IdentityProviderSchema = named(
  z
    .object({
      issuer: setting(outboundUrl("issuer").optional(), {
        description: "OIDC issuer: its discovery document names the key set.",
        label: "Issuer",
        help: "OpenID Connect: its discovery document names the key set.",
      }),
      jwksUri: setting(outboundUrl("http").optional(), {
        description: "The key set's URL, when there is no discovery.",
        label: "Key set URL (jwksUri)",
        help: "Only when the provider has no discovery; with it, any issuer its keys sign for is accepted unless Issuer is given too.",
      }),
      /** one audience or several (any of them); kept as a list */
      audience: setting(
        z
          .union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).min(1).max(10)])
          .transform((a) => (Array.isArray(a) ? a : [a])),
        {
          description: "The `aud` a token must carry (any one of these).",
          label: "Audience (one per line)",
          help: "A token's aud must be one of these: your client_id for ID tokens, your API's audience for access tokens.",
        },
      ),
      algorithms: setting(
        z
          .array(z.enum(PROVIDER_ALGORITHMS))
          .min(1)
          .refine((a) => new Set(a).size === a.length, "must not repeat an algorithm")
          .default([...PROVIDER_ALGORITHMS]),
        { description: "RS256, PS256, ES256, EdDSA (default all four).", label: "Algorithms" },
      ),
      claims: named(
        z
          .object({
            name: setting(claimName.default("name"), { label: "Name claim", help: "the reader's display name" }),
            picture: setting(claimName.default("picture"), { label: "Picture claim", help: "their avatar URL" }),
            email: setting(claimName.default("email"), { label: "Email claim", help: "their email" }),
          })
          .strict(),
        {
          name: "IdentityProviderClaims",
          patchName: "IdentityProviderClaimsInput",
          description: "Which claims of a provider's token hold the reader's name, picture (avatarUrl) and email.",
        },
      ).default({ name: "name", picture: "picture", email: "email" }),
      /** how long a token may live (`exp − iat`, or `exp − now` without `iat`); absent: 24 h (DEFAULT_TOKEN_LIFETIME_SECONDS) */
      maxTokenLifetimeSeconds: setting(z.number().int().min(60).max(2_592_000).optional(), {
        description: "How long a token may live (`exp − iat`, or `exp − now` without `iat`), 60–2592000; null: 86400 (24 h).",
        patchDescription: "60–2592000; left out: 86400 (24 h).",
      }),
    })
    .strict()
    .refine((p) => p.issuer !== undefined || p.jwksUri !== undefined, "must name an issuer (OIDC discovery) or a jwksUri"),
  {
    name: "IdentityProvider",
    patchName: "IdentityProviderInput",
    description:
      "One of the tenant's identity providers (contract section 13): its tokens are accepted in X-Service-Identity; readers are `<iss>#<sub>` (a provider named by its key set alone: `<jwksUri>#<sub>`).",
  },
);

/** Readers signed in at the tenant's own identity providers (contract section 13). */
export type IdentityProviderSettings = z.infer<typeof IdentityProviderSchema>;

export const IdentitySchema = group(
  { name: "IdentitySettings" },
  {
    providers: setting(
      z
        .array(IdentityProviderSchema)
        .max(5)
        .refine((a) => new Set(a.map((p) => p.issuer ?? p.jwksUri)).size === a.length, "must not name the same provider twice"),
      {
        default: [],
        description: "At most 5.",
        patchDescription: "The whole list (at most 5); [] removes them all.",
        label: "Providers",
      },
    ),
    /** after a rotation of the identity secret, how long the one before still verifies; 0: not at all */
    secretOverlapHours: setting(z.number().int().min(0).max(720), {
      default: 24,
      description: "After a rotation of the identity secret, how long the one before still verifies (default 24, 0–720).",
      label: "Secret overlap (hours)",
      help: "After a rotation (Settings › General), the secret before keeps verifying this long. 0 to 720; 0: it stops at once.",
    }),
  },
);

export const identitySettings = { identity: IdentitySchema };
