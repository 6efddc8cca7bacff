// What a test run started and left behind. The global setup marks the run: every process started
// under it inherits RUN_MARK in its environment (workers, servers, CLI commands, browsers), and
// /proc/<pid>/environ keeps the environment a process was started with. PostgreSQL, Redis and
// PgBouncer write their process titles over that memory, so whoever starts one also records its pid
// in the run's ledger (`recordSpawned`). At the end, a process that still carries the mark, or a
// recorded one still alive (the same pid and start time), is one the run left behind; the machine's
// own PostgreSQL and Redis are neither. Linux only; elsewhere nothing is found.
import { appendFileSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const RUN_MARK = "ENGAGEMENT_TEST_RUN";

export interface Leftover {
  pid: number;
  /** R running, S sleeping, T stopped (SIGSTOP), Z zombie… */
  state: string;
  command: string;
}

const ledgerOf = (runId: string) => join(tmpdir(), `engagement-test-run-${runId}.pids`);

/** The fields of /proc/<pid>/stat after the command's name: [0] the state, [19] the start time. */
function statOf(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Records a process the run started whose environment may not keep the mark (a server that sets its process title). */
export function recordSpawned(pid: number | undefined): void {
  const runId = process.env[RUN_MARK];
  const start = pid ? statOf(pid)?.[19] : undefined;
  if (runId && start) appendFileSync(ledgerOf(runId), `${pid} ${start}\n`);
}

/** The recorded processes of the run: pid → start time. */
function ledger(runId: string): Map<number, string> {
  try {
    const lines = readFileSync(ledgerOf(runId), "utf8").split("\n").filter(Boolean);
    return new Map(lines.map((l) => l.split(" ")).map(([pid, start]) => [Number(pid), start!]));
  } catch {
    return new Map();
  }
}

function leftoverOf(pid: number, mark: string, recorded: Map<number, string>): Leftover | null {
  try {
    const stat = statOf(pid);
    if (!stat) return null;
    const marked = recorded.get(pid) === stat[19] || readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(mark);
    if (!marked) return null;
    const command = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").filter(Boolean).join(" ");
    return { pid, state: stat[0] ?? "?", command: command.trim().slice(0, 200) };
  } catch {
    return null; // gone, or not ours to read (another user's process we did not start)
  }
}

/** The processes still carrying this run's mark (`${RUN_MARK}=<id>`), but for `except` (the runner itself). */
export function leftoverProcesses(runId: string, except: readonly number[] = [process.pid]): Leftover[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const mark = `${RUN_MARK}=${runId}`;
  const recorded = ledger(runId);
  return entries
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => !except.includes(pid))
    .map((pid) => leftoverOf(pid, mark, recorded))
    .filter((p): p is Leftover => p !== null && p.state !== "Z" && p.state !== "X");
}

/** Waits up to `ms` for the run's processes to end (a worker finishing its exit), then ends what is left: a stopped one is continued and killed. */
export async function endLeftovers(runId: string, ms: number): Promise<Leftover[]> {
  const until = Date.now() + ms;
  let left = leftoverProcesses(runId);
  while (left.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    left = leftoverProcesses(runId);
  }
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGCONT");
      process.kill(p.pid, "SIGKILL");
    } catch {
      /* gone meanwhile */
    }
  }
  rmSync(ledgerOf(runId), { force: true });
  return left;
}
