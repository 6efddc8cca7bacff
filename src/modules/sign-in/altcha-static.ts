// The ALTCHA widget's files, served from our own origin for the guest form of the hosted sign-in
// (src/modules/sign-in/engine/sign-in-page.ts) under its CSP: the `altcha` package's external-styles
// build (no inline <style>: its stylesheet is a file of its own), the proof-of-work worker it starts
// from `./worker.js` beside itself (worker-src 'self'), and its own translations for the languages
// of the pages. GET /auth/v1/static/altcha/{altcha.js | worker.js | altcha.css | i18n/<lang>.js}.
// Read once at start-up; an ETag of each file's content; nothing from a CDN.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { ALTCHA_BASE } from "./engine/sign-in-page.js";
import { notModified } from "../../http/etag.js";

/** the package's translation file for each language of the pages but English (its default) */
const ALTCHA_LANGUAGES: Record<string, string> = {
  de: "de",
  fr: "fr-fr",
  es: "es-es",
  pt: "pt-pt",
  it: "it",
  nl: "nl",
  pl: "pl",
  ja: "ja",
  zh: "zh-cn",
};

export function mountAltchaStatic(fastify: FastifyInstance): void {
  // dist_external/ of the altcha package (its "./external" export)
  const dir = dirname(createRequire(import.meta.url).resolve("altcha/external"));
  const files: Record<string, string> = {
    "altcha.js": join(dir, "altcha.js"),
    "worker.js": join(dir, "worker.js"),
    "altcha.css": join(dir, "altcha.css"),
  };
  for (const [lang, file] of Object.entries(ALTCHA_LANGUAGES)) files[`i18n/${lang}.js`] = join(dir, "..", "dist_i18n", `${file}.js`);
  for (const [name, path] of Object.entries(files)) {
    const body = readFileSync(path);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    const type = name.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
    fastify.get(`${ALTCHA_BASE}${name}`, (req, reply) => {
      reply.header("Cache-Control", "public, max-age=3600").header("ETag", etag).header("X-Content-Type-Options", "nosniff");
      if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
      return reply.type(type).send(body);
    });
  }
}
