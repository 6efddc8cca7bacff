// The `engagement` CLI: tenant bootstrap, admin tokens, migrations.
import { Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../config.js";
import { createRuntime } from "../runtime.js";
import { createTenant } from "../modules/tenants/tenants.js";
import { signAdminToken } from "../auth/admin-jwt.js";
import { parseDuration } from "../lib/duration.js";
import { pino } from "pino";
import { AppError } from "../lib/errors.js";
import { createOperator, signConsoleLink } from "../modules/console/operators.js";
import { resolveAdminSecret } from "../runtime.js";

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

const operator = program.command("operator").description("Manage console operators");
operator
  .command("create")
  .description("Create a console operator; prints a generated password once (or set it with --password-stdin)")
  .requiredOption("--tenant <id>", "tenant id")
  .requiredOption("--email <email>", "the operator's email")
  .option("--role <role>", "owner (every capability) or moderator (moderation and analytics)", "owner")
  .option("--password-stdin", "read the password (at least 12 characters) from standard input")
  .option("--json", "print exactly one JSON object")
  .action(async (opts: { tenant: string; email: string; role: string; passwordStdin?: boolean; json?: boolean }) => {
    if (opts.role !== "owner" && opts.role !== "moderator") throw new InvalidArgumentError("--role must be owner or moderator");
    const role = opts.role;
    const given = opts.passwordStdin ? (await readStdin()).replace(/\r?\n$/, "") : undefined;
    const out = await withRuntime(async ({ services }) => {
      const created = await createOperator(services, {
        tenantId: opts.tenant,
        email: opts.email,
        role,
        ...(given ? { password: given } : {}),
      });
      return {
        operatorId: created.operator.id,
        tenantId: created.operator.tenantId,
        email: created.operator.email,
        role,
        password: given ? undefined : created.password,
      };
    }).catch(cliError);
    if (opts.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      process.stdout.write(`Operator created: ${out.email} (${out.role}) in ${out.tenantId}\n`);
      if (out.password) process.stdout.write(`Password (shown once):\n  ${out.password}\n`);
    }
  });

program
  .command("console-link")
  .description("Print a single-use console sign-in URL, valid 15 minutes (last line)")
  .requiredOption("--tenant <id>", "tenant id")
  .option("--email <email>", "the operator to sign in as (default: the tenant's first owner, created when there is none)")
  .action(async (opts: { tenant: string; email?: string }) => {
    const config = loadConfig();
    // signed with the admin JWT secret, so it needs no database: it also works while an embedded
    // server holds the data directory (the server checks the tenant and operator when it is opened)
    const secret = resolveAdminSecret(config);
    const baseUrl = config.PUBLIC_URL ?? `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;
    let link: { url: string; expiresAt: Date };
    try {
      link = signConsoleLink({ secret, tenantId: opts.tenant, ...(opts.email ? { email: opts.email } : {}), now: new Date(), baseUrl });
    } catch (err) {
      cliError(err);
    }
    const who = opts.email ? opts.email.trim().toLowerCase() : "the tenant's first owner";
    process.stdout.write(`Sign in to ${opts.tenant} as ${who} (single use, until ${link.expiresAt.toISOString()}):\n${link.url}\n`);
  });

program
  .command("migrate")
  .description("Apply pending database migrations")
  .action(async () => {
    const applied = await withRuntime(async ({ services }) => (await services.db.migrate()).applied, false);
    process.stdout.write(applied.length ? `Applied: ${applied.join(", ")}\n` : "Database is up to date.\n");
  });

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Domain refusals as CLI errors: their message, not a stack. */
function cliError(err: unknown): never {
  if (err instanceof AppError) throw new InvalidArgumentError(err.detail);
  throw err;
}

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
