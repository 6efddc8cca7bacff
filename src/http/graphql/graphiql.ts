// GraphiQL (on outside production, src/config.ts) at GET /graphql for a browser: a small page that
// loads GraphiQL's script, styles, Monaco's workers and icon from @graphql-yoga/render-graphiql as
// files of their own at /graphql/graphiql/<version>/…, each compressed once (brotli or gzip, as the
// browser accepts) and cacheable for good (the package's version is in the path). Nothing from a
// CDN. The package's renderGraphiQL would inline all of them: about 9 MB of HTML on every visit, its
// workers as JSON strings turned into blobs. The package is loaded on the first visit only, so a
// process that never serves GraphiQL never holds its 9 MB of strings.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { negotiate } from "@fastify/accept-negotiator";
import type { Config } from "../../config.js";

const compressBrotli = promisify(brotliCompress);
const compressGzip = promisify(gzip);

/** Its headers pane open with `X-API-Key` to fill in, and a first query whose comments say which key goes there. */
const GRAPHIQL_OPTIONS = {
  title: "Engagement service GraphQL",
  endpoint: "/graphql",
  headers: JSON.stringify({ "X-API-Key": "" }, null, 2),
  defaultEditorToolsVisibility: "headers" as const,
  defaultQuery: [
    "# Every request needs a key: put yours in",
    '# Headers (below) as { "X-API-Key": "ek_…" }.',
    "# An API key (ek_…): `npm run cli -- tenant",
    "# create` prints one; the console's Keys",
    "# screen makes more. A publishable key (pk_…)",
    "# with X-Service-Identity: <reader's token>",
    "# acts as that reader. An admin JWT goes in",
    "# Authorization: Bearer <token> instead.",
    "{",
    "  discussions(first: 5) {",
    "    edges { node { id title commentCount } }",
    "  }",
    "}",
    "",
  ].join("\n"),
};

type Encoding = "br" | "gzip";

interface Asset {
  type: string;
  body: Buffer;
  /** compressed on first request, then kept */
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

const require = createRequire(import.meta.url);
/** The package's version names the assets' folder: its files change only with it. */
const VERSION = (
  JSON.parse(readFileSync(join(dirname(require.resolve("@graphql-yoga/render-graphiql")), "..", "package.json"), "utf8")) as {
    version: string;
  }
).version;
const PREFIX = `/graphql/graphiql/${VERSION}/`;
const IMMUTABLE = "public, max-age=31536000, immutable";

/** The page's script: Monaco's workers at their URLs, then GraphiQL's bundle, then GraphiQL drawn with our options. */
function pageOf(iconType: string): string {
  const at = (file: string) => JSON.stringify(`${PREFIX}${file}`);
  // "<" escaped: the options are written into a <script> element
  const options = JSON.stringify(GRAPHIQL_OPTIONS).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${GRAPHIQL_OPTIONS.title}</title>
    <link rel="icon" type="${iconType}" href=${at("favicon.ico")} />
    <link rel="stylesheet" href=${at("graphiql.css")} />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = { editorWorkerService: ${at("editor.worker.js")}, json: ${at("json.worker.js")}, graphql: ${at("graphql.worker.js")} };
      self["MonacoEnvironment"] = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };
    </script>
    <script src=${at("graphiql.js")}></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(window.document.querySelector("#root"), ${options});
    </script>
  </body>
</html>
`;
}

interface Loaded {
  page: string;
  assets: Map<string, Asset>;
}

async function load(): Promise<Loaded> {
  const g = await import("@graphql-yoga/render-graphiql/graphiql");
  const icon = /^data:([^;,]+);base64,(.*)$/s.exec(g.favicon);
  const asset = (type: string, body: string | Buffer): Asset => ({ type, body: Buffer.from(body), encoded: {} });
  const assets = new Map<string, Asset>([
    ["graphiql.js", asset("text/javascript; charset=utf-8", g.js)],
    ["graphiql.css", asset("text/css; charset=utf-8", g.css)],
    ["editor.worker.js", asset("text/javascript; charset=utf-8", g.editorWorkerService)],
    ["json.worker.js", asset("text/javascript; charset=utf-8", g.jsonWorker)],
    ["graphql.worker.js", asset("text/javascript; charset=utf-8", g.graphqlWorker)],
  ]);
  if (icon) assets.set("favicon.ico", asset(icon[1]!, Buffer.from(icon[2]!, "base64")));
  return { page: pageOf(icon?.[1] ?? "image/x-icon"), assets };
}

function encode(asset: Asset, encoding: Encoding): Promise<Buffer> {
  return (asset.encoded[encoding] ??=
    encoding === "br"
      ? compressBrotli(asset.body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length },
        })
      : compressGzip(asset.body, { level: 9 }));
}

/** The GraphiQL page (what GET /graphql answers a browser), or null when GraphiQL is off; mounts its assets. */
export function mountGraphiql(
  fastify: FastifyInstance,
  config: Pick<Config, "GRAPHIQL">,
): ((reply: FastifyReply) => Promise<FastifyReply>) | null {
  if (!config.GRAPHIQL) return null;
  let loaded: Promise<Loaded> | undefined;
  const loadOnce = () => (loaded ??= load());

  fastify.get(`${PREFIX}:file`, async (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const asset = (await loadOnce()).assets.get(req.params.file);
    if (!asset) return reply.callNotFound();
    reply.header("Cache-Control", IMMUTABLE).header("Vary", "Accept-Encoding").type(asset.type);
    const encoding = negotiate(req.headers["accept-encoding"] ?? "", ["br", "gzip"]) as Encoding | null;
    if (!encoding) return reply.send(asset.body);
    // already compressed: the compression hook (src/http/compression.ts) leaves it as it is
    return reply.header("Content-Encoding", encoding).send(await encode(asset, encoding));
  });

  return async (reply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("Cache-Control", "no-cache")
      .send((await loadOnce()).page);
}
