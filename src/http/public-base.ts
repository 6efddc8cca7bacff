// The service's address as a caller should use it: PUBLIC_URL when set (a proxy's public address,
// perhaps with a path), else the address the service listens on, as bound. Never the request's Host
// or X-Forwarded-Host (contract section 31): every URL the service writes (ids, links, the
// fragment's API base, sign-in links, the OpenAPI document's server) comes from here, so a forged
// Host can neither put another site's address in an answer nor in a shared cache's copy of one.
// And whether a form POST came from a page of another site.
import type { Server } from "node:http";
import type { FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import { originOf } from "../lib/origin.js";

type BaseConfig = Pick<Config, "PUBLIC_URL" | "HOST" | "PORT">;

export function publicBase(config: BaseConfig, req: FastifyRequest): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, "");
  return listeningBase(config, req.server.server);
}

/**
 * `http://<address>:<port>` the server is bound to; a wildcard bind (0.0.0.0, ::) as the loopback
 * address of its family, a server not listening (or on a Unix socket) as HOST:PORT.
 */
export function listeningBase(config: Pick<Config, "HOST" | "PORT">, server: Pick<Server, "address">): string {
  const bound = server.address();
  const [address, port] = bound === null || typeof bound === "string" ? [config.HOST, config.PORT] : [bound.address, bound.port];
  const host = address === "0.0.0.0" ? "127.0.0.1" : address === "::" ? "::1" : address;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Whether a form POST came from another site: a browser's Sec-Fetch-Site says so (anything but
 * same-origin); without it, an Origin that is neither ours nor "null" (our pages send no referrer, so
 * a browser may send Origin: null for their own forms). The hosted pages' forms refuse such posts.
 */
export function crossSiteForm(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest): boolean {
  const site = req.headers["sec-fetch-site"];
  if (typeof site === "string") return site !== "same-origin";
  const origin = req.headers.origin;
  if (typeof origin !== "string" || origin === "null") return false;
  const own = [originOf(`${req.protocol}://${req.headers.host ?? ""}`), config.PUBLIC_URL ? originOf(config.PUBLIC_URL) : null];
  return !own.includes(origin);
}

/** Whether the browser reaches us over https (the request's own scheme, or PUBLIC_URL's): cookies set then are Secure. */
export function isSecureRequest(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest): boolean {
  return req.protocol === "https" || (config.PUBLIC_URL ?? "").startsWith("https:");
}
