// Moderators' digests (contract section 15): a console operator may opt in to an email of what waits
// for review — pending comments and comments with open reports — `hourly` (at the top of each hour)
// or `daily` (at the tenant's email.digestHour, UTC). It is sent only when something waits. The
// operator's choice is on their row with when the next one is due; the email worker takes due
// operators FOR UPDATE SKIP LOCKED (several instances never send one digest twice), writes the
// message and moves the due time on, in one transaction (src/modules/email/engine/moderation-digests.ts).
// The link in every digest turns it off.
import type { RequestContext } from "../../context/request.js";
import { loadTenant, requirePrincipal, db } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";

export const DIGEST_FREQUENCIES = ["off", "hourly", "daily"] as const;
export type DigestFrequency = (typeof DIGEST_FREQUENCIES)[number];

export interface ModerationDigestChoice {
  frequency: DigestFrequency;
  /** when the next digest is due (sent only if something waits); null while off */
  nextAt: Date | null;
}

const HOUR_MS = 3_600_000;

/** The next slot after `now`: the next full hour, or the next digestHour:00 UTC. */
export function nextDigestAt(frequency: DigestFrequency, now: Date, digestHour: number): Date | null {
  if (frequency === "off") return null;
  if (frequency === "hourly") return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), digestHour);
  return new Date(today > now.getTime() ? today : today + 24 * HOUR_MS);
}

function requireOperator(ctx: RequestContext) {
  const p = requirePrincipal(ctx);
  if (p.kind !== "operator") throw errors.operatorOnly();
  return p;
}

export async function getMyModerationDigest(ctx: RequestContext): Promise<ModerationDigestChoice> {
  const p = requireOperator(ctx);
  const row = await db(ctx).operator.findUnique({
    where: { id: p.operatorId },
    select: { moderationDigest: true, moderationDigestDueAt: true },
  });
  return { frequency: (row?.moderationDigest ?? "off") as DigestFrequency, nextAt: row?.moderationDigestDueAt ?? null };
}

export async function updateMyModerationDigest(ctx: RequestContext, frequency: string): Promise<ModerationDigestChoice> {
  const p = requireOperator(ctx);
  if (!(DIGEST_FREQUENCIES as readonly string[]).includes(frequency)) {
    throw errors.validation([{ path: "frequency", message: `must be one of ${DIGEST_FREQUENCIES.join(", ")}` }]);
  }
  const tenant = await loadTenant(ctx);
  const nextAt = nextDigestAt(frequency as DigestFrequency, ctx.app.clock.now(), resolveSettings(tenant.settings).email.digestHour);
  await db(ctx).operator.update({
    where: { id: p.operatorId },
    data: { moderationDigest: frequency, moderationDigestDueAt: nextAt },
  });
  return { frequency: frequency as DigestFrequency, nextAt };
}
