// The service's address as a caller should use it: PUBLIC_URL when set (a proxy's public address,
// perhaps with a path), else the scheme and Host of the request itself.
import type { FastifyRequest } from "fastify";
import type { Config } from "../config.js";

export function publicBase(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, "");
  return `${req.protocol}://${req.headers.host ?? "127.0.0.1"}`;
}
