// The operator CLI run inside the test's own process, for tests of what its commands do and print.
// (Apart from test/support/process.ts, which the contract suite imports: that suite imports nothing
// from src/.)
import { cliMain } from "../../src/cli/program.js";
import type { Run } from "./process.js";

/**
 * `engagement <args>` with `env`, run in this process: the CLI's own code (src/cli/program.ts, what
 * src/cli/index.ts runs on its argv) with its output and exit code collected, and no standard input.
 * No node start-up, module loading and WebAssembly compiles per command (about 1.5 s of CPU each).
 * What only a process shows (the bin, `npm run cli`, the exit code the shell sees) is tested on real
 * processes: test/cli.test.ts, test/embedded.test.ts, test/readme.test.ts.
 */
export async function runCliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await cliMain(args, {
    env,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdin: () => Promise.resolve(""),
  });
  return { code, stdout, stderr };
}
