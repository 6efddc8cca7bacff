// The `engagement` CLI: tenant bootstrap, admin tokens, console operators and links, migrations.
// Each command is data (src/cli/commands.ts): in embedded mode, while a server holds the data folder,
// it runs on that server's control socket (src/cli/control.ts); otherwise the CLI opens the database
// itself. The output is the same either way.
import { Command, InvalidArgumentError } from "commander";
import { loadConfig, type Config } from "../config.js";
import { createRuntime } from "../runtime.js";
import { parseDuration } from "../lib/duration.js";
import { pino } from "pino";
import { AppError } from "../lib/errors.js";
import { signConsoleLink } from "../modules/console/operators.js";
import { resolveAdminSecret } from "../runtime.js";
import { DataDirInUseError } from "../db/data-dir-lock.js";
import { runCommand, type CliCommand, type CliResult } from "./commands.js";
import { runOnServer } from "./control.js";

const quietLog = pino({ level: "silent" });
/** how long the CLI waits for a process holding the data folder to offer its control socket (a server starting) */
const SERVER_WAIT_MS = 90_000;

const baseUrlOf = (config: Config) =>
  config.PUBLIC_URL ?? `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;

/** Runs a command on the embedded server holding DATA_DIR when there is one, else here. */
async function execute<C extends CliCommand>(cmd: C): Promise<CliResult<C>> {
  const config = loadConfig();
  for (let attempt = 0; ; attempt++) {
    if (config.embedded) {
      const remote = await runOnServer(config.DATA_DIR, cmd, {
        waitMs: SERVER_WAIT_MS,
        onWait: (pid) =>
          process.stderr.write(`engagement: ${config.DATA_DIR} is held by process ${pid}; waiting for it (a server starting?)…\n`),
      });
      if (remote) return remote.result;
    }
    try {
      return await runHere(config, cmd);
    } catch (err) {
      // a server took the folder between the look and the lock: ask it instead
      if (err instanceof DataDirInUseError && config.embedded && attempt < 2) continue;
      throw err;
    }
  }
}

async function runHere<C extends CliCommand>(config: Config, cmd: C): Promise<CliResult<C>> {
  if (cmd.command === "console-link") {
    // signed with the admin JWT secret: no database needed
    const link = signConsoleLink({
      secret: resolveAdminSecret(config),
      tenantId: cmd.tenantId,
      ...(cmd.email ? { email: cmd.email } : {}),
      now: new Date(),
      baseUrl: baseUrlOf(config),
    });
    return { url: link.url, expiresAt: link.expiresAt.toISOString() } as CliResult<C>;
  }
  const rt = await createRuntime(config, { log: quietLog, lockRole: "cli" });
  try {
    return await runCommand({ services: rt.services, migrated: rt.migrated, baseUrl: baseUrlOf(config) }, cmd);
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
    parseDuration(opts.ttl);
    const out = await execute({ command: "tenant create", name: opts.name, ttl: opts.ttl });
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
    parseDuration(opts.ttl);
    const { token } = await execute({ command: "admin-token", tenantId: opts.tenant, ttl: opts.ttl, subject: opts.subject });
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
    const given = opts.passwordStdin ? (await readStdin()).replace(/\r?\n$/, "") : undefined;
    const out = await execute({
      command: "operator create",
      tenantId: opts.tenant,
      email: opts.email,
      role: opts.role,
      ...(given ? { password: given } : {}),
    });
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
    const link = await execute({ command: "console-link", tenantId: opts.tenant, ...(opts.email ? { email: opts.email } : {}) }).catch(
      cliError,
    );
    const who = opts.email ? opts.email.trim().toLowerCase() : "the tenant's first owner";
    process.stdout.write(`Sign in to ${opts.tenant} as ${who} (single use, until ${link.expiresAt}):\n${link.url}\n`);
  });

program
  .command("migrate")
  .description("Apply pending database migrations")
  .action(async () => {
    const { applied, server } = await execute({ command: "migrate" });
    if (server !== undefined) {
      process.stdout.write(`Database is up to date: the running server (process ${server}) applied the migrations at start-up.\n`);
    } else {
      process.stdout.write(applied.length ? `Applied: ${applied.join(", ")}\n` : "Database is up to date.\n");
    }
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
