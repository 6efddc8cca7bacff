// The OpenAPI description of the import and export routes (src/modules/portability/http-routes.ts),
// added by src/app.ts to the document generated from the REST table.
import { IMPORT_FORMATS } from "./source.js";

const FORMATS = [...IMPORT_FORMATS];
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

const PROBLEMS = {
  "400": problem("Bad parameter"),
  "401": problem("Not authenticated"),
  "403": problem("Missing the manage_settings capability"),
  "429": problem("Rate limited"),
  "503": problem("A dependency is unavailable"),
};

const SECURITY = [{ apiKey: [] }, { adminJwt: [] }, { consoleSession: [] }];

const error = {
  type: "object",
  required: ["position", "message"],
  properties: { position: { type: "string" }, message: { type: "string" } },
};

const count = { type: "integer", minimum: 0 };

export const IMPORT_SCHEMA = {
  type: "object",
  required: [
    "id",
    "format",
    "state",
    "via",
    "idFrom",
    "onError",
    "keepEmails",
    "site",
    "bytesRead",
    "bytesTotal",
    "threads",
    "comments",
    "readers",
    "reactions",
    "unchanged",
    "skipped",
    "errors",
    "failure",
    "createdAt",
    "updatedAt",
    "finishedAt",
  ],
  additionalProperties: false,
  properties: {
    id: { type: "string" },
    format: { type: "string", enum: FORMATS },
    state: { type: "string", enum: ["running", "succeeded", "failed"] },
    via: {
      type: ["string", "null"],
      enum: ["api", "console", "cli", null],
      description: "how it was started: over the API (a key or the admin token), from the console, or by `engagement import`",
    },
    idFrom: { type: "string", enum: ["identifier", "url", "path"] },
    onError: { type: "string", enum: ["skip", "stop"] },
    keepEmails: { type: "boolean", description: "authors' email addresses were kept on their readers (for reply emails)" },
    site: {
      type: ["string", "null"],
      description:
        "the site's origin a thread's page path was resolved against (isso's uri; an Artalk page_key, a Twikoo url or a Cusdis slug that is a path); null when none was given",
    },
    bytesRead: count,
    bytesTotal: { type: ["integer", "null"] },
    threads: { ...count, description: "discussions created" },
    comments: { ...count, description: "comments created" },
    readers: { ...count, description: "readers created" },
    reactions: { ...count, description: "reactions created (votes and page reactions of our own export among them)" },
    unchanged: { ...count, description: "records already there (a re-run or a grown file)" },
    skipped: { ...count, description: "bad records left out, and the comments of threads the source marks deleted" },
    errors: { type: "array", items: error, description: "the first 100 bad records and warnings, with their positions" },
    failure: { type: ["string", "null"], description: "why a failed import stopped" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    finishedAt: { type: ["string", "null"], format: "date-time" },
  },
};

export const portabilityPaths: Record<string, Record<string, unknown>> = {
  "/api/v1/imports": {
    get: {
      operationId: "listImports",
      description:
        "The tenant's imports, newest first. An import whose server stopped before it ended is answered failed (failure: interrupted …); importing the file again continues it. Needs manage_settings.",
      security: SECURITY,
      parameters: [
        {
          name: "limit",
          in: "query",
          required: false,
          description: "Imports per page, 1–100 (default 20).",
          schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
        },
        {
          name: "cursor",
          in: "query",
          required: false,
          description: "The previous page's nextCursor, for the page after it; absent for the first page.",
          schema: { type: "string" },
        },
      ],
      responses: {
        "200": {
          description: "A page of imports",
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["items", "nextCursor"],
                additionalProperties: false,
                properties: { items: { type: "array", items: IMPORT_SCHEMA }, nextCursor: { type: ["string", "null"] } },
              },
            },
          },
        },
        ...PROBLEMS,
        "422": problem("limit out of range, or a cursor this list did not issue"),
      },
    },
    post: {
      operationId: "createImport",
      description:
        "Imports a Disqus XML export, a WordPress WXR export, this service's NDJSON export, a remark42 backup, a Commento export, an isso database, GitHub's issue or discussion comments JSON, the generic JSON format, Artalk's Artrans, a Twikoo export or a Cusdis database, its SQLite file or a plain pg_dump of its PostgreSQL database (docs/import.md; the file as the body, any content type, gzipped or not). Idempotent: running the same file again changes nothing, a grown file adds what is new. Each comment shows the author name its source gives for it. A file that is not well-formed (XML, JSON, gzip, SQLite, a pg_dump cut short) ends failed at its first error's position (line and column, byte) and writes nothing; a source comment id twice is an error for the second. Imported history emits no stream or webhook events. Needs manage_settings.",
      security: SECURITY,
      parameters: [
        {
          name: "format",
          in: "query",
          required: true,
          description:
            "The file's format: a Disqus XML export, a WordPress WXR export, this service's NDJSON export, a remark42 backup (JSON lines), a Commento or Commento++ JSON export, an isso SQLite database, GitHub's REST JSON of issue or discussion comments (gh api --paginate), the generic JSON format (docs/import.md), Artalk's Artrans JSON (an array), a Twikoo comment export (a JSON array, or one document a line), or a Cusdis database: its SQLite file, or a plain-format pg_dump of its PostgreSQL database (COPY or INSERT rows; pg_dump --data-only -t pages -t comments). Any of them may be gzipped.",
          schema: { type: "string", enum: FORMATS },
        },
        {
          name: "idFrom",
          in: "query",
          required: false,
          description:
            "discussion ids from the thread's identifier, its URL, or its URL's path (each falling back to the identifier or URL)",
          schema: { type: "string", enum: ["identifier", "url", "path"], default: "identifier" },
        },
        {
          name: "onError",
          in: "query",
          required: false,
          description: "A bad record: skip lists it in errors and goes on; stop ends the import failed there (what came before it stays).",
          schema: { type: "string", enum: ["skip", "stop"], default: "skip" },
        },
        {
          name: "keepEmails",
          in: "query",
          required: false,
          description:
            "true: authors' email addresses (Disqus, WordPress, Commento, isso, the generic JSON, Artalk, Twikoo, Cusdis) become their readers' addresses for reply emails; by default none is stored",
          schema: { type: "string", enum: ["true", "false"], default: "false" },
        },
        {
          name: "site",
          in: "query",
          required: false,
          description:
            "The site's origin (https://blog.example), against which a thread that names its page by path gets its page's URL, so the page finds its imported thread. Required for isso (whose threads are paths); for Artalk, Twikoo and Cusdis when a thread names its page by a path only (an Artalk file's own site_urls serve otherwise; without either such an import ends failed, naming site, and writes nothing).",
          schema: { type: "string", format: "uri" },
        },
      ],
      requestBody: {
        required: true,
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      },
      responses: {
        "202": {
          description: "Accepted: the import runs in the background; follow it at Location",
          headers: { Location: { schema: { type: "string" } } },
          content: { "application/json": { schema: IMPORT_SCHEMA } },
        },
        ...PROBLEMS,
        "413": problem("The file is larger than the import limit"),
        "422": problem("The body is empty or not a file of the format (a file of another format is named)"),
      },
    },
  },
  "/api/v1/imports/{id}": {
    get: {
      operationId: "getImport",
      description:
        "An import's state, progress counts and bad records with their positions; one whose server stopped before it ended is answered failed (interrupted). Needs manage_settings.",
      security: SECURITY,
      parameters: [
        { name: "id", in: "path", required: true, description: "The import's id, as POST answered it.", schema: { type: "string" } },
      ],
      responses: {
        "200": { description: "The import", content: { "application/json": { schema: IMPORT_SCHEMA } } },
        ...PROBLEMS,
        "404": problem("No such import in this tenant"),
      },
    },
  },
  "/api/v1/export": {
    get: {
      operationId: "exportTenant",
      description:
        'The tenant\'s data as NDJSON (format version 2, docs/import-export.md): a header {"type":"export"}, then discussion, reader, comment, reaction, vote and pageReaction records, and an end record with the counts. Importable with format=ndjson (version 1 too). Needs manage_settings.',
      security: SECURITY,
      parameters: [
        {
          name: "since",
          in: "query",
          required: false,
          description:
            "ISO 8601: only what was created or changed from then on (comments created or edited, reactions made, …); absent: everything.",
          schema: { type: "string", format: "date-time" },
        },
      ],
      responses: {
        "200": { description: "The export, streamed", content: { "application/x-ndjson": { schema: { type: "string" } } } },
        ...PROBLEMS,
      },
    },
  },
};
