// The demo's own tenant (/embed/demo): made on the first visit, with a publishable key, a discussion
// and a welcome comment, and remembered in DATA_DIR/embed-demo.json (the tenant id and the
// publishable key, which is public by design). A later visit finds it again; one whose tenant or key
// is gone (another database, a revoked key) makes a new one. Development only: the routes that use it
// are mounted unless NODE_ENV=production (src/modules/embed-demo/http-routes.ts).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { AppServices } from "../../../context/services.js";
import { generateApiKey, hashApiKey } from "../../../auth/key-auth.js";
import { signAdminToken } from "../../../auth/admin-jwt.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { newId } from "../../../lib/ids.js";
import { createTenant } from "../../tenants/engine/tenants.js";
import { signDemoIdentity } from "../identity.js";

export const DEMO_DISCUSSION = "demo-article";

export interface DemoTenant {
  tenantId: string;
  publishableKey: string;
  identitySecret: string;
}

interface Remembered {
  tenantId: string;
  publishableKey: string;
}

/**
 * Lets the demo page's origin (however the newcomer reached the server: localhost, 127.0.0.1, a LAN
 * name) use the demo's publishable key: added to the demo tenant's allowedOrigins through the
 * settings API, once per origin and process.
 */
export function demoOriginAllower(app: AppServices, fastify: FastifyInstance): (tenantId: string, origin: string) => Promise<void> {
  const allowed = new Set<string>();
  return async (tenantId, origin) => {
    if (allowed.has(`${tenantId} ${origin}`)) return;
    const token = await signAdminToken({ secret: app.adminJwtSecret, tenantId, ttlSeconds: 60 });
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const current = await fastify.inject({ method: "GET", url: "/api/v1/settings", headers });
    const origins = (current.json() as { allowedOrigins?: string[] }).allowedOrigins ?? [];
    if (!origins.includes(origin)) {
      const patched = await fastify.inject({
        method: "PATCH",
        url: "/api/v1/settings",
        headers,
        payload: { allowedOrigins: [...origins, origin] },
      });
      if (patched.statusCode !== 200) throw new Error(`allowing ${origin} for the demo: HTTP ${patched.statusCode}`);
    }
    allowed.add(`${tenantId} ${origin}`);
  };
}

/** The demo tenant, found or made once per process (concurrent first visits share one making). */
export function demoTenantSource(app: AppServices, fastify: FastifyInstance): () => Promise<DemoTenant> {
  const file = join(app.config.DATA_DIR, "embed-demo.json");
  let current: Promise<DemoTenant> | undefined;
  return () => {
    current ??= findOrMake(app, fastify, file).catch((err: unknown) => {
      current = undefined;
      throw err;
    });
    return current;
  };
}

async function findOrMake(app: AppServices, fastify: FastifyInstance, file: string): Promise<DemoTenant> {
  const remembered = await readRemembered(file);
  if (remembered) {
    const tenant = await tenantRow(app, remembered.tenantId);
    const key =
      tenant &&
      (await app.stores(tenant.id).prisma.apiKey.findFirst({ where: { keyHash: hashApiKey(remembered.publishableKey), revokedAt: null } }));
    if (tenant && key) return { ...remembered, identitySecret: app.secretBox.open(tenant.identitySecretEnc) };
  }
  const made = await createTenant(app, "Embed demo");
  const key = generateApiKey("publishable");
  await app.stores(made.tenantId).prisma.apiKey.create({
    data: {
      id: newId("key"),
      tenantId: made.tenantId,
      label: "embed demo",
      keyHash: key.hash,
      prefix: key.prefix,
      capabilities: [],
      kind: "publishable",
    },
  });
  await seed(fastify, made.apiKey, made.identitySecret);
  await mkdir(app.config.DATA_DIR, { recursive: true });
  await writeFile(file, JSON.stringify({ tenantId: made.tenantId, publishableKey: key.raw } satisfies Remembered, null, 2));
  return { tenantId: made.tenantId, publishableKey: key.raw, identitySecret: made.identitySecret };
}

async function readRemembered(file: string): Promise<Remembered | null> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<Remembered>;
    return typeof parsed.tenantId === "string" && typeof parsed.publishableKey === "string"
      ? { tenantId: parsed.tenantId, publishableKey: parsed.publishableKey }
      : null;
  } catch {
    return null;
  }
}

/** The discussion and a first comment, written through the public API as any backend would. */
async function seed(fastify: FastifyInstance, apiKey: string, identitySecret: string): Promise<void> {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  await fastify.inject({
    method: "PUT",
    url: `/api/v1/discussions/${DEMO_DISCUSSION}`,
    headers,
    payload: { title: "Welcome to the embed demo", url: "/embed/demo" },
  });
  const identity = await signDemoIdentity(identitySecret, "Ada");
  await fastify.inject({
    method: "POST",
    url: `/api/v1/discussions/${DEMO_DISCUSSION}/comments`,
    headers: { ...headers, "x-service-identity": identity },
    payload: {
      body: "Welcome! Sign in with any name above, write a comment, and open this page in a second window to watch it arrive live.",
    },
  });
}
