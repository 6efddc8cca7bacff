// The admin console's static files (contract section 10), built by Vite into dist/console (on
// install, or `npm run build:console`) and served at /console/ on the API's own origin. Hashed
// assets are cached for a year; index.html is revalidated every time. Nothing loads from a CDN.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import fastifyStatic from "@fastify/static";

export const CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));

export async function mountConsole(fastify: FastifyInstance): Promise<void> {
  fastify.get("/console", (_req, reply) => reply.redirect("/console/", 301));
  if (!existsSync(`${CONSOLE_DIR}index.html`)) {
    fastify.get("/console/*", (_req, reply) =>
      reply.status(503).type("text/plain; charset=utf-8").send("The console is not built: run `npm run build:console`."),
    );
    return;
  }
  await fastify.register(fastifyStatic, {
    root: CONSOLE_DIR,
    prefix: "/console/",
    index: ["index.html"],
    wildcard: true,
    setHeaders: (res, path) => {
      res.header("Cache-Control", /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache");
      res.header("X-Content-Type-Options", "nosniff");
      res.header("Referrer-Policy", "same-origin");
      if (path.endsWith(".html")) {
        res.header(
          "Content-Security-Policy",
          "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
        );
      }
    },
  });
}
