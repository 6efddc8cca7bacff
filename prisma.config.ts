import { defineConfig } from "prisma/config";

// Prisma 7 reads the datasource URL from here. Migrations are applied by src/db/migrate.ts
// (WASM schema engine), which serves both PostgreSQL and the embedded PGlite database.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
});
