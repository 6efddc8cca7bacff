// The hosted pages' script files, served from our own origin under their CSP (script-src 'self'):
//  - the ALTCHA widget's, for the guest form of the sign-in page (engine/sign-in-page.ts): the
//    `altcha` package's external-styles build (no inline <style>: its stylesheet is a file of its
//    own), the proof-of-work worker it starts from `./worker.js` beside itself (worker-src 'self'),
//    and its own translations for the languages of the pages.
//    GET /auth/v1/static/altcha/{altcha.js | worker.js | altcha.css | i18n/<lang>.js};
//  - SimpleWebAuthn's browser bundle (@simplewebauthn/browser, window.SimpleWebAuthnBrowser) for
//    passkeys (engine/passkey-pages.ts): GET /auth/v1/static/webauthn/simplewebauthn-browser.js.
// Read once at start-up; an ETag of each file's content; nothing from a CDN.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { ALTCHA_BASE } from "./engine/sign-in-page.js";
import { WEBAUTHN_SCRIPT } from "./engine/passkey-pages.js";
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

export function mountStaticFiles(fastify: FastifyInstance): void {
  const require = createRequire(import.meta.url);
  // dist_external/ of the altcha package (its "./external" export)
  const dir = dirname(require.resolve("altcha/external"));
  const files: Record<string, string> = {
    [`${ALTCHA_BASE}altcha.js`]: join(dir, "altcha.js"),
    [`${ALTCHA_BASE}worker.js`]: join(dir, "worker.js"),
    [`${ALTCHA_BASE}altcha.css`]: join(dir, "altcha.css"),
    // the package's UMD bundle (its main entry's folder holds the ESM build; the bundle sits beside it)
    [WEBAUTHN_SCRIPT]: join(dirname(require.resolve("@simplewebauthn/browser")), "..", "dist", "bundle", "index.umd.min.js"),
  };
  for (const [lang, file] of Object.entries(ALTCHA_LANGUAGES))
    files[`${ALTCHA_BASE}i18n/${lang}.js`] = join(dir, "..", "dist_i18n", `${file}.js`);
  for (const [url, path] of Object.entries(files)) {
    const body = readFileSync(path);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    const type = url.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
    fastify.get(url, (req, reply) => {
      reply.header("Cache-Control", "public, max-age=3600").header("ETag", etag).header("X-Content-Type-Options", "nosniff");
      if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
      return reply.type(type).send(body);
    });
  }
}
