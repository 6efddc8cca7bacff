// Fixture chain: tenant → keys → identity assertions, made through the same code the CLI uses.
import { SignJWT } from "jose";
import { createTenant } from "../../src/modules/tenants/engine/tenants.js";
import { signAdminToken } from "../../src/auth/admin-jwt.js";
import type { TestServer } from "./server.js";
import { client, type Creds } from "./client.js";

export interface IdentityClaims {
  name?: string;
  avatarUrl?: string;
  /** the reader's address for reply emails (contract section 15) */
  email?: string;
  /** the reader's badge (contract section 21); anything, to test the claim's rules */
  badge?: unknown;
  ttlSeconds?: number;
  iat?: number;
}

export interface TestTenant {
  tenantId: string;
  apiKey: string;
  adminToken: string;
  identitySecret: string;
  /** client authenticated with the all-capabilities key */
  api: ReturnType<typeof client>;
  /** client authenticated with the admin JWT */
  admin: ReturnType<typeof client>;
  as(creds: Creds): ReturnType<typeof client>;
  /** client with the all-capabilities key and the reader `sub`'s identity assertion */
  reader(sub: string, claims?: IdentityClaims): Promise<ReturnType<typeof client>>;
  identity(sub: string, claims?: IdentityClaims): Promise<string>;
}

let counter = 0;

export async function createTestTenant(server: TestServer, name = `t${++counter}`): Promise<TestTenant> {
  const s = server.app.runtime.services;
  const t = await createTenant(s, name);
  const adminToken = await signAdminToken({ secret: s.adminJwtSecret, tenantId: t.tenantId, ttlSeconds: 3600 });
  return {
    tenantId: t.tenantId,
    apiKey: t.apiKey,
    adminToken,
    identitySecret: t.identitySecret,
    api: client(server.url, { key: t.apiKey }),
    admin: client(server.url, { admin: adminToken }),
    as: (creds) => client(server.url, creds),
    reader: async (sub, claims = {}) => client(server.url, { key: t.apiKey, identity: await signIdentity(t.identitySecret, sub, claims) }),
    identity: (sub, claims = {}) => signIdentity(t.identitySecret, sub, claims),
  };
}

export async function signIdentity(secret: string, sub: string, claims: IdentityClaims = {}): Promise<string> {
  const iat = claims.iat ?? Math.floor(Date.now() / 1000);
  return new SignJWT({
    name: claims.name ?? `Reader ${sub}`,
    ...(claims.avatarUrl ? { avatarUrl: claims.avatarUrl } : {}),
    ...(claims.email ? { email: claims.email } : {}),
    ...(claims.badge !== undefined ? { badge: claims.badge } : {}),
  })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (claims.ttlSeconds ?? 600))
    .sign(new TextEncoder().encode(secret));
}

/** A key of `tenant` holding exactly `capabilities` (none: a publisher's key), made with the admin API. */
export async function keyWith(
  tenant: TestTenant,
  capabilities: readonly string[],
  expiresAt: string | null = null,
): Promise<{ id: string; key: string }> {
  const r = await tenant.admin.post("/api/v1/admin/keys", { label: "test", capabilities, expiresAt });
  if (r.status !== 201) throw new Error(`POST /api/v1/admin/keys: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; key: string };
}
