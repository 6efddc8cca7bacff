// Tenant settings: read, patch (merging only the named fields) and identity-secret rotation.
// The model (defaults, shape, merge rules) is src/tenancy/settings/ (tree.ts, resolve.ts). A patch's audit entry says
// which fields changed from what to what (settingsChanges).
import { loadTenant, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { Prisma } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { writeTx } from "../../events/write-tx.js";
import { generateIdentitySecret } from "../tenants/engine/tenants.js";
import { applySettingsPatch, checkSettings, resolveSettings } from "../../tenancy/settings/resolve.js";
import { SettingsPatchSchema, type Settings, type SettingsPatch } from "../../tenancy/settings/tree.js";
import { recordAudit } from "../audit/audit.js";
import { newlyBlocked, rejectCommentsOfDomains } from "../moderation/blocked-domains.js";
import { identitySecretKid } from "../../auth/identity.js";
import { checkHookUrl, sealHookSecret, withoutHookSecret, withShownSecret } from "../moderation-hook/secret.js";
import { smtpUrlSecret } from "../email/smtp-url.js";
import { akismetSecret } from "../akismet/settings.js";
import { signInSecrets } from "../sign-in/settings.js";
import { alertSecrets } from "../alerts/settings.js";
import { blueskySecret } from "../bluesky/settings.js";
import type { SecretSetting } from "./sealed-field.js";

/**
 * The write-only secrets of the settings, each kept by its own module: checked before the write,
 * sealed into the stored settings, masked in the audit log's patch, left out of its changes. (The
 * hook's signing secret is made here, not sent: src/modules/moderation-hook/secret.ts.)
 */
const SECRETS: readonly SecretSetting[] = [smtpUrlSecret, akismetSecret, signInSecrets, alertSecrets, blueskySecret];

export async function getSettings(ctx: RequestContext): Promise<Settings> {
  return resolveSettings((await loadTenant(ctx)).settings);
}

/**
 * Applies a PATCH: top-level fields replace, nested objects (delivery, replay, rateLimits, stream)
 * merge field by field. Only the overrides are stored, so tenants follow future default changes for
 * what they never set. Concurrent patches serialise on the tenant row: none is lost.
 */
export async function updateSettings(ctx: RequestContext, patch: unknown): Promise<Settings> {
  const parsed = SettingsPatchSchema.safeParse(patch ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const tenantId = tenantIdOf(ctx);
  await checkHookUrl(ctx, parsed.data);
  for (const secret of SECRETS) await secret.check?.(ctx, parsed.data);
  const { settings, changes, blocked } = await writeTx(ctx, async (tx) => {
    // NO KEY UPDATE: serialises with other writers of this tenant row (key creation, settings) but not
    // with the FK checks of inserts elsewhere in the tenant (FOR KEY SHARE), which would needlessly wait.
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`;
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { settings: true } });
    const before = resolveSettings(tenant.settings);
    // a new hook or url gets a new signing secret, shown once in this answer
    const hook = sealHookSecret(ctx, before, applySettingsPatch(tenant.settings, parsed.data), parsed.data);
    // each write-only secret the PATCH sends is stored sealed
    const next = SECRETS.reduce((stored, secret) => secret.seal(ctx.app.secretBox, before, stored, parsed.data), hook.stored);
    const full = checkSettings(next);
    if (!full.success) throw errors.validation(fieldErrorsFromZod(full.error.issues));
    // the handle is kept in its own unique column too: the database refuses one another tenant holds
    const handle = full.data.federation.handle;
    await tx.tenant
      .update({ where: { id: tenantId }, data: { settings: next as Prisma.InputJsonValue, federationHandle: handle } })
      .catch((err: unknown) => {
        throw handle !== null && isUniqueViolation(err) ? errors.handleTaken(handle) : err;
      });
    const unsealed = (s: Settings) => SECRETS.reduce((shown, secret) => secret.without(shown), withoutHookSecret(s));
    const changes = settingsChanges(unsealed(before), unsealed(full.data), parsed.data);
    const blocked = newlyBlocked(before.federation.blockedDomains, full.data.federation.blockedDomains);
    return { settings: withShownSecret(full.data, hook.secret), changes, blocked };
  });
  delete ctx.cache.tenant;
  ctx.app.authCache.invalidateTenant(tenantId);
  ctx.app.rateLimiter.invalidate(tenantId);
  if (parsed.data.allowedOrigins) await ctx.app.origins.refresh();
  // a newly blocked domain's comments already here are hidden (src/modules/moderation/blocked-domains.ts)
  await rejectCommentsOfDomains(ctx, blocked);
  await recordAudit(
    ctx,
    "settings.update",
    { type: "settings", id: null },
    { patch: SECRETS.reduce((patch, secret) => secret.masked(patch), parsed.data), changes },
  );
  return settings;
}

/** Prisma's unique-constraint refusal (P2002; the tenant row's only unique column besides its id is federation_handle). */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "P2002";
}

export interface SettingChange {
  /** `editWindowSeconds`, or `delivery.maxAttempts` for a nested one */
  field: string;
  from: unknown;
  to: unknown;
}

/** The fields a patch named whose value is now different: what an operator reads in the audit log. */
export function settingsChanges(before: Settings, after: Settings, patch: SettingsPatch): SettingChange[] {
  const changes: SettingChange[] = [];
  const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  for (const [key, value] of Object.entries(patch)) {
    const k = key as keyof Settings;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const was = before[k] as Record<string, unknown>;
      const now = after[k] as Record<string, unknown>;
      for (const n of Object.keys(value)) if (differs(was[n], now[n])) changes.push({ field: `${key}.${n}`, from: was[n], to: now[n] });
    } else if (differs(before[k], after[k])) changes.push({ field: key, from: before[k], to: after[k] });
  }
  return changes;
}

/** Replaces the tenant's identity secret; assertions signed with the old one stop verifying at once. */
export interface RotatedIdentitySecret {
  identitySecret: string;
  kid: string;
  /** until when the secret before it still verifies (identity.secretOverlapHours); null: not at all */
  previousSecretExpiresAt: Date | null;
}

/**
 * A new identity secret, answered once. The one it replaces keeps verifying for the tenant's
 * identity.secretOverlapHours (24 h by default), so backends can switch over without a gap; a
 * rotation within that overlap ends the older secret at once (two at most).
 */
export async function rotateIdentitySecret(ctx: RequestContext): Promise<RotatedIdentitySecret> {
  const tenantId = tenantIdOf(ctx);
  const tenant = await loadTenant(ctx);
  const overlapHours = resolveSettings(tenant.settings).identity.secretOverlapHours;
  const secret = generateIdentitySecret();
  const previousSecretExpiresAt = overlapHours > 0 ? new Date(ctx.app.clock.now().getTime() + overlapHours * 3_600_000) : null;
  await writeTx(ctx, (tx) =>
    tx.tenant.update({
      where: { id: tenantId },
      data: {
        identitySecretEnc: ctx.app.secretBox.seal(secret),
        previousIdentitySecretEnc: previousSecretExpiresAt ? tenant.identitySecretEnc : null,
        previousIdentitySecretExpiresAt: previousSecretExpiresAt,
      },
    }),
  );
  delete ctx.cache.tenant;
  delete ctx.cache.reader;
  ctx.app.authCache.invalidateTenant(tenantId);
  await recordAudit(ctx, "settings.rotate_identity_secret", { type: "settings", id: null });
  return { identitySecret: secret, kid: identitySecretKid(secret), previousSecretExpiresAt };
}
