// GET /: where a newcomer goes next — the console, the OpenAPI document, GraphQL (and GraphiQL where
// it is on), the health checks and the docs. JSON for clients; a small page of links for a browser.
// The start log names the same places (src/main.ts).
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { SERVICE_VERSION } from "../lib/version.js";
import { publicBase } from "./public-base.js";

export interface EntryPoints {
  console: string;
  openapi: string;
  graphql: string;
  graphiql: string | null;
  health: string;
  ready: string;
  metrics: string;
  docs: string;
}

/** The service's entry points under `base` (its public URL). */
export function entryPoints(config: Pick<Config, "GRAPHIQL">, base: string): EntryPoints {
  const at = (path: string) => new URL(path, base).toString();
  return {
    console: at("/console/"),
    openapi: at("/api/v1/openapi.json"),
    graphql: at("/graphql"),
    graphiql: config.GRAPHIQL ? at("/graphql") : null,
    health: at("/healthz"),
    ready: at("/readyz"),
    metrics: at("/metrics"),
    docs: "README.md and docs/ in the repository",
  };
}

const LABELS: Record<keyof EntryPoints, string> = {
  console: "Admin console",
  openapi: "OpenAPI document (REST /api/v1)",
  graphql: "GraphQL endpoint",
  graphiql: "GraphQL in GraphiQL",
  health: "Health check",
  ready: "Readiness check",
  metrics: "Prometheus metrics",
  docs: "Documentation",
};

const NOTES: Partial<Record<keyof EntryPoints, string>> = {
  graphiql: " (put your API key in its Headers pane as <code>X-API-Key</code>)",
};
const GRAPHIQL_OFF = " (POST with <code>X-API-Key</code>; GraphiQL there with <code>GRAPHIQL=1</code>)";

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function mountIndex(fastify: FastifyInstance, config: Pick<Config, "GRAPHIQL" | "PUBLIC_URL" | "HOST" | "PORT">) {
  fastify.get("/", async (req, reply) => {
    // links on PUBLIC_URL, else the address the service listens on (never the request's Host)
    const base = publicBase(config, req);
    const links = entryPoints(config, base);
    if ((req.headers.accept ?? "").includes("text/html")) {
      // GraphQL's one link: GraphiQL where it is on (the same address), else the endpoint and how to turn it on
      const items = (Object.keys(links) as (keyof EntryPoints)[])
        .filter((k) => links[k] !== null && !(k === "graphql" && links.graphiql))
        .map((k) => {
          const v = links[k]!;
          if (!/^https?:/.test(v)) return `<li>${LABELS[k]}: ${escape(v)}</li>`;
          const note = NOTES[k] ?? (k === "graphql" ? GRAPHIQL_OFF : "");
          return `<li><a href="${escape(v)}">${LABELS[k]}</a>${note}</li>`;
        })
        .join("");
      return reply
        .type("text/html; charset=utf-8")
        .header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Engagement service</title>` +
            `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}</style></head>` +
            `<body><main><h1>Engagement service ${escape(SERVICE_VERSION)}</h1><p>Comments, reactions, moderation and live updates. Start here:</p><ul>${items}</ul></main></body></html>`,
        );
    }
    return reply.send({ service: "engagement", version: SERVICE_VERSION, links });
  });
}
