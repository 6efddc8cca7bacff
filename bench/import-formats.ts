// npm run bench:import-formats — a million comments from each import format within the Disqus
// import's time (contract section 25). bench/import-generate.ts writes the same IMPORT_COMMENTS
// comments in IMPORT_THREADS discussions (50,000 readers, a third of them replies, 1 % deleted,
// 1 % spam) as a Disqus export and as each other format (docs/import.md); each file is imported
// into a fresh tenant of one server with the importer the CLI and the API run, one after another.
// Prints each format's file size, comments written, seconds and its time over Disqus's: the goal
// is at most 1.0× (within the Disqus import's time), as a ratio on a noisy machine.
// Env: IMPORT_COMMENTS (1,000,000), IMPORT_THREADS (10,000), IMPORT_FORMATS (disqus first, then
// remark42,commento,isso,github,json); BENCH_PG_URL and BENCH_REDIS_URL as for `npm run bench`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmtTable, startBenchApp } from "./support.js";
import { createTenant } from "../src/modules/tenants/engine/tenants.js";
import { runImport } from "../src/modules/portability/engine/importer.js";
import type { ImportFormat } from "../src/modules/portability/source.js";

const COMMENTS = Number(process.env.IMPORT_COMMENTS ?? 1_000_000);
const THREADS = Number(process.env.IMPORT_THREADS ?? 10_000);
const FORMATS = (process.env.IMPORT_FORMATS ?? "disqus,remark42,commento,isso,github,json").split(",") as ImportFormat[];

async function generate(file: string, format: string): Promise<void> {
  const args = ["--comments", String(COMMENTS), "--threads", String(THREADS), "--format", format, "--out", file];
  const child = spawn(process.execPath, ["--import", "tsx", "bench/import-generate.ts", ...args], { stdio: "inherit" });
  const [code] = (await once(child, "exit")) as [number];
  if (code !== 0) throw new Error(`import-generate ${args.join(" ")}: exit ${code}`);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-import-formats-"));
  const env = await startBenchApp();
  const rows: { format: string; mb: number; comments: number; skipped: number; seconds: number }[] = [];
  try {
    for (const format of FORMATS) {
      const file = join(dir, `comments.${format}`);
      console.log(`generating ${COMMENTS} comments in ${THREADS} discussions as ${format}`);
      await generate(file, format);
      const { size } = await stat(file);
      const tenant = await createTenant(env.app.runtime.services, `import-${format}`);
      const started = performance.now();
      const summary = await runImport(env.app.runtime.services.sql, createReadStream(file, { highWaterMark: 256 * 1024 }), {
        tenantId: tenant.tenantId,
        format,
        idFrom: "identifier",
        onError: "skip",
        now: new Date(),
      });
      const seconds = (performance.now() - started) / 1000;
      if (summary.state !== "succeeded") throw new Error(`import of ${format}: ${summary.failure}`);
      rows.push({ format, mb: size / 1024 / 1024, comments: summary.comments, skipped: summary.skipped, seconds });
      console.log(`${format}: ${summary.comments} comments in ${seconds.toFixed(1)} s`);
      await rm(file, { force: true });
    }
  } finally {
    await env.close();
    await rm(dir, { recursive: true, force: true });
  }
  const disqus = rows.find((r) => r.format === "disqus")?.seconds;
  console.log(
    fmtTable(
      ["format", "file MB", "comments written", "skipped", "seconds", "comments/s", "× Disqus's time"],
      rows.map((r) => [
        r.format,
        r.mb.toFixed(0),
        r.comments,
        r.skipped,
        r.seconds.toFixed(1),
        Math.round(r.comments / r.seconds),
        disqus ? `${(r.seconds / disqus).toFixed(2)}×` : "-",
      ]),
    ),
  );
}

await main();
