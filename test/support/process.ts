// Runs a command to completion and collects its output: the CLI tests and the contract suite use it.
import { spawn, type ChildProcess } from "node:child_process";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runProcess(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The operator CLI as the tests run it: src/cli/index.ts as built by the run's global setup (the same
 * `npm run build` that `npm start` runs), under plain node. bin/engagement.js runs the same file through
 * tsx, which costs about 1.5 s of CPU more at every start; test/cli.test.ts runs the bin and
 * `npm run cli` themselves, and the README test runs `npm run cli` as the README says.
 */
export const CLI = "dist/cli/index.js";

/**
 * V8 flags for the short-lived node processes the tests start on dist/ (CLI commands, the embedded
 * test's servers, the crash test's worker): V8's baseline tiers only, no TurboFan for their JavaScript
 * (--no-opt) or for the WebAssembly they load (--liftoff-only: Prisma's query compiler, the schema
 * engine, PGlite's PostgreSQL). A process that lives a few seconds spends more CPU on those optimising
 * compiles than they give back: about 40 % of a CLI command's CPU, 4 s of the 11 s of a PGlite initdb.
 * The code and what it does are the same in every tier.
 */
export const NODE_FLAGS = ["--no-opt", "--liftoff-only"];

/** `engagement <args>` as a child process with `env`. */
export const runCli = (args: string[], env: NodeJS.ProcessEnv): Promise<Run> =>
  runProcess(process.execPath, [...NODE_FLAGS, CLI, ...args], env);

/**
 * A test's child process (a script under test/support, run with `flags`: NODE_FLAGS by default) that
 * prints `ready <word>` once it serves: the process and that word. It is killed if not ready within
 * `timeoutMs`; its stderr is in the error when it exits first.
 */
export function spawnReady(
  script: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  flags: readonly string[] = NODE_FLAGS,
): Promise<{ proc: ChildProcess; ready: string }> {
  const proc = spawn(process.execPath, [...flags, script], { env, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /ready (\S+)/.exec(out);
      if (m) resolve({ proc, ready: m[1]! });
    });
    proc.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    proc.once("exit", (code) => reject(new Error(`the child process exited (${code}): ${err}`)));
    setTimeout(() => {
      proc.kill("SIGKILL"); // not left running against a database the file drops
      reject(new Error(`the child process is not ready: ${err}`));
    }, timeoutMs).unref();
  });
}

/**
 * Stops a child process: SIGTERM, then SIGKILL if it has not exited within `graceMs` (a guard, never
 * a wait: it resolves as soon as the child exits).
 */
export function stopChild(proc: ChildProcess, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const guard = setTimeout(() => proc.kill("SIGKILL"), graceMs);
    proc.once("exit", () => {
      clearTimeout(guard);
      resolve();
    });
    proc.kill("SIGTERM");
  });
}
