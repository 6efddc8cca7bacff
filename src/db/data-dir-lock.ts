// Only one process may open an embedded (PGlite) data folder at a time: a lock file says who
// ("<pid> server" or "<pid> cli"). A server finding the folder held by a CLI command waits for it
// (commands are short); the CLI finding it held by a server sends its command there (src/cli/control.ts).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type LockRole = "server" | "cli";

export class DataDirInUseError extends Error {
  constructor(
    dataDir: string,
    readonly pid: number,
    readonly role: LockRole = "server",
  ) {
    super(
      `The embedded database in ${dataDir} is in use by process ${pid}. Stop that process, ` +
        `or set DATABASE_URL to use PostgreSQL, which many processes can share.`,
    );
    this.name = "DataDirInUseError";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The lock's pid and role ("<pid>" alone, as older versions wrote it, is a server). */
function readLock(path: string): { pid: number; role: LockRole } | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
  const [pidText, role] = text.split(/\s+/);
  const pid = Number(pidText);
  return Number.isInteger(pid) && pid > 0 ? { pid, role: role === "cli" ? "cli" : "server" } : null;
}

/** The live process holding the data folder's lock, or null when it is free (no lock, or a dead one's). */
export function lockHolder(dataDir: string): number | null {
  const lock = readLock(join(dataDir, "engagement.lock"));
  return lock && lock.pid !== process.pid && isAlive(lock.pid) ? lock.pid : null;
}

export function acquireDataDirLock(dataDir: string, role: LockRole = "server"): () => void {
  const path = join(dataDir, "engagement.lock");
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(path, `${process.pid} ${role}`, { flag: "wx" });
      let released = false;
      const release = () => {
        if (!released) rmSync(path, { force: true });
        released = true;
        process.removeListener("exit", release);
      };
      // a forced exit (the shutdown deadline of main.ts) still leaves no lock behind
      process.once("exit", release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const lock = readLock(path);
      if (lock && lock.pid !== process.pid && isAlive(lock.pid)) throw new DataDirInUseError(dataDir, lock.pid, lock.role);
      rmSync(path, { force: true }); // stale lock of a dead process
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}

/** As acquireDataDirLock, but a folder held by a CLI command is waited for (up to `waitMs`). */
export async function acquireDataDirLockWaiting(dataDir: string, role: LockRole, waitMs: number): Promise<() => void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return acquireDataDirLock(dataDir, role);
    } catch (err) {
      if (!(err instanceof DataDirInUseError) || err.role !== "cli" || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
