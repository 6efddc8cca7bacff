// API keys of a tenant: creation (admin console and keys holding manage_api_keys alike), listing and
// revocation. The raw key exists only in the creation answer; the database keeps its sha256.
import { z } from "zod";
import { db, requirePrincipal, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { ApiKey } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { writeTx } from "../../events/write-tx.js";
import { generateApiKey } from "../../auth/key-auth.js";
import { CAPABILITIES, type Capability } from "../../auth/capabilities.js";
import { recordAudit } from "../audit/audit.js";
import { isoTimestamp } from "../../lib/timestamps.js";

/** Active (not revoked, not expired) keys a tenant may hold at once, of each kind (secret, publishable). */
export const ACTIVE_KEY_LIMIT = 50;

export type KeyKind = "secret" | "publishable";

const CreateInput = z
  .object({
    label: z.string().trim().min(1, "must be 1–100 characters").max(100, "must be 1–100 characters"),
    capabilities: z.array(z.enum(CAPABILITIES, { message: `must be one of ${CAPABILITIES.join(", ")}` })).nullish(),
    expiresAt: isoTimestamp("must be an ISO 8601 timestamp or null").nullish(),
  })
  .strict();

/** As received: checked by CreateInput (every problem listed in one 422). */
export interface CreateApiKeyInput {
  label: string;
  capabilities?: string[] | null | undefined;
  expiresAt?: string | null | undefined;
}

export interface CreatedApiKey {
  /** the raw key: returned here and never again */
  key: string;
  apiKey: ApiKey;
}

function parseCreateInput(ctx: RequestContext, input: CreateApiKeyInput) {
  const parsed = CreateInput.safeParse(input ?? {});
  const problems = parsed.success ? [] : fieldErrorsFromZod(parsed.error.issues);
  // checked even when other fields are invalid, so one answer lists every problem
  const expiry = CreateInput.shape.expiresAt.safeParse(input?.expiresAt);
  const expiresAt = expiry.success && expiry.data ? new Date(expiry.data) : null;
  if (expiresAt && expiresAt.getTime() <= ctx.app.clock.now().getTime()) {
    problems.push({ path: "expiresAt", message: "must be in the future" });
  }
  if (!parsed.success || problems.length) throw errors.validation(problems);
  const capabilities = [...new Set(parsed.data.capabilities ?? [])] as Capability[];
  return { label: parsed.data.label, capabilities, expiresAt };
}

/**
 * Creates a key. The caller may only grant capabilities it holds itself (the admin JWT holds all),
 * and the tenant's active keys stay within ACTIVE_KEY_LIMIT even under concurrent creation: the
 * tenant row is locked while counting and inserting.
 */
export async function createApiKey(ctx: RequestContext, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  const principal = requirePrincipal(ctx);
  const { label, capabilities, expiresAt } = parseCreateInput(ctx, input);
  const missing = capabilities.filter((c) => !principal.capabilities.has(c));
  if (missing.length) throw errors.capabilityEscalation(missing);
  return insertKey(ctx, "secret", { label, capabilities, expiresAt });
}

const PublishableInput = CreateInput.pick({ label: true });

/**
 * Creates a publishable key (`pk_`, contract section 7): for the tenant's pages, with no capability
 * and no expiry; what it may do is fixed (reads, reader actions, stream tickets).
 */
export async function createPublishableKey(ctx: RequestContext, input: { label: string }): Promise<CreatedApiKey> {
  const parsed = PublishableInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  return insertKey(ctx, "publishable", { label: parsed.data.label, capabilities: [], expiresAt: null });
}

async function insertKey(
  ctx: RequestContext,
  kind: KeyKind,
  { label, capabilities, expiresAt }: { label: string; capabilities: Capability[]; expiresAt: Date | null },
): Promise<CreatedApiKey> {
  const tenantId = tenantIdOf(ctx);
  const generated = generateApiKey(kind);
  const created = await writeTx(ctx, async (tx) => {
    // NO KEY UPDATE: serialises with other writers of this tenant row (key creation, settings) but not
    // with the FK checks of inserts elsewhere in the tenant (FOR KEY SHARE), which would needlessly wait.
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`;
    const now = ctx.app.clock.now();
    const active = await tx.apiKey.count({
      where: { kind, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    });
    if (active >= ACTIVE_KEY_LIMIT) {
      throw errors.conflict(
        "active_key_limit",
        `The tenant already has ${active} active ${kind === "secret" ? "API" : "publishable"} keys (limit ${ACTIVE_KEY_LIMIT}); revoke one first.`,
      );
    }
    const apiKey = await tx.apiKey.create({
      data: {
        id: newId(kind === "secret" ? "key" : "pkey"),
        tenantId,
        label,
        keyHash: generated.hash,
        prefix: generated.prefix,
        capabilities,
        kind,
        expiresAt,
        createdAt: now,
      },
    });
    return { key: generated.raw, apiKey };
  });
  await recordAudit(
    ctx,
    `${kind === "secret" ? "api_key" : "publishable_key"}.create`,
    { type: "api_key", id: created.apiKey.id },
    {
      label,
      capabilities,
    },
  );
  return created;
}

/** The tenant's keys of one kind, newest first, every state. */
export async function listApiKeys(ctx: RequestContext, args: PageArgs, kind: KeyKind = "secret"): Promise<Page<ApiKey>> {
  return newestFirstPage(args, (q) => db(ctx).apiKey.findMany({ ...q, where: { ...q.where, kind } }));
}

/** Revokes a key (idempotent: an already revoked key keeps its revocation time). Effective on the next request. */
export async function revokeApiKey(ctx: RequestContext, id: string, kind: KeyKind = "secret"): Promise<ApiKey> {
  const tenantId = tenantIdOf(ctx);
  const key = await writeTx(ctx, async (tx) => {
    await tx.apiKey.updateMany({ where: { id, kind, revokedAt: null }, data: { revokedAt: ctx.app.clock.now() } });
    const found = await tx.apiKey.findFirst({ where: { id, kind } });
    if (!found) throw errors.notFound(kind === "secret" ? "API key" : "Publishable key");
    return found;
  }).finally(() => ctx.app.authCache.invalidateTenant(tenantId));
  await recordAudit(ctx, `${kind === "secret" ? "api_key" : "publishable_key"}.revoke`, { type: "api_key", id });
  return key;
}
