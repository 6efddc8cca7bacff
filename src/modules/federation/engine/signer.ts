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
 * The keys this process verified with lately, parsed, and the actors each was found to belong to:
 * under a burst of one server's deliveries the inbox neither reads a key's row nor parses it, nor
 * fetches its actor again, for every activity. Short-lived (KEY_MEMORY_MS), so a key rotated or an
 * actor erased on another instance of the deployment is not trusted here for long.
 */
export interface KeyMemory {
  key(keyId: string): CryptographicKey | undefined;
  remember(keyId: string, key: CryptographicKey | null): void;
  /** whether `actorId` was found to own the key lately */
  owns(keyId: string, actorId: string): boolean;
  owned(keyId: string, actorId: string): void;
}

/** How long a key (and who owns it) is kept in memory. */
export const KEY_MEMORY_MS = 60_000;
const KEY_MEMORY_MAX = 10_000;

export function createKeyMemory(now: () => number = Date.now, ttlMs = KEY_MEMORY_MS): KeyMemory {
  const entries = new Map<string, { key: CryptographicKey; until: number; owners: Set<string> }>();
  const live = (keyId: string) => {
    const e = entries.get(keyId);
    if (e && e.until <= now()) entries.delete(keyId);
    return e && e.until > now() ? e : undefined;
  };
  return {
    key: (keyId) => live(keyId)?.key,
    remember(keyId, key) {
      entries.delete(keyId);
      if (key === null) return;
      if (entries.size >= KEY_MEMORY_MAX) entries.delete(entries.keys().next().value as string);
      entries.set(keyId, { key, until: now() + ttlMs, owners: new Set() });
    },
    owns: (keyId, actorId) => live(keyId)?.owners.has(actorId) ?? false,
    owned(keyId, actorId) {
      live(keyId)?.owners.add(actorId);
    },
  };
}

/**
 * The fetched keys, kept in the federation's KvStore as Fedify's inbox keeps them (a key that fails
 * to verify is fetched again once by verifyRequest, so a rotated key is picked up), and in the
 * process's memory in front of it.
 */
function kvKeyCache(kv: KvStore, loader: DocumentLoader, memory: KeyMemory): KeyCache {
  const options = { documentLoader: loader, contextLoader: loader };
  return {
    async get(keyId) {
      const known = memory.key(keyId.href);
      if (known) return known;
      const stored = await kv.get([...KEY_PREFIX, keyId.href]);
      if (stored == null) return undefined;
      try {
        const key = await CryptographicKey.fromJsonLd(stored, options);
        memory.remember(keyId.href, key);
        return key;
      } catch {
        await kv.delete([...KEY_PREFIX, keyId.href]);
        return undefined;
      }
    },
    async set(keyId, key) {
      memory.remember(keyId.href, key instanceof CryptographicKey ? key : null);
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
  deps: { loader: DocumentLoader; kv: KvStore; keyMemory: KeyMemory },
): Promise<Signer | null> {
  const options = { documentLoader: deps.loader, contextLoader: deps.loader };
  const keyCache = kvKeyCache(deps.kv, deps.loader, deps.keyMemory);
  const key = await verifyRequest(request, { ...options, keyCache, timeWindow: SIGNATURE_TIME_WINDOW }).catch(() => null);
  if (!key?.id) return null;
  let read = plainActivity(activity);
  if (!read) {
    try {
      const parsed = await Activity.fromJsonLd(activity, options);
      read = {
        activity: parsed,
        id: parsed.id,
        actorId: parsed.actorId,
        objectIds: parsed instanceof Create || parsed instanceof Update ? parsed.objectIds : [],
      };
    } catch {
      return { keyId: key.id, problem: "notAnActivity" };
    }
  }
  const actorId = read.actorId;
  if (!actorId || !sameOrigin(key.id, actorId)) return null;
  if (!deps.keyMemory.owns(key.id.href, actorId.href)) {
    const parsed = read.activity ?? new Activity({ id: read.id, actor: actorId });
    if (!(await doesActorOwnKey(parsed, key, options).catch(() => false))) return null;
    deps.keyMemory.owned(key.id.href, actorId.href);
  }
  if ([read.id, ...read.objectIds].some((id) => id && !sameOrigin(id, actorId))) return { keyId: key.id, problem: "foreignId" };
  return { keyId: key.id, problem: null };
}

/** What the signature check reads of an activity: its id, its actor's, and a Create's or Update's objects' ids. */
export interface ReadActivity {
  /** the parsed activity, when it was read the long way */
  activity: Activity | null;
  id: URL | null;
  actorId: URL | null;
  objectIds: URL[];
}

/** The contexts under which an activity's compact form says what it seems to (none redefines a term read here). */
const PLAIN_CONTEXTS = new Set([
  "https://www.w3.org/ns/activitystreams",
  "https://w3id.org/security/v1",
  "https://w3id.org/security/data-integrity/v1",
  "https://w3id.org/security/multikey/v1",
]);
/** An inline context defining one of these is read the long way (JSON-LD). */
const TERMS_READ = new Set(["id", "type", "actor", "object", "@id", "@type", "@vocab", "@base", "@import", "@propagate", "@protected"]);
/** ActivityStreams' activity types (and the two intransitive ones). */
const ACTIVITY_TYPES = new Set(
  "Accept Add Announce Arrive Block Create Delete Dislike Flag Follow Ignore Invite Join Leave Like Listen Move Offer Question Read Reject Remove TentativeAccept TentativeReject Travel Undo Update View".split(
    " ",
  ),
);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const httpUrl = (v: unknown): URL | undefined => {
  if (typeof v !== "string" || !URL.canParse(v)) return undefined;
  const u = new URL(v);
  return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
};

/**
 * An activity read as the compact JSON it came as, without JSON-LD (whose expansion is most of what
 * an inbox POST costs): only when its contexts are ActivityStreams' and the security vocabularies',
 * plus inline term definitions that touch none of the terms read, its type one of ActivityStreams'
 * activities, and its id, actor and objects plain http(s) URLs or objects with one. Anything else
 * is null, and read the long way (Fedify's Activity.fromJsonLd), to the same result.
 */
export function plainActivity(a: Record<string, unknown>): ReadActivity | null {
  const contexts = Array.isArray(a["@context"]) ? (a["@context"] as unknown[]) : [a["@context"]];
  if (!contexts.includes("https://www.w3.org/ns/activitystreams")) return null;
  for (const c of contexts) {
    if (typeof c === "string") {
      if (!PLAIN_CONTEXTS.has(c)) return null;
    } else if (!isRecord(c) || Object.keys(c).some((k) => TERMS_READ.has(k))) return null;
  }
  if (typeof a.type !== "string" || !ACTIVITY_TYPES.has(a.type)) return null;
  const idOf = (v: unknown): URL | null | undefined => (isRecord(v) ? (v.id === undefined ? null : httpUrl(v.id)) : httpUrl(v));
  const id = a.id === undefined ? null : httpUrl(a.id);
  const actorId = idOf(a.actor);
  if (id === undefined || !actorId) return null;
  const objectIds: URL[] = [];
  if (a.type === "Create" || a.type === "Update") {
    for (const o of a.object === undefined ? [] : Array.isArray(a.object) ? a.object : [a.object]) {
      const oid = idOf(o);
      if (oid === undefined) return null;
      if (oid) objectIds.push(oid);
    }
  }
  return { activity: null, id, actorId, objectIds };
}
