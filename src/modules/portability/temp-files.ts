// The temporary files POST /api/v1/imports streams an upload to (src/modules/portability/http-routes.ts):
// `engagement-import-<uuid>` in the OS temporary directory, removed when the import ends. One a
// process left behind (a crash, a kill) is removed when a server starts.
//
// Several servers may share a machine and its temporary directory, so a file is only removed when
// no live process can still be using it. That is told the way import-jobs.ts tells a lost import:
// the process that owns a file touches it (its mtime) every HEARTBEAT_MS for as long as it uploads
// or imports it, so a file untouched for STALE_MS has lost its process. A file of another user, or
// anything that is not a plain file, is left alone.
import { lstat, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { HEARTBEAT_MS, STALE_MS } from "./engine/import-jobs.js";

export const TEMP_FILE_PREFIX = "engagement-import-";

/** A new temporary file's path (not created). */
export const newTempFile = (dir = tmpdir()) => join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`);

/** Touches `file` every HEARTBEAT_MS until the returned function is called. */
export function keepFresh(file: string): () => void {
  const timer = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Removes the import files in `dir` untouched for STALE_MS (by wall-clock time); answers their names. */
export async function removeStaleTempFiles(dir = tmpdir(), nowMs = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(TEMP_FILE_PREFIX)) continue;
    const path = join(dir, name);
    try {
      const st = await lstat(path);
      if (!st.isFile() || (process.getuid && st.uid !== process.getuid()) || nowMs - st.mtimeMs <= STALE_MS) continue;
      await rm(path, { force: true });
      removed.push(name);
    } catch {
      /* gone meanwhile, or not ours to remove */
    }
  }
  return removed;
}
