// `engagement import` and `engagement export` (contract section 16). They stream (a file or standard
// input in; NDJSON out on standard output): on the database itself, in this process, or in embedded
// mode while a server holds the data folder, through that server's control socket (POST /import with
// the file as the body, GET /export: src/cli/control-server.ts), as the other commands go through it.
// The import is recorded like one made through the API (GET /api/v1/imports/{id} shows it).
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { once } from "node:events";
import { request } from "node:http";
import type { Readable } from "node:stream";
import { Command, InvalidArgumentError } from "commander";
import { SingleBar, Presets } from "cli-progress";
import { pino } from "pino";
import { loadConfig } from "../config.js";
import { createRuntime } from "../runtime.js";
import type { AppServices } from "../context/services.js";
import { lockHolder } from "../db/data-dir-lock.js";
import { createImportJob } from "../modules/portability/engine/import-jobs.js";
import { runImportJob } from "../modules/portability/engine/import-run.js";
import { exportLines, exportRecords } from "../modules/portability/export.js";
import { ID_FROM, IMPORT_FORMATS, NEEDS_SITE, siteOriginOf, type ImportChoices } from "../modules/portability/source.js";
import type { ImportProgress, ImportSummary } from "../modules/portability/engine/importer.js";
import { readControlFile, type ControlFile } from "./control.js";

const quietLog = pino({ level: "silent" });

/** Where the commands read their settings and write their output (default: this process's own). */
export interface PortabilityIo {
  env: NodeJS.ProcessEnv;
  /** may answer false when the stream wants a pause (process.stdout.write): the export then waits for "drain" */
  stdout(text: string): unknown;
}

const processIo: PortabilityIo = { env: process.env, stdout: (text) => process.stdout.write(text) };

/**
 * Where the commands run: the running embedded server holding the data folder (its control file),
 * or this process on the database (`local`). A folder held by a process without a control socket
 * (another CLI command, a server starting) is refused.
 */
function placeOf(io: PortabilityIo): { server: ControlFile } | { local: ReturnType<typeof loadConfig> } {
  const config = loadConfig(io.env);
  if (config.embedded) {
    const pid = lockHolder(config.DATA_DIR);
    if (pid !== null) {
      const control = readControlFile(config.DATA_DIR);
      if (control && control.pid === pid) return { server: control };
      throw new InvalidArgumentError(`${config.DATA_DIR} is held by process ${pid}: wait for it to end, or stop it first`);
    }
  }
  return { local: config };
}

const openServices = (config: ReturnType<typeof loadConfig>) => createRuntime(config, { log: quietLog, lockRole: "cli" });

/** The refusal of a tenant that does not exist (the operator's message). */
export async function requireTenant(services: Pick<AppServices, "prisma">, tenantId: string): Promise<void> {
  const t = await services.prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
  if (!t) throw new InvalidArgumentError(`No tenant with id ${tenantId}`);
}

/** `--site` as the import keeps it: the site's origin; required for a format whose threads name their page by path. */
export function siteOf(format: string | null | undefined, site: string | null | undefined): string | null {
  if (site) {
    const origin = siteOriginOf(site);
    if (!origin) throw new InvalidArgumentError("--site must be the site's http(s) origin, e.g. https://blog.example");
    return origin;
  }
  if (format && NEEDS_SITE.has(format as never))
    throw new InvalidArgumentError(
      `--site is required for ${format}: the site's origin its pages' paths are on, e.g. https://blog.example`,
    );
  return null;
}

/** What an import through the CLI is asked: the choices, the tenant, the file's size when known. */
export type CliImport = ImportChoices & { tenant: string; bytesTotal: number | null };

/** The CLI's import on a database's services (this process's, or the server's behind its control socket). */
export async function importWith(
  services: AppServices,
  opts: CliImport,
  input: Readable | AsyncIterable<Uint8Array | string>,
  onProgress?: (p: ImportProgress, bytes: number) => void,
): Promise<{ importId: string; summary: ImportSummary }> {
  await requireTenant(services, opts.tenant);
  const job = await createImportJob(services.scoped(opts.tenant), {
    tenantId: opts.tenant,
    format: opts.format,
    idFrom: opts.idFrom,
    onError: opts.onError,
    keepEmails: opts.keepEmails,
    site: opts.site,
    bytesTotal: opts.bytesTotal,
    via: "cli",
    now: services.clock.now(),
  });
  const summary = await runImportJob(services, job, input, onProgress ? { onProgress } : {});
  return { importId: job.id, summary };
}

/** The CLI's export on a database's services: NDJSON chunks to `write`, which answers false to pause until `drained`. */
export async function exportWith(
  services: AppServices,
  tenant: string,
  since: Date | null,
  write: (chunk: string) => unknown,
  drained: () => Promise<unknown>,
): Promise<void> {
  await requireTenant(services, tenant);
  for await (const chunk of exportLines(exportRecords(services.stores(tenant).sql, { since, now: services.clock.now() }))) {
    if (write(chunk) === false) await drained();
  }
}

/** One request to the server's control socket: its answer's status, and its body as a stream. */
function controlRequest(
  control: ControlFile,
  method: string,
  path: string,
  body?: Readable,
): Promise<{ status: number; body: AsyncIterable<Buffer> }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: control.socket, path, method, headers: { authorization: `Bearer ${control.token}` } }, (res) =>
      resolve({ status: res.statusCode ?? 0, body: res }),
    );
    req.on("error", reject);
    if (body) {
      body.on("error", (err) => req.destroy(err));
      body.pipe(req);
    } else req.end();
  });
}

