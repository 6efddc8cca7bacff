// `engagement import` and `engagement export` (contract section 16). They stream (a file or standard
// input in; NDJSON out on standard output), so unlike the commands of src/cli/commands.ts they run
// in this process only, on the database itself; in embedded mode while a server holds the data
// folder they refuse and name the HTTP routes instead. The import is recorded like one made through
// the API (GET /api/v1/imports/{id} shows it).
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { once } from "node:events";
import { Command, InvalidArgumentError } from "commander";
import { SingleBar, Presets } from "cli-progress";
import { pino } from "pino";
import { loadConfig } from "../config.js";
import { createRuntime } from "../runtime.js";
import { lockHolder } from "../db/data-dir-lock.js";
import { createImportJob } from "../modules/portability/engine/import-jobs.js";
import { runImportJob } from "../modules/portability/engine/import-run.js";
import { exportLines, exportRecords } from "../modules/portability/export.js";
import { ID_FROM, IMPORT_FORMATS, type ImportChoices } from "../modules/portability/source.js";
import type { ImportProgress } from "../modules/portability/engine/importer.js";

const quietLog = pino({ level: "silent" });

/** Where the commands read their settings and write their output (default: this process's own). */
export interface PortabilityIo {
  env: NodeJS.ProcessEnv;
  /** may answer false when the stream wants a pause (process.stdout.write): the export then waits for "drain" */
  stdout(text: string): unknown;
}

const processIo: PortabilityIo = { env: process.env, stdout: (text) => process.stdout.write(text) };

async function openServices(io: PortabilityIo) {
  const config = loadConfig(io.env);
  if (config.embedded) {
    const pid = lockHolder(config.DATA_DIR);
    if (pid !== null) {
      throw new InvalidArgumentError(
        `${config.DATA_DIR} is held by process ${pid} (a running server): use POST /api/v1/imports or GET /api/v1/export on it, or stop it first`,
      );
    }
  }
  const rt = await createRuntime(config, { log: quietLog, lockRole: "cli" });
  return rt;
}

async function requireTenant(rt: Awaited<ReturnType<typeof openServices>>, tenantId: string) {
  const t = await rt.services.prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
  if (!t) throw new InvalidArgumentError(`No tenant with id ${tenantId}`);
}

const choice =
  <T extends string>(name: string, values: readonly T[]) =>
  (v: string): T => {
    if (!(values as readonly string[]).includes(v)) throw new InvalidArgumentError(`${name} must be one of ${values.join(", ")}`);
    return v as T;
  };

export function addPortabilityCommands(program: Command, io: PortabilityIo = processIo): void {
  program
    .command("import")
    .description(
      "Import comments from a Disqus XML export, a WordPress WXR export, this service's NDJSON export, a remark42 backup, a Commento export, an isso database, GitHub's comments JSON or the generic JSON format (idempotent; docs/import.md)",
    )
    .argument("<file>", "the file, or - for standard input")
    .requiredOption("--tenant <id>", "tenant id")
    .requiredOption("--format <format>", `one of ${IMPORT_FORMATS.join(", ")}`, choice("--format", IMPORT_FORMATS))
    .option(
      "--id-from <what>",
      "discussion ids from the thread's identifier, its URL or its URL's path",
      choice("--id-from", ID_FROM),
      "identifier",
    )
    .option(
      "--on-error <mode>",
      "a bad record is skipped (and reported) or stops the import",
      choice("--on-error", ["skip", "stop"]),
      "skip",
    )
    .option("--keep-emails", "keep authors' email addresses on their readers (for reply emails); by default none is stored")
    .option("--json", "print exactly one JSON object: the summary")
    .action(async (file: string, opts: Omit<ImportChoices, "keepEmails"> & { tenant: string; keepEmails?: boolean; json?: boolean }) => {
      const size = file === "-" ? null : (await stat(file)).size;
      const rt = await openServices(io);
      try {
        await requireTenant(rt, opts.tenant);
        const started = performance.now();
        const job = await createImportJob(rt.services.scoped(opts.tenant), {
          tenantId: opts.tenant,
          format: opts.format,
          idFrom: opts.idFrom,
          onError: opts.onError,
          keepEmails: opts.keepEmails ?? false,
          bytesTotal: size,
          now: rt.services.clock.now(),
        });
        const bar = !opts.json && process.stderr.isTTY ? progressBar(size) : null;
        const input = file === "-" ? process.stdin : createReadStream(file, { highWaterMark: 256 * 1024 });
        const summary = await runImportJob(rt.services, job, input, {
          onProgress: (p, bytes) => bar?.update(size === null ? p.comments : bytes, payloadOf(p)),
        });
        bar?.stop();
        const seconds = Math.round((performance.now() - started) / 100) / 10;
        const { errors, ...counts } = summary;
        if (opts.json) {
          io.stdout(`${JSON.stringify({ importId: job.id, ...counts, errors, seconds })}\n`);
        } else {
          io.stdout(
            `Import ${job.id} ${summary.state} in ${seconds} s: ${counts.threads} threads, ${counts.comments} comments, ` +
              `${counts.readers} readers, ${counts.reactions} reactions created; ${counts.unchanged} already there; ${counts.skipped} skipped\n`,
          );
          for (const e of errors.slice(0, 20)) io.stdout(`  ${e.position}: ${e.message}\n`);
          if (errors.length > 20) io.stdout(`  … ${errors.length - 20} more (GET /api/v1/imports/${job.id})\n`);
        }
        // a stopped import exits 1 (its summary is printed above)
        if (summary.failure)
          throw new Error(
            /^line \d/.test(summary.failure)
              ? `import ${job.id} stopped at ${summary.failure}`
              : `import ${job.id} failed: ${summary.failure}`,
          );
      } finally {
        await rt.close();
      }
    });

  program
    .command("export")
    .description("Export the tenant's discussions, readers, comments and reactions as NDJSON on standard output")
    .requiredOption("--tenant <id>", "tenant id")
    .option("--since <iso>", "only what changed since this time (ISO 8601)")
    .action(async (opts: { tenant: string; since?: string }) => {
      const since = opts.since === undefined ? null : new Date(opts.since);
      if (since && Number.isNaN(since.getTime())) throw new InvalidArgumentError("--since must be an ISO 8601 date-time");
      const rt = await openServices(io);
      try {
        await requireTenant(rt, opts.tenant);
        const records = exportRecords(rt.services.stores(opts.tenant).sql, { since, now: rt.services.clock.now() });
        for await (const chunk of exportLines(records)) {
          if (io.stdout(chunk) === false) await once(process.stdout, "drain");
        }
      } finally {
        await rt.close();
      }
    });
}

const payloadOf = (p: ImportProgress) => ({ threads: p.threads, comments: p.comments, skipped: p.skipped });

function progressBar(size: number | null): SingleBar {
  const bar = new SingleBar(
    {
      stream: process.stderr,
      format:
        size === null
          ? "importing | {comments} comments, {threads} threads, {skipped} skipped"
          : "{bar} {percentage}% | {comments} comments, {threads} threads, {skipped} skipped | {eta_formatted}",
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(size ?? 0, 0, { threads: 0, comments: 0, skipped: 0 });
  return bar;
}
