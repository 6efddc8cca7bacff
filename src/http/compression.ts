// Compressed answers (@fastify/compress): HTML, CSS, JavaScript, JSON (problem documents too),
// Atom and SVG, brotli or gzip as the client's Accept-Encoding prefers, when the answer is at least
// COMPRESS_THRESHOLD_BYTES (the small hot JSON answers — a comment, a count — go as they are: a
// compressor's set-up costs more than their bytes). Never an event stream: the SSE stream is
// answered before fastify (src/http/raw-routes.ts) and graphql-sse's text/event-stream is not a type
// listed here, so no event waits in a compressor's buffer. Request bodies are not decompressed (the
// body limit counts what arrives). Registered before every route, so every route gets the hook
// except the REST writes (REST_WRITE below).
import compress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

export const COMPRESS_THRESHOLD_BYTES = 1024;

/**
 * The media types compressed besides those mime-db calls compressible; text/event-stream is neither,
 * nor are NDJSON exports and octet streams.
 */
const COMPRESSIBLE =
  /^(text\/(html|css|javascript|plain)|application\/(javascript|([\w.-]+\+)?json|atom\+xml|xml)|image\/svg\+xml)\s*(;|$)/i;

/**
 * A REST write answers one resource (a comment, a reaction's counts, a job's status): always well
 * under a kilobyte or two, so those routes skip the compression hooks altogether (set before the
 * plugin reads the route). /graphql is not among them: a query's answer can be large.
 */
const REST_WRITE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export async function mountCompression(fastify: FastifyInstance): Promise<void> {
  fastify.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url.startsWith("/api/v1/") && methods.every((m) => REST_WRITE.has(m)) && route.compress === undefined) {
      route.compress = false;
    }
  });
  await fastify.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD_BYTES,
    encodings: ["br", "gzip"],
    customTypes: COMPRESSIBLE,
  });
}
