// The import and export routes (contract section 16), plain fastify routes beside the REST table
// because their bodies are files, not JSON:
//   POST /api/v1/imports?format=disqus|wordpress|ndjson|remark42|commento|isso|github|json|artalk|twikoo|cusdis[&idFrom=identifier|url|path][&onError=skip|stop][&keepEmails=true][&site=<origin>]
//     the file as the body (any content type), streamed to a temporary file, checked to look like
//     its format, then imported in the background → 202 with the import resource (Location: its URL)
//   GET /api/v1/imports/{id} → the import: state, progress counts, errors with their positions
//   GET /api/v1/export[?since=ISO] → application/x-ndjson, streamed from the database
// All take a key with manage_settings (or the admin JWT, or a console owner).
import { createReadStream, createWriteStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants as zlib, gunzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { routeReads } from "../../context/read-routing.js";
import { endpointReads } from "../../http/database-routes.js";
import { requirePrincipal, type AppServices, type RequestContext, db, store } from "../../context/request.js";
import { AppError, errors, type FieldError } from "../../lib/errors.js";
import { mountPlainRoute } from "../../http/plain-route.js";
import { createImportJob, findImportJob, listImportJobs, importDto } from "./engine/import-jobs.js";
import { runImportJob } from "./engine/import-run.js";
import { exportLines, exportRecords } from "./export.js";
import { EXPORT_VERSION } from "./records.js";
import {
  ID_FROM,
  IMPORT_FORMATS,
  NEEDS_SITE,
  siteOriginOf,
  type IdFrom,
  type ImportChoices,
  type ImportFormat,
  type OnError,
} from "./source.js";
import { keepFresh, newTempFile, removeStaleTempFiles } from "./temp-files.js";
import { FORMAT_NAMES, formatNameOf, formatOf, SQLITE_FORMATS, SQLITE_MAGIC } from "./sniff.js";
import { isPgDump } from "./pg-dump.js";
import { isGzip } from "./decompress.js";

/** the largest file an import takes over HTTP (larger ones: the CLI) */
export const MAX_IMPORT_BYTES = 4 * 1024 ** 3;

type Query = Record<string, string | string[] | undefined>;

const one = (q: Query, name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

export function parseImportQuery(q: Query): ImportChoices {
  const problems: FieldError[] = [];
  const format = one(q, "format");
  const idFrom = one(q, "idFrom") ?? "identifier";
  const onError = one(q, "onError") ?? "skip";
  const keepEmails = one(q, "keepEmails") ?? "false";
  const siteText = one(q, "site");
  const site = siteText === undefined || siteText === "" ? null : siteOriginOf(siteText);
  if (!format || !(IMPORT_FORMATS as readonly string[]).includes(format))
    problems.push({ path: "format", message: `must be one of ${IMPORT_FORMATS.join(", ")}` });
  if (!(ID_FROM as readonly string[]).includes(idFrom)) problems.push({ path: "idFrom", message: "must be identifier, url or path" });
  if (onError !== "skip" && onError !== "stop") problems.push({ path: "onError", message: "must be skip or stop" });
  if (keepEmails !== "true" && keepEmails !== "false") problems.push({ path: "keepEmails", message: "must be true or false" });
  if (siteText && !site) problems.push({ path: "site", message: "must be the site's http(s) origin, e.g. https://blog.example" });
  else if (!site && NEEDS_SITE.has(format as ImportFormat))
    problems.push({
      path: "site",
      message: `is required for ${format}: the site's origin its pages' paths are on, e.g. https://blog.example`,
    });
  if (problems.length) throw errors.invalidParameter(problems);
  return {
    format: format as ImportFormat,
    idFrom: idFrom as IdFrom,
    onError: onError as OnError,
    keepEmails: keepEmails === "true",
    site,
  };
}

export function parseSince(q: Query): Date | null {
  const since = one(q, "since");
  if (since === undefined || since === "") return null;
  const d = new Date(since);
  if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(d.getTime()))
    throw errors.invalidParameter([{ path: "since", message: "must be an ISO 8601 date-time" }]);
  return d;
}

/** what of a gzip file's start is expanded to tell its format (at most some MiB, whatever it holds) */
const GZIP_HEAD_BYTES = 8 * 1024;

/**
 * Whether the first bytes look like the format (so a wrong file is refused at once, not imported
 * as nothing): the export header's first line, XML whose root is <disqus> or <rss>, a JSON object
 * (remark42, Commento) or array (GitHub, the generic JSON, Artalk), either (Twikoo), an SQLite
 * file (isso, Cusdis) or a pg_dump (Cusdis); a gzip file's
 * expanded start (one whose start does not expand is left to the import, which fails at its
 * position). A file of another format is named (sniff.ts).
 */
export function formatProblem(format: ImportFormat, headBytes: Uint8Array | string): string | null {
  let head = typeof headBytes === "string" ? headBytes : Buffer.from(headBytes).toString("utf8");
  if (typeof headBytes !== "string" && isGzip(headBytes)) {
    try {
      head = gunzipSync(headBytes.subarray(0, GZIP_HEAD_BYTES), { finishFlush: zlib.Z_SYNC_FLUSH }).toString("utf8");
    } catch {
      return null;
    }
  }
  const text = head.replace(/^\uFEFF/, "").trimStart();
  if (!text) return "is empty: send the file as the request body";
  const sqlite = head.startsWith(SQLITE_MAGIC);
  const found = formatOf(sqlite ? head : text);
  if (found && found !== format) return `is ${formatNameOf(found, text)}, not ${format}`;
  if (format === "isso") return sqlite ? null : "is not an SQLite database (isso's comments.db)";
  if (format === "cusdis") return sqlite || isPgDump(text) ? null : "is neither an SQLite database nor a pg_dump (Cusdis's)";
  if (sqlite && !SQLITE_FORMATS.has(format)) return `is an SQLite database, not ${format}`;
  if (format === "remark42" || format === "commento")
    return text.startsWith("{") ? null : `is not ${FORMAT_NAMES[format]} (a JSON object${format === "remark42" ? " per line" : ""})`;
  if (format === "github" || format === "json") return text.startsWith("[") ? null : "is not a JSON array";
  if (format === "artalk")
    return text.startsWith("[") ? null : "is not a JSON array: Artalk's Artrans is an array of comments (not one object)";
  if (format === "twikoo")
    return text.startsWith("[") || text.startsWith("{") ? null : "is not a Twikoo export (a JSON array of comments, or one comment a line)";
  if (format === "ndjson") {
    const first = text.split("\n", 1)[0]!;
    try {
      const h = JSON.parse(first) as { type?: unknown };
      if (h && h.type === "export") return null;
    } catch {
      /* below */
    }
    return `must start with the export header line {"type":"export","version":${EXPORT_VERSION},…}`;
  }
  if (!text.startsWith("<")) return "is not XML";
  const root = format === "disqus" ? "<disqus" : "<rss";
  return text.includes(root) ? null : `is not ${format === "disqus" ? "a Disqus export (<disqus>)" : "a WordPress export (WXR: <rss>)"}`;
}

export function mountPortabilityRoutes(fastify: FastifyInstance, app: AppServices): void {
  const running = new Map<string, { abort: AbortController; done: Promise<unknown> }>();

  /** Each route takes a key with manage_settings (or the admin JWT, or a console owner). */
  const handle = (
    method: "GET" | "POST",
    url: string,
    fn: (req: FastifyRequest, reply: FastifyReply, ctx: RequestContext) => Promise<unknown>,
    on: FastifyInstance = fastify,
  ) => mountPlainRoute(on, app, { method, url, what: "import/export", caller: { capability: "manage_settings" }, handler: fn });

  const start = (job: Awaited<ReturnType<typeof createImportJob>>, file: string, release: () => void) => {
    const abort = new AbortController();
    const done = runImportJob(app, job, createReadStream(file, { highWaterMark: 256 * 1024 }), { signal: abort.signal })
      .catch((err: unknown) => app.log.error({ err, importId: job.id }, "import failed"))
      .finally(() => {
        running.delete(job.id);
        release();
        return rm(file, { force: true });
      });
    running.set(job.id, { abort, done });
  };

  fastify.register(async (scope) => {
    // the body is the file, of any type: read here as a stream, never parsed by fastify
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
    handle(
      "POST",
      "/api/v1/imports",
      async (req, reply, ctx) => {
        const opts = parseImportQuery(req.query as Query);
        const file = newTempFile();
        // touched while it is uploaded and imported: a starting server leaves it be (temp-files.ts)
        const release = keepFresh(file);
        let bytes = 0;
        try {
          await pipeline(
            req.raw,
            new Transform({
              transform(chunk: Buffer, _enc, cb) {
                bytes += chunk.length;
                cb(bytes > MAX_IMPORT_BYTES ? errors.payloadTooLarge(MAX_IMPORT_BYTES) : null, chunk);
              },
            }),
            createWriteStream(file, { flags: "wx", mode: 0o600 }),
          );
          const problem = formatProblem(opts.format, await headOf(file));
          if (problem) throw errors.validation([{ path: "body", message: problem }]);
        } catch (err) {
          release();
          await rm(file, { force: true });
          if (err instanceof AppError) throw err;
          throw new AppError(400, "bad_request", "The request body could not be read to its end.");
        }
        let job: Awaited<ReturnType<typeof createImportJob>>;
        try {
          job = await createImportJob(db(ctx), {
            tenantId: requirePrincipal(ctx).tenantId,
            ...opts,
            via: requirePrincipal(ctx).kind === "operator" ? "console" : "api",
            bytesTotal: bytes,
            now: app.clock.now(),
          });
        } catch (err) {
          release();
          await rm(file, { force: true });
          throw err;
        }
        start(job, file, release);
        return reply.status(202).header("Location", `/api/v1/imports/${job.id}`).header("Cache-Control", "no-store").send(importDto(job));
      },
      scope,
    );
  });

  handle("GET", "/api/v1/imports", async (req, reply, ctx) => {
    const q = req.query as Query;
    const limit = q.limit === undefined ? null : Number(q.limit);
    if (limit !== null && !Number.isInteger(limit)) throw errors.invalidParameter([{ path: "limit", message: "must be an integer" }]);
    const cursor = typeof q.cursor === "string" ? q.cursor : null;
    const page = await listImportJobs(db(ctx), requirePrincipal(ctx).tenantId, { limit, cursor }, app.clock.now());
    return reply.header("Cache-Control", "no-store").send({ items: page.items.map(importDto), nextCursor: page.nextCursor });
  });

  handle("GET", "/api/v1/imports/:id", async (req, reply, ctx) => {
    const { id } = req.params as { id: string };
    const job = await findImportJob(db(ctx), requirePrincipal(ctx).tenantId, id, app.clock.now());
    if (!job) throw errors.notFound("Import");
    return reply.header("Cache-Control", "no-store").send(importDto(job));
  });

  handle("GET", "/api/v1/export", async (req, reply, ctx) => {
    const since = parseSince(req.query as Query);
    const tenantId = requirePrincipal(ctx).tenantId;
    routeReads(ctx, endpointReads("GET /api/v1/export"));
    const lines = exportLines(exportRecords(store(ctx).sql, { since, now: app.clock.now() }));
    // the first reads happen before the head is written: their failure is a problem document
    const first = await lines.next();
    const body = Readable.from(
      (async function* () {
        if (!first.done) yield first.value;
        yield* lines;
      })(),
    );
    body.on("error", (err) => app.log.error({ err, tenantId }, "export failed after it started"));
    return reply
      .type("application/x-ndjson; charset=utf-8")
      .header("Cache-Control", "no-store")
      .header("Content-Disposition", `attachment; filename="export-${tenantId}.ndjson"`)
      .send(body);
  });

  // the upload files a crashed or killed process left behind (temp-files.ts says which are)
  fastify.addHook("onReady", async () => {
    const removed = await removeStaleTempFiles();
    if (removed.length) app.log.info({ files: removed.length }, "removed import files left behind");
  });

  // a server that stops ends its imports (failed, what they wrote kept: running the file again continues)
  fastify.addHook("onClose", async () => {
    for (const r of running.values()) r.abort.abort();
    await Promise.all([...running.values()].map((r) => r.done));
  });
}

/** The first 64 KB of a file. */
async function headOf(file: string): Promise<Uint8Array> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
