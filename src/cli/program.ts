// The `engagement` CLI's commands: tenant bootstrap, admin tokens, console operators and links,
// migrations, comment search's rebuild. Each command is data (src/cli/commands.ts): in embedded mode,
// while a server holds the data folder, it runs on that server's control socket (src/cli/control.ts);
// otherwise the CLI opens the database itself. The output is the same either way. `cliMain` parses
// one command line and runs it with the environment and output streams it is given, answering the
// exit code; src/cli/index.ts is the process that runs it on its own argv, env, stdout and stderr.
import { Command, InvalidArgumentError } from "commander";
import { loadConfig, type Config } from "../config.js";
import { createRuntime } from "../runtime.js";
import { parseDuration } from "../lib/duration.js";
import { pino } from "pino";
import { AppError } from "../lib/errors.js";
import { signConsoleLink } from "../modules/console/engine/operators.js";
import { resolveAdminSecret } from "../auth/admin-jwt.js";
import { DataDirInUseError } from "../db/data-dir-lock.js";
import { runCommand, type CliCommand, type CliResult } from "./commands.js";
import { runOnServer } from "./control.js";
import { addPortabilityCommands } from "./portability.js";

const quietLog = pino({ level: "silent" });
/** how long the CLI waits for a process holding the data folder to offer its control socket (a server starting) */
const SERVER_WAIT_MS = 90_000;

