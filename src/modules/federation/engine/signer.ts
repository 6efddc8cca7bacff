// Who sent an inbound activity (contract section 24; docs/fediverse.md "Safety"): the Fastify mount
// (../http-routes.ts) verifies every inbound activity's HTTP signature here, over the bytes that came,
// before Fedify reads the activity — Fedify is built with skipSignatureVerification (federation.ts) so
// that it never verifies anything itself. What this refuses:
//   - a Linked Data signature (the activity's `signature` member) is never verified: it is taken off
//     the activity (`withoutLdSignature`) before Fedify sees it. Verifying one canonicalizes a graph
//     the sender chose (URDNA2015), which costs seconds of CPU for a few blank nodes; the HTTP
//     signature is required anyway, so the Linked Data one adds nothing.
//   - an HTTP signature that does not verify (Fedify's verifyRequest, within an hour: RFC 9421 HTTP
//     Message Signatures with a Content-Digest of the body as it came when the request has a
//     Signature-Input, else draft-cavage with a Digest of it), by a key that is not its actor's
//     (Fedify's doesActorOwnKey), or by a key on another origin than its actor's;
//   - an activity whose id is on another origin than its actor's (it would take the id of another
//     server's activity, which Fedify then drops as already processed), and a Create or Update whose
//     object's id is (it would take the id of another server's Note, whose own Create we would then
//     drop as delivered before).
import { doesActorOwnKey, verifyRequest, type DocumentLoader, type KeyCache, type KvStore } from "@fedify/fedify";
import { Activity, Create, CryptographicKey, Update } from "@fedify/vocab";

/** How far a signature's Date may be from now (Fedify's own default for its inbox). */
const SIGNATURE_TIME_WINDOW = { hours: 1 } as const;

/**
 * An inbound activity whose HTTP signature verified: the key that signed it, and what is wrong with
 * the activity (null: nothing; the key is then its actor's, on its actor's origin).
 */
export interface Signer {
  keyId: URL;
  problem: "notAnActivity" | "foreignId" | null;
}

/** Where Fedify's own inbox keeps the keys it fetched (its kvPrefixes.publicKey), and erasure finds them. */
const KEY_PREFIX = ["_fedify", "publicKey"] as const;

/**
 * The fetched keys, kept in the federation's KvStore as Fedify's inbox keeps them (a key that fails
 * to verify is fetched again once by verifyRequest, so a rotated key is picked up).
 */
function kvKeyCache(kv: KvStore, loader: DocumentLoader): KeyCache {
  const options = { documentLoader: loader, contextLoader: loader };
  return {
    async get(keyId) {
      const stored = await kv.get([...KEY_PREFIX, keyId.href]);
      if (stored == null) return undefined;
      try {
        return await CryptographicKey.fromJsonLd(stored, options);
      } catch {
        await kv.delete([...KEY_PREFIX, keyId.href]);
        return undefined;
      }
    },
    async set(keyId, key) {
      if (key == null) await kv.delete([...KEY_PREFIX, keyId.href]);
      else await kv.set([...KEY_PREFIX, keyId.href], await key.toJsonLd(options));
    },
  };
}

/** Whether two URLs share scheme, host and port. */
export const sameOrigin = (a: URL, b: URL): boolean => a.origin === b.origin && a.origin !== "null";

/** The activity without its `signature` member (a Linked Data signature), or null when it has none. */
export function withoutLdSignature(activity: Record<string, unknown>): Record<string, unknown> | null {
  if (!Object.hasOwn(activity, "signature")) return null;
  const rest = { ...activity };
  delete rest.signature;
  return rest;
}

/**
 * Who signed `request` (the activity as it came: its body the bytes that were signed), whose activity
 * without its Linked Data signature is `activity`; null when its signature does not verify, or its key
 * is not its actor's or not on its actor's origin (a forgery).
 */
export async function verifySigner(
  request: Request,
  activity: Record<string, unknown>,
  deps: { loader: DocumentLoader; kv: KvStore },
): Promise<Signer | null> {
  const options = { documentLoader: deps.loader, contextLoader: deps.loader };
  const keyCache = kvKeyCache(deps.kv, deps.loader);
  const key = await verifyRequest(request, { ...options, keyCache, timeWindow: SIGNATURE_TIME_WINDOW }).catch(() => null);
  if (!key?.id) return null;
  let parsed: Activity;
  try {
    parsed = await Activity.fromJsonLd(activity, options);
  } catch {
    return { keyId: key.id, problem: "notAnActivity" };
  }
  const actorId = parsed.actorId;
  if (!actorId || !sameOrigin(key.id, actorId)) return null;
  if (!(await doesActorOwnKey(parsed, key, options).catch(() => false))) return null;
  const ids = parsed instanceof Create || parsed instanceof Update ? [parsed.id, ...parsed.objectIds] : [parsed.id];
  if (ids.some((id) => id && !sameOrigin(id, actorId))) return { keyId: key.id, problem: "foreignId" };
  return { keyId: key.id, problem: null };
}
