// One import run as a job: the file read as a stream (its bytes counted for the progress), the
// import (src/modules/portability/engine/importer.ts), its progress and end written to its `imports` row
// (import-jobs.ts). The API's background runs and the CLI both go through here.
import type { AppServices } from "../../../context/services.js";
import type { Import } from "../../../generated/prisma/client.js";
import { knownFailure } from "../../../http/problem.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { HEARTBEAT_MS, keptChoicesOf, recordEnd, recordFailure, recordProgress, touchImportJob } from "./import-jobs.js";
import { runImport, type ImportProgress, type ImportSummary } from "./importer.js";
import type { ImportFormat } from "../source.js";

export interface RunHooks {
  signal?: AbortSignal;
  /** told with the counts and the bytes read so far (the CLI's progress bar) */
  onProgress?: (p: ImportProgress, bytesRead: number) => void;
  batchSize?: number;
}

/** Counts the bytes that pass. */
export function counted(input: AsyncIterable<Uint8Array | string>): { stream: AsyncIterable<Uint8Array | string>; bytes: () => number } {
  let n = 0;
  return {
    bytes: () => n,
    stream: (async function* () {
      for await (const chunk of input) {
        n += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
        yield chunk;
      }
    })(),
  };
}

/** Runs `job` over `input`; a failure of the database ends the job failed (and is thrown). */
export async function runImportJob(
  app: AppServices,
  job: Import,
  input: AsyncIterable<Uint8Array | string>,
  hooks: RunHooks = {},
): Promise<ImportSummary> {
  const source = counted(input);
  const rows = app.stores(job.tenantId).prisma;
  // the row says the import is alive while it runs, recount included (import-jobs.ts)
  const heartbeat = setInterval(() => {
    touchImportJob(rows, job.id, app.clock.now()).catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    const tenant = await tenantRow(app, job.tenantId);
    const summary = await runImport(app.sql, source.stream, {
      tenantId: job.tenantId,
      maxBodyLength: resolveSettings(tenant?.settings).maxBodyLength,
      formatting: resolveSettings(tenant?.settings).formatting,
      format: job.format as ImportFormat,
      ...keptChoicesOf(job),
      now: app.clock.now(),
      ...(hooks.batchSize ? { batchSize: hooks.batchSize } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      onProgress: async (p) => {
        hooks.onProgress?.(p, source.bytes());
        await recordProgress(rows, job.id, p, source.bytes(), app.clock.now());
      },
    });
    await recordEnd(rows, job.id, summary, source.bytes(), app.clock.now());
    hooks.onProgress?.(summary, source.bytes());
    return summary;
  } catch (err) {
    const known = knownFailure(err);
    await recordFailure(rows, job.id, known ? known.detail : "the import failed on our side; it has been logged", app.clock.now()).catch(
      () => undefined,
    );
    throw err;
  } finally {
    clearInterval(heartbeat);
  }
}
