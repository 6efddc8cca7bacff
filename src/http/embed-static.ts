// The embed's scripts (contract section 14), built by esbuild into dist/embed/v1 (`npm run build:embed`,
// part of `npm run build`, which `npm start` runs first) and served at /embed/v1/<name>.js on the
// service's origin (and the thread's words in other languages at /embed/v1/i18n/<lang>.json), for
// any page to load: `Access-Control-Allow-Origin: *` and
// `Cross-Origin-Resource-Policy: cross-origin` (module scripts from another origin need CORS). The
// path is versioned; each file's ETag is its content hash, cached for an hour and revalidated after
// (a new build is picked up within the hour, and a revalidation costs a 304). Nothing loads from a CDN.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { notModified } from "./etag.js";

export const EMBED_DIR = fileURLToPath(new URL("../../dist/embed/v1/", import.meta.url));

/** the scripts the embed serves (embed/src/<name>.ts) */
export const EMBED_SCRIPTS = ["count.js", "thread.js", "recent.js"] as const;

/** the words of <engagement-thread> it fetches for a language other than English (embed/src/thread/i18n.ts) */
export const EMBED_LANGUAGE_FILES = ["de", "fr", "es", "pt", "it", "nl", "pl", "ja", "zh"].map((lang) => `i18n/${lang}.json`);

export function mountEmbed(fastify: FastifyInstance): void {
  for (const name of [...EMBED_SCRIPTS, ...EMBED_LANGUAGE_FILES]) {
    const path = `${EMBED_DIR}${name}`;
    if (!existsSync(path)) {
      fastify.get(`/embed/v1/${name}`, (_req, reply) =>
        reply.status(503).type("text/plain; charset=utf-8").send("The embed is not built: run `npm run build:embed`."),
      );
      continue;
    }
    const body = readFileSync(path);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    const type = name.endsWith(".json") ? "application/json; charset=utf-8" : "text/javascript; charset=utf-8";
    fastify.get(`/embed/v1/${name}`, (req, reply) => {
      reply
        .header("Cache-Control", "public, max-age=3600, stale-while-revalidate=86400")
        .header("ETag", etag)
        .header("Access-Control-Allow-Origin", "*")
        .header("Cross-Origin-Resource-Policy", "cross-origin")
        .header("X-Content-Type-Options", "nosniff");
      if (notModified(req.headers["if-none-match"], etag)) return reply.status(304).send();
      return reply.type(type).send(body);
    });
  }
}
