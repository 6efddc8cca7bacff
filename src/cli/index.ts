// The `engagement` CLI: tenant bootstrap, admin tokens, migrations.
import { Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../config.js";
import { createRuntime } from "../runtime.js";
import { createTenant } from "../modules/tenants/tenants.js";
import { signAdminToken } from "../auth/admin-jwt.js";
import { parseDuration } from "../lib/duration.js";
import { pino } from "pino";

const quietLog = pino({ level: "silent" });

async function withRuntime<T>(fn: (rt: Awaited<ReturnType<typeof createRuntime>>) => Promise<T>, migrate = true): Promise<T> {
  const config = loadConfig();
  const rt = await createRuntime(config, { log: quietLog, migrate });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

const program = new Command().name("engagement").description("Operator CLI of the engagement service").showHelpAfterError();

const tenant = program.command("tenant").description("Manage tenants");
tenant
  .command("create")
  .description("Create a tenant; prints an admin JWT, a first API key (all capabilities) and the identity secret, once")
  .requiredOption("--name <name>", "tenant name")
  .option("--json", "print exactly one JSON object")
  .option("--ttl <duration>", "admin token lifetime (e.g. 1h, 30m, 7d)", "24h")
  .action(async (opts: { name: string; json?: boolean; ttl: string }) => {
    const ttlSeconds = parseDuration(opts.ttl);
    const out = await withRuntime(async ({ services }) => {
      const created = await createTenant(services, opts.name);
      const adminToken = await signAdminToken({ secret: services.adminJwtSecret, tenantId: created.tenantId, ttlSeconds });
      return { tenantId: created.tenantId, adminToken, apiKey: created.apiKey, identitySecret: created.identitySecret };
    });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(
        `Tenant created: ${out.tenantId}\n\nAdmin JWT (expires in ${opts.ttl}):\n  ${out.adminToken}\n\n` +
          `API key (all capabilities; shown once):\n  ${out.apiKey}\n\nIdentity secret (shown once):\n  ${out.identitySecret}\n`,
      );
    }
  });

program
  .command("admin-token")
  .description("Mint an admin JWT for an existing tenant")
  .requiredOption("--tenant <id>", "tenant id")
  .option("--ttl <duration>", "lifetime (e.g. 1h, 30m, 7d)", "1h")
  .option("--subject <sub>", "admin user (the JWT's sub)", "admin")
  .action(async (opts: { tenant: string; ttl: string; subject: string }) => {
    const ttlSeconds = parseDuration(opts.ttl);
    const token = await withRuntime(async ({ services }) => {
      if (ttlSeconds > services.config.ADMIN_JWT_MAX_TTL) {
        throw new InvalidArgumentError(
          `--ttl ${opts.ttl} is longer than ADMIN_JWT_MAX_TTL (${services.config.ADMIN_JWT_MAX_TTL} s): the service would refuse it`,
        );
      }
      const t = await services.prisma.tenant.findUnique({ where: { id: opts.tenant }, select: { id: true } });
      if (!t) throw new InvalidArgumentError(`No tenant with id ${opts.tenant}`);
      return signAdminToken({ secret: services.adminJwtSecret, tenantId: t.id, subject: opts.subject, ttlSeconds });
    });
    process.stdout.write(`${token}\n`);
  });

program
  .command("migrate")
  .description("Apply pending database migrations")
  .action(async () => {
    const applied = await withRuntime(async ({ services }) => (await services.db.migrate()).applied, false);
    process.stdout.write(applied.length ? `Applied: ${applied.join(", ")}\n` : "Database is up to date.\n");
  });

/**
 * Exit once stdout is flushed. A finished command exits at once rather than when the event loop
 * drains: the migration step's connection pool would otherwise keep the process alive ~10 s.
 */
const exit = (code: number) => process.stdout.write("", () => process.exit(code));

program.parseAsync(process.argv).then(
  () => exit(0),
  (err: unknown) => {
    process.stderr.write(`engagement: ${err instanceof Error ? err.message : String(err)}\n`);
    exit(1);
  },
);
