// What the delivery floors share (bench/floor/webhook-loop.ts, bench/floor/federation-out.ts): their
// POST (node:http over a keep-alive agent, the answer read to its end) and how they end.
import http from "node:http";

/** POSTs `body` to `target` over `agent`: resolves with the status once the answer is read. */
export function post(agent: http.Agent, target: URL, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers }, (res) => {
      res.on("data", () => undefined);
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Prints `done {"delivered","cpuMs"}` (this process's CPU since `cpu`), then waits for stdin to close:
 * the floor's database sessions stay open until the bench has read their CPU time.
 */
export async function reportDone(cpu: NodeJS.CpuUsage, delivered: number): Promise<void> {
  const used = process.cpuUsage(cpu);
  process.stdout.write(`done ${JSON.stringify({ delivered, cpuMs: (used.user + used.system) / 1000 })}\n`);
  process.stdin.resume();
  await new Promise((ok) => process.stdin.once("end", ok));
}
