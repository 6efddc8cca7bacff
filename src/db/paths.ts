import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
export const migrationsDir = join(repoRoot, "prisma", "migrations");
export const schemaPath = join(repoRoot, "prisma", "schema.prisma");
