// Only one process may open an embedded (PGlite) data folder at a time: a pid lock file says who.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
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

export function acquireDataDirLock(dataDir: string): () => void {
  const path = join(dataDir, "engagement.lock");
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(path, String(process.pid), { flag: "wx" });
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
      const pid = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirInUseError(dataDir, pid);
      }
      rmSync(path, { force: true }); // stale lock of a dead process
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}
