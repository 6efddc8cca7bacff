// What a request makes and drops must die young: objects that survive two young-generation
// collections are copied into the old generation, and each costs a copy now and marking later (the
// lists' garbage collection in bench/notes.md, 2026-11-29). Two of our packages' patterns kept every
// request's objects alive through the collections until the next full one, and both are patched
// (patches/): pg's read timeout (`query_timeout`), whose wrapper of the query's callback was made
// inside `Client#query`, and Pothos's per-request cache, a WeakMap keyed by the request's context
// whose entries refer back to it. Each is run here in a child process of its own with V8's
// collection trace, and the bytes promoted to the old generation are counted per thing made: tens
// of bytes with the patches, thousands (pg) and ~70 (Pothos) without. A measure of memory kept, not
// of time: the count does not depend on the machine's speed.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";

const CHILD = fileURLToPath(new URL("./support/young-garbage-child.mjs", import.meta.url));

/** Runs the child and sums the `promoted=` bytes of its scavenges, divided by what it made. */
function promotedPerThing(kind: string, env: Record<string, string> = {}): Promise<{ made: number; promotedPerThing: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--trace-gc-nvp", CHILD, kind, "2"],
      { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (err, stdout) => {
        if (err) return reject(err);
        let promoted = 0;
        let made = 0;
        for (const line of stdout.split("\n")) {
          if (line.startsWith("{")) made = (JSON.parse(line) as { made: number }).made;
          else if (/ gc=s /.test(line)) promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
        }
        if (made < 1000) return reject(new Error(`the child made only ${made}`));
        resolve({ made, promotedPerThing: promoted / made });
      },
    );
  });
}

describe("what a request makes dies young", () => {
  it("a pg query with a read timeout leaves nothing of its result to the old generation", async () => {
    // the statement reads no table: the server itself, never through a pooler (it is a named statement)
    const { promotedPerThing: perQuery } = await promotedPerThing("pg-read-timeout", { DATABASE_URL: inject("adminDatabaseUrl") });
    // ~40 B a query patched; 1,300–3,000 B (its 20 rows) without
    expect(perQuery).toBeLessThan(400);
  });

  it("a Pothos per-request cache entry that refers to its context dies with it", async () => {
    const { promotedPerThing: perContext } = await promotedPerThing("pothos-context-cache");
    // ~3 B a context patched; ~70 B without
    expect(perContext).toBeLessThan(20);
  });
});
