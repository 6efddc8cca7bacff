// The secret key check: one row per data set (secret_key_check, id 1) holding a fixed text sealed
// with the secret box at first start. Every start and every CLI command that opens the database
// opens it: a key other than the one the stored secrets were sealed with (another ADMIN_JWT_SECRET,
// from which the key is derived, or another SECRET_ENCRYPTION_KEY) is refused in one line instead of
// surfacing later as failing requests. A data set from before the check gets it at its next start,
// unless its existing sealed secrets cannot be opened with the current key (then that is said).
import type { PrismaClient } from "../generated/prisma/client.js";
import type { SecretBox } from "../lib/secret-box.js";
import { StartupError } from "../lib/startup-error.js";

const CHECK_TEXT = "engagement secret key check v1";
/** sealed secrets sampled when a data set has no check yet */
const SAMPLE = 20;

/** The one line for a key that does not open the stored secrets; `keySource` says where this key came from. */
export class SecretKeyMismatchError extends StartupError {
  constructor(keySource: string) {
    const fix = keySource.startsWith("SECRET_ENCRYPTION_KEY")
      ? "set SECRET_ENCRYPTION_KEY to the value the data was created with (the server and the CLI need the same one)"
      : "set ADMIN_JWT_SECRET (or SECRET_ENCRYPTION_KEY, if the data was created with one) to the value the data was created with (the server and the CLI need the same one)";
    super(`The secrets stored in this database were sealed with another key than this process's ${keySource}: ${fix}.`);
    this.name = "SecretKeyMismatchError";
  }
}

export type KeyCheckOutcome = "verified" | "stored" | "no-table";

export async function verifySecretKey(deps: { prisma: PrismaClient; box: SecretBox; keySource: string }): Promise<KeyCheckOutcome> {
  const { prisma, box } = deps;
  // the table exists once migrated; a process told not to migrate may face an older schema
  const [reg] = await prisma.$queryRaw<{ present: boolean }[]>`SELECT to_regclass('secret_key_check') IS NOT NULL AS present`;
  if (!reg?.present) return "no-table";
  const row = await prisma.secretKeyCheck.findUnique({ where: { id: 1 } });
  if (row) {
    if (!box.opens(row.sealed)) throw new SecretKeyMismatchError(deps.keySource);
    return "verified";
  }
  // No check stored yet (a data set from before it, or a fresh one): the existing sealed secrets say
  // whether this key is theirs. Refused only when there are some and none opens (a single tenant
  // restored from elsewhere is answered per request: 503 secret_key_mismatch).
  const [tenants, webhookSecrets] = await Promise.all([
    prisma.tenant.findMany({ select: { identitySecretEnc: true }, orderBy: { createdAt: "desc" }, take: SAMPLE }),
    prisma.webhookSecret.findMany({ select: { secretEnc: true }, take: SAMPLE }),
  ]);
  const sealed = [...tenants.map((t) => t.identitySecretEnc), ...webhookSecrets.map((s) => s.secretEnc)];
  if (sealed.length > 0 && !sealed.some((s) => box.opens(s))) throw new SecretKeyMismatchError(deps.keySource);
  await prisma.$executeRaw`INSERT INTO secret_key_check (id, sealed) VALUES (1, ${box.seal(CHECK_TEXT)}) ON CONFLICT (id) DO NOTHING`;
  // another process may have stored its own at the same moment: the stored one is the one to open
  const stored = await prisma.secretKeyCheck.findUniqueOrThrow({ where: { id: 1 } });
  if (!box.opens(stored.sealed)) throw new SecretKeyMismatchError(deps.keySource);
  return "stored";
}
