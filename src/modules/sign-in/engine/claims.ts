// A provider's claims (or userinfo answer) as the hosted sign-in's reader (contract section 20): the
// id, name, avatar and, from an OpenID provider that says it is verified, the address.
import type { SessionSubject } from "../../../auth/reader-sessions.js";
import { plausibleAddress } from "../../../auth/identity.js";
import { errors } from "../../../lib/errors.js";
import { isHttpUrl } from "../../../lib/http-url.js";
import { providerReaderId } from "../../../auth/reader-ids.js";
import { CONTROL_CHARS as CONTROL, READER_NAME_MAX } from "../../../lib/reader-name.js";
import type { SignInProvider } from "../../../tenancy/settings/sign-in.js";

/** Reader ids are at most 255 characters (contract section 3), `<providerId>:` included. */
const MAX_READER_ID = 255;

/** The claim (or userinfo member) named, as a string: numbers (GitHub's ids) in decimal. */
function claimString(claims: Record<string, unknown>, name: string): string | null {
  const v = claims[name];
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
  return null;
}

const firstOf = (claims: Record<string, unknown>, names: string[]): string | null => {
  for (const name of names) {
    const v = claimString(claims, name);
    if (v !== null && v.trim() !== "") return v;
  }
  return null;
};

/**
 * The reader of the claims: `<providerId>:<sub or id>` (a subject that is an address made opaque with
 * the tenant's reader id key, src/auth/reader-ids.ts), name (name | login), avatar (picture |
 * avatar_url, http(s) only), and for OpenID Connect the address when `email_verified` is true (a
 * plain OAuth 2 provider's address is not known to be verified: none). `provider.claims` renames any.
 */
export function subjectOf(provider: SignInProvider, claims: Record<string, unknown>, readerIdKey: Buffer): SessionSubject {
  const names = provider.claims ?? {};
  const rawId = firstOf(claims, names.id ? [names.id] : ["sub", "id"]);
  if (rawId === null || CONTROL.test(rawId)) throw errors.signInRefused(`${provider.label} did not say who the reader is (no usable id).`);
  const id = providerReaderId(readerIdKey, provider.id, rawId);
  if (id.length > MAX_READER_ID) throw errors.signInRefused(`${provider.label}'s id for the reader is longer than a reader id may be.`);
  const rawName = firstOf(claims, names.name ? [names.name] : ["name", "login"]);
  const name = rawName !== null && !CONTROL.test(rawName) ? rawName.trim().slice(0, READER_NAME_MAX) : rawId.slice(0, READER_NAME_MAX);
  const picture = claims[names.avatarUrl ?? (claims.picture !== undefined ? "picture" : "avatar_url")];
  const email = claims[names.email ?? "email"];
  const verified = provider.issuer !== undefined /* OpenID Connect */ && claims.email_verified === true && plausibleAddress(email);
  return {
    id,
    name,
    avatarUrl: isHttpUrl(picture) ? picture : null,
    email: verified ? (email as string) : null,
    method: "oidc",
    provider: provider.id,
  };
}
