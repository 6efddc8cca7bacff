// The embedded data folder's lock: a server waits for a CLI command holding it, refuses at once a
// folder held by a server (or by a version that wrote the pid alone), and takes over a dead one's.
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireDataDirLockWaiting, DataDirInUseError, lockHolder } from "../../src/db/data-dir-lock.js";

const dir = mkdtempSync(join(tmpdir(), "engagement-lock-"));
const lock = join(dir, "engagement.lock");
const live = process.ppid; // a live process other than this one
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("data dir lock", () => {
  it("a server waits for a CLI command's lock and takes the folder once it is released", async () => {
    writeFileSync(lock, `${live} cli`);
    expect(lockHolder(dir)).toBe(live);
    setTimeout(() => rmSync(lock), 150);
    const started = Date.now();
    const release = await acquireDataDirLockWaiting(dir, "server", 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid} server`);
    release();
    expect(lockHolder(dir)).toBeNull();
  });

  it("a CLI command that keeps the folder past the wait is in use", async () => {
    writeFileSync(lock, `${live} cli`);
    const err = await acquireDataDirLockWaiting(dir, "server", 200).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect((err as DataDirInUseError).role).toBe("cli");
    rmSync(lock);
  });

  it("a server's lock (or a pid alone) is refused at once; a dead process's is taken over", async () => {
    for (const text of [`${live} server`, `${live}`]) {
      writeFileSync(lock, text);
      const started = Date.now();
      await expect(acquireDataDirLockWaiting(dir, "server", 5_000)).rejects.toThrow(`in use by process ${live}`);
      expect(Date.now() - started).toBeLessThan(1_000);
    }
    writeFileSync(lock, "999999999 server"); // no such process
    expect(lockHolder(dir)).toBeNull();
    const release = await acquireDataDirLockWaiting(dir, "cli", 0);
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid} cli`);
    release();
  });
});
