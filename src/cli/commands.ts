// The CLI's commands that need the service, as data: run by the CLI itself (it opened the database)
// or, in embedded mode while a server holds the data folder, by that server on its control socket
// (src/cli/control-server.ts). One implementation, so both answer the same and the CLI prints the same.
import { z } from "zod";
import type { AppServices } from "../context/services.js";
import { createTenant } from "../modules/tenants/engine/tenants.js";
import { signAdminToken } from "../auth/admin-jwt.js";
import { createOperator, signConsoleLink } from "../modules/console/engine/operators.js";
import { AppError } from "../lib/errors.js";
import { parseDuration } from "../lib/duration.js";
import { renderForTenant } from "../modules/indexable/engine/render.js";
import { hashApiKey, keyState } from "../auth/key-auth.js";
import { rebuildSearch, type SearchRebuilt } from "../modules/comments/engine/search-rebuild.js";

export const CliCommandSchema = z.discriminatedUnion("command", [
  z.object({ command: z.literal("tenant create"), name: z.string(), ttl: z.string() }),
  z.object({
    command: z.literal("operator create"),
    tenantId: z.string(),
    email: z.string(),
    role: z.enum(["owner", "moderator"]),
    password: z.string().optional(),
  }),
  z.object({ command: z.literal("admin-token"), tenantId: z.string(), ttl: z.string(), subject: z.string() }),
  z.object({ command: z.literal("console-link"), tenantId: z.string(), email: z.string().optional() }),
  z.object({ command: z.literal("migrate") }),
  /** comment search's documents made again from the comments (null: every tenant's) */
  z.object({ command: z.literal("search rebuild"), tenantId: z.string().nullable() }),
  z.object({
    command: z.literal("render"),
    tenantId: z.string(),
    /** null: the discussion of `url` (contract section 27) */
    discussionId: z.string().nullable(),
    url: z.string().nullish(),
    sort: z.string().nullable(),
    lang: z.string().nullable(),
    cursor: z.string().nullable(),
    parentId: z.string().nullish(),
    key: z.string().nullable(),
    apiBase: z.string().nullable(),
  }),
]);
export type CliCommand = z.infer<typeof CliCommandSchema>;

export interface CliResults {
  "tenant create": { tenantId: string; adminToken: string; apiKey: string; identitySecret: string };
  "operator create": { operatorId: string; tenantId: string; email: string; role: string; password?: string | undefined };
  "admin-token": { token: string };
  "console-link": { url: string; expiresAt: string };
  /** `server`: the running embedded server (its pid) answered; it applied the migrations at start-up */
  migrate: { applied: string[]; server?: number };
  "search rebuild": SearchRebuilt;
  /** a discussion's indexable thread (src/modules/indexable/engine/render.ts) */
  render: { html: string };
}
export type CliResult<C extends CliCommand> = CliResults[C["command"]];

/** A refusal the operator reads (bad arguments, unknown tenant): its message, not a stack. */
export class CliRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliRefusal";
  }
}

export interface CommandContext {
  services: AppServices;
  /** migrations this process applied at start (a server answers for its own start-up) */
  migrated: string[];
  /** the running server's pid when it is the one answering */
  server?: number;
  /** where console links point (PUBLIC_URL, else the server's address) */
  baseUrl: string;
}

export async function runCommand<C extends CliCommand>(ctx: CommandContext, cmd: C): Promise<CliResult<C>> {
  try {
    return (await run(ctx, cmd)) as CliResult<C>;
  } catch (err) {
    // domain refusals (validation, unknown tenant, an existing operator) as the operator's message
    if (err instanceof AppError) throw new CliRefusal(err.detail);
    throw err;
  }
}

