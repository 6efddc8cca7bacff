// A floor's POST: node:http over a keep-alive agent, the answer read to its end (bench/floor/webhook-loop.ts,
// bench/floor/federation-out.ts).
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
