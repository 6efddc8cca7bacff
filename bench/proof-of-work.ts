// npm run bench:proof-of-work — what a guest's ALTCHA challenge (src/modules/sign-in/engine/guest.ts)
// costs a reader's device: challenges made by the service (GET /auth/v1/{tenantId}/challenge) solved
// in headless Chromium by altcha-lib's own solver (SHA-256 through WebCrypto, as the widget's workers
// do it), on the page's main thread so that DevTools' CPU throttling certainly applies to it. Rows:
// this machine's CPU (the floor) and 4× and 6× slower (Lighthouse's "mid-tier mobile" is 4×). The
// goal: under 1 s on a mid-range phone. BENCH_RUNS challenges per row (default 30).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { fmtTable, startBenchApp } from "./support.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const RATES = [1, 4, 6];

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function main(): Promise<void> {
  const env = await startBenchApp();
  const solver = await build({
    stdin: {
      contents: `import { solveChallenge } from "altcha-lib/v1"; window.solveChallenge = solveChallenge;`,
      resolveDir: process.cwd(),
    },
    bundle: true,
    format: "iife",
    write: false,
    platform: "browser",
  });
  const page = `<!doctype html><meta charset="utf-8"><title>proof of work</title><script>${solver.outputFiles[0]!.text}</script>`;
  const host = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page));
  await new Promise<void>((ok) => host.listen(0, "127.0.0.1", ok));
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
  try {
    const tenantId = (await env.app.runtime.services.prisma.tenant.findFirstOrThrow({ select: { id: true } })).id;
    const patch = await fetch(`${env.url}/api/v1/settings`, {
      method: "PATCH",
      headers: { "X-API-Key": env.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ signIn: { methods: ["guest"] } }),
    });
    if (!patch.ok) throw new Error(`PATCH settings: ${patch.status}`);
    const p = await browser.newPage();
    await p.goto(`http://127.0.0.1:${(host.address() as AddressInfo).port}/`);
    const cdp = await p.context().newCDPSession(p);
    const rows: (string | number)[][] = [];
    let floorP50 = 0;
    for (const rate of RATES) {
      await cdp.send("Emulation.setCPUThrottlingRate", { rate });
      const times: number[] = [];
      const numbers: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const c = (await (await fetch(`${env.url}/auth/v1/${tenantId}/challenge`)).json()) as Record<string, unknown>;
        const r = await p.evaluate(async (ch) => {
          const t0 = performance.now();
          const s = await (
            window as unknown as { solveChallenge: (...a: unknown[]) => { promise: Promise<{ number: number } | null> } }
          ).solveChallenge(ch.challenge, ch.salt, ch.algorithm, ch.maxnumber).promise;
          return { ms: performance.now() - t0, number: s?.number ?? -1 };
        }, c);
        if (r.number < 0) throw new Error("a challenge was not solved");
        times.push(r.ms);
        numbers.push(r.number);
      }
      times.sort((a, b) => a - b);
      const p50 = quantile(times, 0.5);
      if (rate === 1) floorP50 = p50;
      rows.push([
        rate === 1 ? "this machine (floor)" : `${rate}× slower CPU`,
        RUNS,
        Math.round(numbers.reduce((a, b) => a + b, 0) / numbers.length),
        p50.toFixed(0),
        quantile(times, 0.9).toFixed(0),
        times[times.length - 1]!.toFixed(0),
        (p50 / floorP50).toFixed(2),
      ]);
    }
    console.log(fmtTable(["CPU", "runs", "mean number", "p50 ms", "p90 ms", "max ms", "p50 vs floor"], rows));
  } finally {
    await browser.close();
    host.close();
    await env.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
