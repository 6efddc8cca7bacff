// Black-box contract suite, a server process whose Redis is unreachable: healthy, not ready,
// answering without hanging.
// Written from ../shared/contract/API.md (and the README) alone: the real CLI, the run's server
// process (test/support/contract-server.ts) and plain HTTP through test/support/contract-client.ts.
// Nothing from src/ is imported.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  ADMIN_JWT_SECRET,
  type Tenant,
  api,
  contractRun,
  eventually,
  expectStatus,
  freePort,
  terminate,
} from "../support/contract-client.js";

let A: Tenant;

beforeAll(async () => {
  ({ A } = await contractRun());
  // d-main, as test/contract/discussions.test.ts makes it, for the checks below that read it
  expectStatus(
    await api.put("/discussions/d-main", { key: A.apiKey, json: { title: "Launch day!", url: "https://example.com/launch" } }),
    201,
  );
});

// ───────────────────────────── dependency down ─────────────────────────────

describe("a dependency down (Redis unreachable)", { timeout: 90_000 }, () => {
  let child: ChildProcess | undefined;
  let base = "";
  let log = "";
  afterAll(async () => {
    await terminate(child);
  });

  it("/healthz 200, /readyz 503, requests answer (503 unavailable or success) without hanging", async () => {
    const port = await freePort();
    const deadRedis = await freePort(); // nothing listens there
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["dist/main.js"], {
      cwd: process.cwd(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: inject("databaseUrl"),
        REDIS_URL: `redis://127.0.0.1:${deadRedis}`,
        ADMIN_JWT_SECRET,
        RUN_WEBHOOK_WORKER: "0",
        LOG_LEVEL: "silent",
      },
    });
    child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
    await eventually(
      async () => {
        if (child?.exitCode !== null) throw new Error(`server exited: ${log}`);
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
      },
      60_000,
      200,
    );
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    expect(ready.status).toBe(503);
    for (const [path, headers] of [
      ["/api/v1/discussions", { "x-api-key": A.apiKey }],
      ["/api/v1/stream/d-main", { "x-api-key": A.apiKey }],
    ] as const) {
      const started = Date.now();
      const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(15_000) });
      const sse = res.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
      const text = sse ? "" : await res.text();
      expect(Date.now() - started, `${path} answered in time`).toBeLessThan(15_000);
      if (res.status !== 200) {
        expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(503);
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(text).code).toBe("unavailable");
      } else if (sse) await res.body?.cancel(); // an open stream; other bodies were read above
    }
  });
});
