// Tenant bootstrap: a tenant, its identity secret and a first API key holding every capability.
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { SecretBox } from "../../../lib/secret-box.js";
import { newId } from "../../../lib/ids.js";
import { AppError } from "../../../lib/errors.js";
import { generateApiKey } from "../../../auth/key-auth.js";
import { CAPABILITIES } from "../../../auth/capabilities.js";
import { newReaderIdKey } from "../../../auth/reader-ids.js";

export function generateIdentitySecret(): string {
  return `is_${randomBytes(32).toString("hex")}`;
}

export interface CreatedTenant {
  tenantId: string;
  apiKey: string;
  apiKeyId: string;
  identitySecret: string;
}

export async function createTenant(deps: { prisma: PrismaClient; secretBox: SecretBox }, name: string): Promise<CreatedTenant> {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) {
    throw new AppError(422, "validation_failed", "--name must be 1–200 characters", {
      errors: [{ path: "name", message: "must be 1–200 characters" }],
    });
  }
  const tenantId = newId("ten");
  const identitySecret = generateIdentitySecret();
  const key = generateApiKey();
  const apiKeyId = newId("key");
  await deps.prisma.$transaction([
    deps.prisma.tenant.create({
      data: { id: tenantId, name: trimmed, identitySecretEnc: deps.secretBox.seal(identitySecret) },
    }),
    deps.prisma.apiKey.create({
      data: {
        id: apiKeyId,
        tenantId,
        label: "bootstrap",
        keyHash: key.hash,
        prefix: key.prefix,
        capabilities: [...CAPABILITIES],
      },
    }),
    // the key of its opaque reader ids (src/auth/reader-ids.ts): a new tenant has none to migrate
    deps.prisma.readerIdKey.create({ data: { tenantId, keyEnc: newReaderIdKey(deps.secretBox).keyEnc } }),
  ]);
  return { tenantId, apiKey: key.raw, apiKeyId, identitySecret };
}
