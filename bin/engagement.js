#!/usr/bin/env node
// The `engagement` bin. Runs the CLI as built into dist/ by `npm run build` (what `npm start` runs)
// when that build is at least as new as every file of src/, else the TypeScript through tsx (a fresh
// checkout, or src/ edited since the last build): the same code either way, the build starting in
// half the time and memory.
//
// `engagement import` runs with a bounded heap (IMPORT_V8_FLAGS; the bin starts itself again with
// them unless the heap was sized already): an import streams files of any size, and a small heap
// makes V8 collect the records already written early instead of letting garbage pile up, so the
// process stays under 300 MB of RSS whatever the file's size (README, "Import and export").
/* global process, URL */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const IMPORT_V8_FLAGS = ["--max-old-space-size=128", "--max-semi-space-size=4"];

const root = fileURLToPath(new URL("..", import.meta.url));
const built = join(root, "dist/cli/index.js");

if (process.argv[2] === "import" && !process.execArgv.some((a) => a.startsWith("--max-old-space-size"))) {
  const child = spawn(process.execPath, [...process.execArgv, ...IMPORT_V8_FLAGS, ...process.argv.slice(1)], { stdio: "inherit" });
  // Ctrl-C reaches both processes from the terminal; a SIGTERM sent to this one is passed on
  process.on("SIGINT", () => undefined);
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
} else if (isFresh(built)) {
  await import(built);
} else {
  const { tsImport } = await import("tsx/esm/api");
  await tsImport("../src/cli/index.ts", import.meta.url);
}

/** The build is there and no file of src/ changed after it. */
function isFresh(file) {
  if (!existsSync(file)) return false;
  const builtAt = statSync(file).mtimeMs;
  const newer = (dir) =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? newer(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs > builtAt,
    );
  return !newer(join(root, "src"));
}