const baseUrlOf = (config: Config) =>
  config.PUBLIC_URL ?? `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;

/**
 * Where a console link points: PUBLIC_URL; else the address a running server of this configuration
 * gives for its console (its `GET /` at HOST:PORT, a wildcard HOST asked on loopback); else HOST:PORT,
 * said to be a guess on `warn`.
 */
async function consoleBaseUrl(config: Config, warn: (text: string) => void): Promise<string> {
  if (config.PUBLIC_URL) return config.PUBLIC_URL;
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "127.0.0.1" : config.HOST;
  const asked = `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT}/`;
  try {
    const res = await fetch(asked, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(2_000), redirect: "error" });
    const body = (await res.json()) as { service?: unknown; links?: { console?: unknown } };
    if (body.service === "engagement" && typeof body.links?.console === "string") return new URL(body.links.console).origin;
  } catch {
    /* nobody there, or not this service: a guess, said below */
  }
  warn(
    `engagement: PUBLIC_URL is unset and no server answered at ${asked}; the link below guesses that address. ` +
      `Set PUBLIC_URL to the address browsers reach the service at.\n`,
  );
  return baseUrlOf(config);
}

/** Runs a command on the embedded server holding DATA_DIR when there is one, else here. */
async function execute<C extends CliCommand>(io: CliIo, cmd: C): Promise<CliResult<C>> {
  const config = loadConfig(io.env);
  for (let attempt = 0; ; attempt++) {
    if (config.embedded) {
      const remote = await runOnServer(config.DATA_DIR, cmd, {
        waitMs: SERVER_WAIT_MS,
        onWait: (pid) => io.stderr(`engagement: ${config.DATA_DIR} is held by process ${pid}; waiting for it (a server starting?)…\n`),
      });
      if (remote) return remote.result;
    }
    try {
      return await runHere(config, cmd, io);
    } catch (err) {
      // a server took the folder between the look and the lock: ask it instead
      if (err instanceof DataDirInUseError && config.embedded && attempt < 2) continue;
      throw err;
    }
  }
}

async function runHere<C extends CliCommand>(config: Config, cmd: C, io: CliIo): Promise<CliResult<C>> {
  if (cmd.command === "console-link") {
    // signed with the admin JWT secret: no database needed
    const link = signConsoleLink({
      secret: resolveAdminSecret(config),
      tenantId: cmd.tenantId,
      ...(cmd.email ? { email: cmd.email } : {}),
      now: new Date(),
      baseUrl: await consoleBaseUrl(config, io.stderr),
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

/** Where a run reads its settings and input and writes its output: a process's own, or a caller's. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
  /** all of standard input (operator create --password-stdin) */
  stdin(): Promise<string>;
}

/** commander's own exit (it has already written what it had to say), as an exit code for cliMain */
class CommanderExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Runs one command line (`args`: what follows `engagement`); answers the process's exit code. */
export async function cliMain(args: string[], io: CliIo): Promise<number> {
  const program = new Command()
    .name("engagement")
    .description("Operator CLI of the engagement service")
    .showHelpAfterError()
    // set before the commands are added, which inherit them: commander writes to the run's streams and
    // hands its own exits (usage errors, --help) back to cliMain instead of ending the process
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride((err) => {
      throw new CommanderExit(err.exitCode);
    });

  const tenant = program.command("tenant").description("Manage tenants");
  tenant
    .command("create")
    .description("Create a tenant; prints an admin JWT, a first API key (all capabilities) and the identity secret, once")
    .requiredOption("--name <name>", "tenant name")
    .option("--json", "print exactly one JSON object")
    .option("--ttl <duration>", "admin token lifetime (e.g. 1h, 30m, 7d)", "24h")
    .action(async (opts: { name: string; json?: boolean; ttl: string }) => {
      parseDuration(opts.ttl);
      const out = await execute(io, { command: "tenant create", name: opts.name, ttl: opts.ttl });
      if (opts.json) {
        io.stdout(`${JSON.stringify(out)}\n`);
      } else {
        io.stdout(
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
      const { token } = await execute(io, { command: "admin-token", tenantId: opts.tenant, ttl: opts.ttl, subject: opts.subject });
      io.stdout(`${token}\n`);
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
      const given = opts.passwordStdin ? (await io.stdin()).replace(/\r?\n$/, "") : undefined;
      const out = await execute(io, {
        command: "operator create",
        tenantId: opts.tenant,
        email: opts.email,
        role: opts.role,
        ...(given ? { password: given } : {}),
      });
      if (opts.json) io.stdout(`${JSON.stringify(out)}\n`);
      else {
        io.stdout(`Operator created: ${out.email} (${out.role}) in ${out.tenantId}\n`);
        if (out.password) io.stdout(`Password (shown once):\n  ${out.password}\n`);
      }
    });

  program
    .command("console-link")
    .description("Print a single-use console sign-in URL, valid 15 minutes (last line)")
    .requiredOption("--tenant <id>", "tenant id")
    .option("--email <email>", "the operator to sign in as (default: the tenant's first owner, created when there is none)")
    .action(async (opts: { tenant: string; email?: string }) => {
      const link = await execute(io, {
        command: "console-link",
        tenantId: opts.tenant,
        ...(opts.email ? { email: opts.email } : {}),
      }).catch(cliError);
      const who = opts.email ? opts.email.trim().toLowerCase() : "the tenant's first owner";
      io.stdout(`Sign in to ${opts.tenant} as ${who} (single use, until ${link.expiresAt}):\n${link.url}\n`);
    });

  program
    .command("migrate")
    .description("Apply pending database migrations")
    .action(async () => {
      const { applied, server } = await execute(io, { command: "migrate" });
      if (server !== undefined) {
        io.stdout(`Database is up to date: the running server (process ${server}) applied the migrations at start-up.\n`);
      } else {
        io.stdout(applied.length ? `Applied: ${applied.join(", ")}\n` : "Database is up to date.\n");
      }
    });

  const search = program.command("search").description("Comment search");
  search
    .command("rebuild")
    .description(
      "Make comment search's documents again from the comments (a tenant's, or every tenant's): what the event log no longer holds included",
    )
    .option("--tenant <id>", "only this tenant")
    .option("--json", "print exactly one JSON object")
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const out = await execute(io, { command: "search rebuild", tenantId: opts.tenant ?? null }).catch(cliError);
      if (opts.json) io.stdout(`${JSON.stringify(out)}\n`);
      else {
        io.stdout(
          `Rebuilt the search documents of ${out.discussions} discussions in ${out.tenants} tenant${out.tenants === 1 ? "" : "s"}: ` +
            `${out.documents} written, ${out.orphans} of missing discussions deleted.\n`,
        );
      }
    });

  program
    .command("render")
    .description("Print a discussion's comments as the HTML a page includes for search engines and readers without JavaScript")
    .requiredOption("--tenant <id>", "tenant id")
    .option("--discussion <id>", "discussion id (or --url)")
    .option(
      "--url <page url>",
      "the page whose thread it is (or --discussion): an empty thread for a page of the site's allowedOrigins that has none yet",
    )
    .option("--sort <sort>", "newest | oldest | top | best | score (default newest)")
    .option("--lang <tag>", "the language of its words and dates (en de fr es pt it nl pl ja zh)")
    .option("--cursor <cursor>", "a later page (the cursor of its rel=next link)")
    .option("--parent <commentId>", "a comment's replies page (where its replies stop short in a page, its link leads there)")
    .option("--key <pk_…>", "the publishable key the element uses (else the thread.js script tag's data-publishable-key)")
    .option("--api-base <url>", "the service's address the page reaches (default PUBLIC_URL)")
    .action(
      async (opts: {
        tenant: string;
        discussion?: string;
        url?: string;
        sort?: string;
        lang?: string;
        cursor?: string;
        parent?: string;
        key?: string;
        apiBase?: string;
      }) => {
        const { html } = await execute(io, {
          command: "render",
          tenantId: opts.tenant,
          discussionId: opts.discussion ?? null,
          url: opts.url ?? null,
          sort: opts.sort ?? null,
          lang: opts.lang ?? null,
          cursor: opts.cursor ?? null,
          parentId: opts.parent ?? null,
          key: opts.key ?? null,
          apiBase: opts.apiBase ?? null,
        }).catch(cliError);
        io.stdout(html);
      },
    );

  // import and export stream, so they run here only (src/cli/portability.ts)
  addPortabilityCommands(program, io);

  try {
    await program.parseAsync(args, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderExit) return err.code;
    io.stderr(`engagement: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** Domain refusals as CLI errors: their message, not a stack. */
function cliError(err: unknown): never {
  if (err instanceof AppError) throw new InvalidArgumentError(err.detail);
  throw err;
}