async function textOf(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** A refusal the server answered (its message), as the CLI's own refusals read. */
async function refusalOf(res: { status: number; body: AsyncIterable<Buffer> }, control: ControlFile): Promise<Error> {
  const text = await textOf(res.body);
  try {
    const answer = JSON.parse(text) as { error?: unknown };
    if (typeof answer.error === "string") return new InvalidArgumentError(answer.error);
  } catch {
    /* below */
  }
  return new Error(`The running server (process ${control.pid}) answered HTTP ${res.status}`);
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
      "Import comments from a Disqus XML export, a WordPress WXR export, this service's NDJSON export, a remark42 backup, a Commento export, an isso database, GitHub's comments JSON, the generic JSON format, Artalk's Artrans, a Twikoo export or a Cusdis database, its SQLite file or a pg_dump (idempotent; docs/import.md)",
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
    .option(
      "--site <origin>",
      "the site's origin, against which a thread's page path becomes its URL (required for isso, and for Artalk, Twikoo and Cusdis pages named by path only)",
    )
    .option("--json", "print exactly one JSON object: the summary")
    .action(
      async (
        file: string,
        opts: Omit<ImportChoices, "keepEmails" | "site"> & { tenant: string; keepEmails?: boolean; site?: string; json?: boolean },
      ) => {
        const size = file === "-" ? null : (await stat(file)).size;
        const place = placeOf(io);
        const started = performance.now();
        const choices: CliImport = {
          tenant: opts.tenant,
          format: opts.format,
          idFrom: opts.idFrom,
          onError: opts.onError,
          keepEmails: opts.keepEmails ?? false,
          site: siteOf(opts.format, opts.site),
          bytesTotal: size,
        };
        const input = () => (file === "-" ? process.stdin : createReadStream(file, { highWaterMark: 256 * 1024 }));
        let done: { importId: string; summary: ImportSummary };
        if ("server" in place) {
          const query = new URLSearchParams({
            tenant: choices.tenant,
            format: choices.format,
            idFrom: choices.idFrom,
            onError: choices.onError,
            keepEmails: String(choices.keepEmails),
            ...(choices.site ? { site: choices.site } : {}),
            ...(size === null ? {} : { bytesTotal: String(size) }),
          });
          const res = await controlRequest(place.server, "POST", `/import?${query}`, input());
          if (res.status !== 200) throw await refusalOf(res, place.server);
          done = JSON.parse(await textOf(res.body)) as typeof done;
        } else {
          const rt = await openServices(place.local);
          try {
            const bar = !opts.json && process.stderr.isTTY ? progressBar(size) : null;
            done = await importWith(rt.services, choices, input(), (p, bytes) =>
              bar?.update(size === null ? p.comments : bytes, payloadOf(p)),
            );
            bar?.stop();
          } finally {
            await rt.close();
          }
        }
        const { importId, summary } = done;
        const seconds = Math.round((performance.now() - started) / 100) / 10;
        const { errors, ...counts } = summary;
        if (opts.json) {
          io.stdout(`${JSON.stringify({ importId, ...counts, errors, seconds })}\n`);
        } else {
          io.stdout(
            `Import ${importId} ${summary.state} in ${seconds} s: ${counts.threads} threads, ${counts.comments} comments, ` +
              `${counts.readers} readers, ${counts.reactions} reactions created; ${counts.unchanged} already there; ${counts.skipped} skipped\n`,
          );
          for (const e of errors.slice(0, 20)) io.stdout(`  ${e.position}: ${e.message}\n`);
          if (errors.length > 20) io.stdout(`  … ${errors.length - 20} more (GET /api/v1/imports/${importId})\n`);
        }
        // a stopped import exits 1 (its summary is printed above)
        if (summary.failure)
          throw new Error(
            /^line \d/.test(summary.failure)
              ? `import ${importId} stopped at ${summary.failure}`
              : `import ${importId} failed: ${summary.failure}`,
          );
      },
    );

  program
    .command("export")
    .description(
      "Export the tenant's discussions, readers, comments, reactions, votes and page reactions as NDJSON on standard output (docs/import-export.md)",
    )
    .requiredOption("--tenant <id>", "tenant id")
    .option("--since <iso>", "only what changed since this time (ISO 8601)")
    .action(async (opts: { tenant: string; since?: string }) => {
      const since = opts.since === undefined ? null : new Date(opts.since);
      if (since && Number.isNaN(since.getTime())) throw new InvalidArgumentError("--since must be an ISO 8601 date-time");
      const place = placeOf(io);
      const write = (chunk: string) => io.stdout(chunk);
      const drained = () => once(process.stdout, "drain");
      if ("server" in place) {
        const query = new URLSearchParams({ tenant: opts.tenant, ...(since ? { since: since.toISOString() } : {}) });
        const res = await controlRequest(place.server, "GET", `/export?${query}`);
        if (res.status !== 200) throw await refusalOf(res, place.server);
        // a character split between two chunks is decoded whole
        const decoder = new TextDecoder("utf-8");
        for await (const chunk of res.body) if (write(decoder.decode(chunk, { stream: true })) === false) await drained();
        write(decoder.decode());
        return;
      }
      const rt = await openServices(place.local);
      try {
        await exportWith(rt.services, opts.tenant, since, write, drained);
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
