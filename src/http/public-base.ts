// The service's address as a caller should use it: PUBLIC_URL when set (a proxy's public address,
// perhaps with a path), else the scheme and Host of the request itself; and whether a form POST came
// from a page of another site.
import type { FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import { originOf } from "../lib/origin.js";

export function publicBase(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, "");
  return `${req.protocol}://${req.headers.host ?? "127.0.0.1"}`;
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
