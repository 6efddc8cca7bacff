// The import resource (GET /api/v1/imports, GET /api/v1/imports/{id}): a row per import in
// `imports`, its progress written as it runs and its summary when it ends. What the API answers is
// `importDto`. A running import's row is touched every HEARTBEAT_MS by the process that runs it
// (import-run.ts); one not touched for STALE_MS lost that process (a crash, a kill) and is answered
// failed — what it wrote stays, and running the file again continues.
import type { Import } from "../../../generated/prisma/client.js";
import { newId } from "../../../lib/ids.js";
import { newestFirstPage, type Page, type PageArgs } from "../../../lib/pagination.js";
import type { ImportChoices, KeptImportChoices } from "../source.js";
import type { ImportProgress, ImportSummary } from "./importer.js";
import type { ScopedPrisma } from "../../../db/tenant-scope.js";

/**
 * The imports table of a tenant's store (`db(ctx)` in the HTTP routes, `app.stores(job.tenantId)` in
 * the import run), whose every query the tenant scope filters.
 */
type ImportRows = Pick<ScopedPrisma, "import">;

/** How an import was started: over the API (a key or the admin token), from the console, by the CLI. */
export type ImportVia = "api" | "console" | "cli";
const VIAS: readonly ImportVia[] = ["api", "console", "cli"];

export async function createImportJob(
  prisma: ImportRows,
  input: ImportChoices & { tenantId: string; bytesTotal: number | null; now: Date; via: ImportVia },
): Promise<Import> {
  const options: KeptImportChoices & { via: ImportVia } = {
    idFrom: input.idFrom,
    onError: input.onError,
    keepEmails: input.keepEmails,
    site: input.site,
    via: input.via,
  };
  return prisma.import.create({
    data: {
      id: newId("imp"),
      tenantId: input.tenantId,
      format: input.format,
      options,
      bytesTotal: input.bytesTotal === null ? null : BigInt(input.bytesTotal),
      createdAt: input.now,
      updatedAt: input.now,
    },
  });
}

const countsOf = (p: ImportProgress) => ({
  threads: p.threads,
  comments: p.comments,
  readers: p.readers,
  reactions: p.reactions,
  unchanged: p.unchanged,
  skipped: p.skipped,
  errors: p.errors.map((e) => ({ position: e.position, message: e.message })),
});

export async function recordProgress(prisma: ImportRows, id: string, p: ImportProgress, bytesRead: number, now: Date): Promise<void> {
  await prisma.import.update({ where: { id }, data: { ...countsOf(p), bytesRead: BigInt(bytesRead), updatedAt: now } });
}

export async function recordEnd(prisma: ImportRows, id: string, s: ImportSummary, bytesRead: number, now: Date): Promise<void> {
  await prisma.import.update({
    where: { id },
    data: { ...countsOf(s), state: s.state, failure: s.failure, bytesRead: BigInt(bytesRead), updatedAt: now, finishedAt: now },
  });
}

export async function recordFailure(prisma: ImportRows, id: string, failure: string, now: Date): Promise<void> {
  await prisma.import.update({ where: { id }, data: { state: "failed", failure, updatedAt: now, finishedAt: now } });
}

/** How often a running import's row is touched, and after how long without one it is taken for lost. */
export const HEARTBEAT_MS = 10_000;
export const STALE_MS = 60_000;
export const INTERRUPTED =
  "interrupted: the server running it stopped before it ended; what it wrote is kept, and importing the file again continues";

/** The process running the import is alive: its row says so. */
export async function touchImportJob(prisma: ImportRows, id: string, now: Date): Promise<void> {
  await prisma.import.updateMany({ where: { id, state: "running" }, data: { updatedAt: now } });
}

/** Running imports of the tenant that nobody has touched for STALE_MS end failed (interrupted). */
async function endLostImports(prisma: ImportRows, tenantId: string, now: Date): Promise<void> {
  await prisma.import.updateMany({
    where: { tenantId, state: "running", updatedAt: { lt: new Date(now.getTime() - STALE_MS) } },
    data: { state: "failed", failure: INTERRUPTED, finishedAt: now },
  });
}

export async function findImportJob(prisma: ImportRows, tenantId: string, id: string, now: Date): Promise<Import | null> {
  await endLostImports(prisma, tenantId, now);
  return prisma.import.findFirst({ where: { id, tenantId } });
}

/** The tenant's imports, newest first (GET /api/v1/imports). */
export async function listImportJobs(prisma: ImportRows, tenantId: string, args: PageArgs, now: Date): Promise<Page<Import>> {
  await endLostImports(prisma, tenantId, now);
  return newestFirstPage(args, (q) => prisma.import.findMany({ ...q, where: { AND: [{ tenantId }, q.where] } }));
}

/** The choices a job keeps (createImportJob wrote them; keepEmails off where a row has none). */
export function keptChoicesOf(j: Import): KeptImportChoices {
  const options = (j.options ?? {}) as Partial<KeptImportChoices>;
  return {
    idFrom: options.idFrom ?? "identifier",
    onError: options.onError ?? "skip",
    keepEmails: options.keepEmails ?? false,
    site: options.site ?? null,
  };
}

/** How the job was started (kept with its choices); null for one recorded before that was kept. */
function viaOf(j: Import): ImportVia | null {
  const via = (j.options as { via?: unknown } | null)?.via;
  return VIAS.find((v) => v === via) ?? null;
}

export function importDto(j: Import) {
  return {
    id: j.id,
    format: j.format,
    state: j.state,
    via: viaOf(j),
    ...keptChoicesOf(j),
    bytesRead: Number(j.bytesRead),
    bytesTotal: j.bytesTotal === null ? null : Number(j.bytesTotal),
    threads: j.threads,
    comments: j.comments,
    readers: j.readers,
    reactions: j.reactions,
    unchanged: j.unchanged,
    skipped: j.skipped,
    errors: (Array.isArray(j.errors) ? j.errors : []) as { position: string; message: string }[],
    failure: j.failure,
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
}

export type ImportDto = ReturnType<typeof importDto>;
