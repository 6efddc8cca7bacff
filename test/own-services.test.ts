// A test's own PostgreSQL and Redis (test/support/own-services.ts) leave nothing behind, paused or
// not; and the run's end check (test/support/leftover-processes.ts) finds a process the run left,
// stopped or running, and ends it.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startOwnPostgres, startOwnRedis } from "./support/own-services.js";
import { endLeftovers, leftoverProcesses, RUN_MARK } from "./support/leftover-processes.js";

const runId = process.env[RUN_MARK]!;
const leftOf = (port: number) => leftoverProcesses(runId).filter((p) => p.command.includes(String(port)));

describe("a test's own services", () => {
  it("carry the run's mark while they run, and leave no process once stopped, even stopped while paused", async () => {
    expect(runId).toBeTruthy();
    const pg = await startOwnPostgres();
    const redis = await startOwnRedis();
    const redisPort = Number(new URL(redis.url).port);
    try {
      expect(leftOf(pg.port).length).toBeGreaterThan(0);
      expect(leftOf(redisPort).length).toBe(1);
      pg.pause();
      redis.pause();
      // SIGSTOP is delivered asynchronously: each process shows stopped a moment later
      await expect.poll(() => leftOf(pg.port).every((p) => p.state === "T")).toBe(true);
    } finally {
      await pg.stop();
      await redis.stop();
    }
    expect(leftOf(pg.port)).toEqual([]);
    expect(leftOf(redisPort)).toEqual([]);
  }, 60_000);
});

describe("the run's end check", () => {
  it("lists a process started under the run's mark, stopped or not, and ends it", async () => {
    const id = `check-${process.pid}-${Date.now()}`;
    const child = spawn("sleep", ["60"], { env: { ...process.env, [RUN_MARK]: id }, stdio: "ignore" });
    const exited = new Promise((r) => child.once("exit", r));
    await expect.poll(() => leftoverProcesses(id).length).toBe(1);
    child.kill("SIGSTOP");
    await expect.poll(() => leftoverProcesses(id)[0]?.state).toBe("T");
    expect(leftoverProcesses(id)[0]!.command).toBe("sleep 60");
    const ended = await endLeftovers(id, 200);
    expect(ended.map((p) => p.pid)).toEqual([child.pid]);
    await exited;
    expect(leftoverProcesses(id)).toEqual([]);
  });
});