async function run(ctx: CommandContext, cmd: CliCommand): Promise<CliResults[keyof CliResults]> {
  const { services } = ctx;
  switch (cmd.command) {
    case "tenant create": {
      const ttlSeconds = parseDuration(cmd.ttl);
      const created = await createTenant(services, cmd.name);
      const adminToken = await signAdminToken({ secret: services.adminJwtSecret, tenantId: created.tenantId, ttlSeconds });
      return { tenantId: created.tenantId, adminToken, apiKey: created.apiKey, identitySecret: created.identitySecret };
    }
    case "operator create": {
      const created = await createOperator(services, {
        tenantId: cmd.tenantId,
        email: cmd.email,
        role: cmd.role,
        ...(cmd.password !== undefined ? { password: cmd.password } : {}),
      });
      return {
        operatorId: created.operator.id,
        tenantId: created.operator.tenantId,
        email: created.operator.email,
        role: cmd.role,
        password: cmd.password !== undefined ? undefined : created.password,
      };
    }
    case "admin-token": {
      const ttlSeconds = parseDuration(cmd.ttl);
      if (ttlSeconds > services.config.ADMIN_JWT_MAX_TTL) {
        throw new CliRefusal(
          `--ttl ${cmd.ttl} is longer than ADMIN_JWT_MAX_TTL (${services.config.ADMIN_JWT_MAX_TTL} s): the service would refuse it`,
        );
      }
      const t = await services.prisma.tenant.findUnique({ where: { id: cmd.tenantId }, select: { id: true } });
      if (!t) throw new CliRefusal(`No tenant with id ${cmd.tenantId}`);
      return { token: await signAdminToken({ secret: services.adminJwtSecret, tenantId: t.id, subject: cmd.subject, ttlSeconds }) };
    }
    case "console-link": {
      const link = signConsoleLink({
        secret: services.adminJwtSecret,
        tenantId: cmd.tenantId,
        ...(cmd.email ? { email: cmd.email } : {}),
        now: services.clock.now(),
        baseUrl: ctx.baseUrl,
      });
      return { url: link.url, expiresAt: link.expiresAt.toISOString() };
    }
    case "migrate":
      return { applied: ctx.migrated, ...(ctx.server !== undefined ? { server: ctx.server } : {}) };
    case "search rebuild": {
      if (cmd.tenantId !== null && !(await services.prisma.tenant.findUnique({ where: { id: cmd.tenantId }, select: { id: true } })))
        throw new CliRefusal(`No tenant with id ${cmd.tenantId}`);
      return rebuildSearch(services, cmd.tenantId);
    }
    case "render": {
      const { tenantId, apiBase, parentId, ...request } = cmd;
      if ((request.discussionId === null) === ((request.url ?? null) === null))
        throw new CliRefusal("Name the thread with --discussion <id> or with --url <page url>: one of the two.");
      if (request.key !== null) await assertPublishableKey(services, tenantId, request.key);
      return {
        html: await renderForTenant(services, tenantId, { ...request, parentId: parentId ?? null, apiBase: apiBase ?? ctx.baseUrl }),
      };
    }
  }
}

/**
 * `render --key`: the key the printed element will send must be one of the tenant's publishable keys,
 * active now; else every reader of the page would meet 401 (a mistyped key, another site's, a revoked
 * one), found only once the page is live.
 */
async function assertPublishableKey(services: AppServices, tenantId: string, key: string): Promise<void> {
  if (!key.startsWith("pk_")) throw new CliRefusal("--key must be a publishable key (pk_…): the page shows it to every reader");
  const row = await services.prisma.apiKey.findUnique({
    where: { keyHash: hashApiKey(key) },
    select: { tenantId: true, kind: true, revokedAt: true, expiresAt: true },
  });
  if (!row || row.tenantId !== tenantId || row.kind !== "publishable") {
    throw new CliRefusal(`--key is not a publishable key of tenant ${tenantId} (see its publishable keys in the console)`);
  }
  const state = keyState(row, services.clock.now());
  if (state !== "active") throw new CliRefusal(`--key is ${state}: readers' requests with it would be refused`);
}
