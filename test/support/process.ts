// Runs a command to completion and collects its output: the CLI tests and the contract suite use it.
import { spawn } from "node:child_process";

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

/** `engagement <args>` as a child process with `env`. */
export const runCli = (args: string[], env: NodeJS.ProcessEnv): Promise<Run> => runProcess(process.execPath, [CLI, ...args], env);
