// The browser a hosted sign-in at a provider began in (contract section 20; issue: login CSRF). The
// start of an OpenID Connect or OAuth 2 sign-in gives the browser a random value in a cookie —
// `__Host-eng_sign_in` over https (HttpOnly, Secure, SameSite=Lax, Path=/, no Domain), `eng_sign_in`
// over plain http where a Secure cookie cannot be kept — and keeps only its SHA-256 with the state.
// The provider's redirect back is a top-level GET, so SameSite=Lax sends it; a callback whose browser
// holds no such cookie, or another value, is refused (sign_in_browser_mismatch) and starts no session.
// An attacker's own callback URL opened in a victim's browser therefore signs nobody in there.
//
// One value serves every sign-in a browser starts while it lives (it is reused, and its lifetime
// renewed, by each start), so two sign-ins begun in two tabs of one browser both finish.
import { randomBytes } from "node:crypto";
import { parse as parseCookie, serialize } from "cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.js";
import { isSecureRequest } from "../../http/public-base.js";
import { sha256 } from "../../lib/sha256.js";
import { STATE_TTL_MS } from "./engine/oidc.js";

const SECURE_NAME = "__Host-eng_sign_in";
const PLAIN_NAME = "eng_sign_in";
const VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The browser's binding value, when its cookie holds a well-formed one. Over https only the
 * `__Host-` name counts: no sibling host can set that one (a plain cookie could be tossed in).
 */
function cookieValue(req: FastifyRequest, secure: boolean): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  const v = parseCookie(header)[secure ? SECURE_NAME : PLAIN_NAME];
  return v !== undefined && VALUE.test(v) ? v : null;
}

/** What a state keeps of the browser: the SHA-256 (hex) of its cookie's value. */
const bindingOf = (value: string) => sha256(value, "hex");

/**
 * At a sign-in's start: the browser's binding (its cookie's value, or a new one), set again on the
 * answer for the state's lifetime. Answers what the state keeps (the value's hash).
 */
export function bindBrowser(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest, reply: FastifyReply): string {
  const secure = isSecureRequest(config, req);
  const value = cookieValue(req, secure) ?? randomBytes(32).toString("base64url");
  reply.header(
    "Set-Cookie",
    serialize(secure ? SECURE_NAME : PLAIN_NAME, value, {
      httpOnly: true,
      secure,
      sameSite: "lax",
      path: "/",
      maxAge: Math.ceil(STATE_TTL_MS / 1000),
    }),
  );
  return bindingOf(value);
}

/** At the callback: the binding of the browser that came back (null when it holds none). */
export function browserBinding(config: Pick<Config, "PUBLIC_URL">, req: FastifyRequest): string | null {
  const value = cookieValue(req, isSecureRequest(config, req));
  return value === null ? null : bindingOf(value);
}
