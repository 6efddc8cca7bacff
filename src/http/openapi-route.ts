// GET /api/v1/openapi.json: the document built once at start-up (src/modules/openapi-document.ts),
// its `servers` naming the service's absolute address (PUBLIC_URL, else as bound: src/http/public-base.ts),
// so that a client generated from it, or a tool that opens it, calls this server.
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { publicBase } from "./public-base.js";

const SERVER_URL = "\u0000server-url\u0000";
/** A document's serialization around its `servers`, by document (one per process: every app of it serves the same). */
const serialized = new WeakMap<object, string[]>();

export function mountOpenApi(
  fastify: FastifyInstance,
  config: Pick<Config, "PUBLIC_URL" | "HOST" | "PORT">,
  document: Record<string, unknown>,
): void {
  // serialized once, around the one place that differs per address
  let parts = serialized.get(document);
  if (!parts)
    serialized.set(document, (parts = JSON.stringify({ ...document, servers: [{ url: SERVER_URL }] }).split(JSON.stringify(SERVER_URL))));
  const [head, tail] = parts;
  fastify.get("/api/v1/openapi.json", (req, reply) =>
    reply
      .header("Cache-Control", "public, max-age=300")
      .header("Vary", "Host")
      .type("application/json; charset=utf-8")
      .send(`${head}${JSON.stringify(publicBase(config, req))}${tail}`),
  );
}
