// API keys: `ek_` (secret, for backends) or `pk_` (publishable, for browsers) + 64 hex from a CSPRNG. Only the sha256 is stored and looked up; a 256-bit random
// key needs no slow hash, and lookup by hash is constant-time with respect to the secret.
import { randomBytes } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import type { PrismaClient, Tenant } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";
import { isCapability, type Capability } from "./capabilities.js";
import type { AuthCache, CachedKey } from "./auth-cache.js";
import type { Principal } from "./principal.js";

const KEY_RE = /^(ek|pk)_[0-9a-f]{64}$/;
const PREFIX_OF_KIND = { secret: "ek_", publishable: "pk_" } as const;
/** lastUsedAt is written at most this often per key, to keep reads off the write path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function generateApiKey(kind: "secret" | "publishable" = "secret"): { raw: string; hash: string; prefix: string } {
  const raw = `${PREFIX_OF_KIND[kind]}${randomBytes(32).toString("hex")}`;
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, 12) };
}

export function hashApiKey(raw: string): string {
  return sha256(raw, "hex");
}

const NO_CAPABILITIES: ReadonlySet<Capability> = new Set();

export type KeyState = "active" | "expired" | "revoked";

export function keyState(k: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): KeyState {
  if (k.revokedAt) return "revoked";
  if (k.expiresAt && k.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

/** The key lookup's row: the cached key's own columns, then its tenant's. */
interface KeyRow extends Omit<CachedKey, "tenant"> {
  tenantName: string;
  identitySecretEnc: string;
  previousIdentitySecretEnc: string | null;
  previousIdentitySecretExpiresAt: Date | null;
  settings: Tenant["settings"];
  federationHandle: string | null;
  tenantCreatedAt: Date;
}

/**
 * The caller of X-API-Key and its tenant's row (settings, sealed identity secret), read in one
 * statement: nearly every request needs both.
 */
export async function authenticateApiKey(
  prisma: PrismaClient,
  raw: string,
  clock: Clock,
  cache?: AuthCache,
): Promise<{ principal: Principal; tenant: Tenant }> {
  if (!KEY_RE.test(raw)) throw errors.unauthenticated("The API key is not valid.");
  const hash = hashApiKey(raw);
  const key = cache?.key(hash) ?? (await lookupKey(prisma, hash, cache));
  if (!key || !raw.startsWith(PREFIX_OF_KIND[key.kind])) throw errors.unauthenticated("The API key is not valid.");
  const now = clock.now();
  const state = keyState(key, now); // to the second, cached or not
  if (state === "revoked") throw errors.keyRevoked();
  if (state === "expired") throw errors.keyExpired();
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    key.lastUsedAt = now; // the cached entry too: one bookkeeping write per key per resolution
    // Best effort and off the request path: a failed bookkeeping write must not fail the request.
    void prisma.apiKey.updateMany({ where: { id: key.id }, data: { lastUsedAt: now } }).catch(() => undefined);
  }
  return {
    principal:
      key.kind === "publishable"
        ? { kind: "publishable", tenantId: key.tenantId, keyId: key.id, capabilities: NO_CAPABILITIES }
        : {
            kind: "key",
            tenantId: key.tenantId,
            keyId: key.id,
            capabilities: new Set(key.capabilities.filter(isCapability) as Capability[]),
          },
    tenant: key.tenant,
  };
}

/** One indexed lookup of the key with its tenant's row (raw SQL: no query-plan building). */
async function lookupKey(prisma: PrismaClient, hash: string, cache: AuthCache | undefined): Promise<CachedKey | undefined> {
  const [key] = await prisma.$queryRaw<KeyRow[]>`
    SELECT k.id, k.tenant_id AS "tenantId", k.capabilities, k.kind::text AS kind, k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt",
           k.last_used_at AS "lastUsedAt", t.name AS "tenantName", t.identity_secret_enc AS "identitySecretEnc",
           t.previous_identity_secret_enc AS "previousIdentitySecretEnc",
           t.previous_identity_secret_expires_at AS "previousIdentitySecretExpiresAt", t.settings,
           t.federation_handle AS "federationHandle", t.created_at AS "tenantCreatedAt"
      FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
     WHERE k.key_hash = ${hash}`;
  if (!key) return undefined;
  const cached: CachedKey = {
    id: key.id,
    tenantId: key.tenantId,
    capabilities: key.capabilities,
    kind: key.kind,
    expiresAt: key.expiresAt,
    revokedAt: key.revokedAt,
    lastUsedAt: key.lastUsedAt,
    tenant: {
      id: key.tenantId,
      name: key.tenantName,
      identitySecretEnc: key.identitySecretEnc,
      previousIdentitySecretEnc: key.previousIdentitySecretEnc,
      previousIdentitySecretExpiresAt: key.previousIdentitySecretExpiresAt,
      settings: key.settings,
      federationHandle: key.federationHandle,
      createdAt: key.tenantCreatedAt,
    },
  };
  cache?.putKey(hash, cached);
  return cached;
}
