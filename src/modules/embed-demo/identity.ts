// The demo's sign-in stub: any name becomes a reader (`demo:<name>`) with an identity assertion
// signed by the demo tenant's secret, as a site's backend would sign one (contract section 3).
import { SignJWT } from "jose";
import { errors } from "../../lib/errors.js";

const MAX_NAME = 60;

/** The reader id a name signs in as: `demo:` and the name in lower case, spaces as dashes. */
export function demoReaderId(name: string): string {
  return `demo:${name.trim().toLowerCase().replace(/\s+/g, "-")}`;
}

export function checkDemoName(raw: unknown): string {
  const name = typeof raw === "string" ? raw.trim() : "";
  if (!name || name.length > MAX_NAME) throw errors.validation([{ path: "name", message: `must be 1–${MAX_NAME} characters` }]);
  return name;
}

export function signDemoIdentity(secret: string, name: string, ttlSeconds = 3600): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ name })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(demoReaderId(name))
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
