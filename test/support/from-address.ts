// Requests from a loopback source address of a test's own (127.x.y.z): the server counts sign-in
// attempts per client address, so a file's or a test's own address keeps its counts apart from those
// of the files running beside it.
import { request } from "node:http";

/** A random loopback address (127.1–254.0–255.2–254): the server sees it as the client's address. */
export const ownAddress = (): string =>
  `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${2 + Math.floor(Math.random() * 253)}`;

export interface FromAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** POST `body` as JSON to `path` of `serviceUrl` over real HTTP, from the source address `from`. */
export function postFrom(serviceUrl: string, path: string, from: string, body: unknown): Promise<FromAnswer> {
  const url = new URL(path, serviceUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        localAddress: from,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
