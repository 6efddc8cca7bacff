// The `engagement` CLI as a process: runs the command line it was given (src/cli/program.ts) on its
// own environment, standard input and output, and exits with the command's code.
import { cliMain } from "./program.js";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Exit once stdout is flushed. A finished command exits at once rather than when the event loop
 * drains: the migration step's connection pool would otherwise keep the process alive ~10 s.
 */
const exit = (code: number) => process.stdout.write("", () => process.exit(code));

cliMain(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readStdin,
}).then(exit, (err: unknown) => {
  process.stderr.write(`engagement: ${err instanceof Error ? err.message : String(err)}\n`);
  exit(1);
});
