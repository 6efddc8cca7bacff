// The embedded server's control socket (see src/cli/control.ts): a Unix socket in DATA_DIR (or in a
// private temporary folder when that path is too long for a socket), mode 0600, and the control file
// DATA_DIR/engagement.control (mode 0600) naming it with a random token. POST /command with
// `Authorization: Bearer <token>` runs a CLI command (src/cli/commands.ts) with this server's
// services and answers {result} or {error}; POST /import (the file as the body, the choices in the
// query) runs `engagement import` and answers its summary, GET /export?tenant=&since= streams
// `engagement export`'s NDJSON (src/cli/portability.ts); anything else is refused.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { InvalidArgumentError } from "commander";
import type { AppServices } from "../context/services.js";
import { CliCommandSchema, CliRefusal, runCommand } from "./commands.js";
import { controlFilePath } from "./control.js";
import { exportWith, importWith, type CliImport } from "./portability.js";
import { ID_FROM, IMPORT_FORMATS } from "../modules/portability/source.js";
import { siteOf } from "./portability.js";

/** sun_path holds 108 bytes on Linux (104 on macOS), with its NUL */
const MAX_SOCKET_PATH = 100;
const MAX_BODY = 64 * 1024;

export interface ControlServer {
  socket: string;
  close(): Promise<void>;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

export async function startControlServer(opts: {
  dataDir: string;
  services: AppServices;
  /** where console links point */
  baseUrl: string;
  log: Logger;
}): Promise<ControlServer> {
  const { dataDir, services, log } = opts;
  const token = randomBytes(32).toString("hex");
  const expected = digest(`Bearer ${token}`);
  let socket = join(dataDir, "engagement.sock");
  let privateDir: string | undefined;
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    privateDir = mkdtempSync(join(tmpdir(), "engagement-")); // 0700
    socket = join(privateDir, "engagement.sock");
  }
  rmSync(socket, { force: true }); // a dead server's: the data folder's lock is ours

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const given = digest(String(req.headers.authorization ?? ""));
    if (!timingSafeEqual(given, expected))
      return answer(res, 401, { error: "Not authorised: the token of DATA_DIR/engagement.control is required." });
    const url = new URL(req.url ?? "/", "http://control");
    if (req.method === "POST" && url.pathname === "/import") return importHere(url.searchParams, req, res);
    if (req.method === "GET" && url.pathname === "/export") return exportHere(url.searchParams, res);
    if (req.method !== "POST" || req.url !== "/command")
      return answer(res, 404, { error: "POST /command, POST /import or GET /export only." });
    let text = "";
    for await (const chunk of req) {
      text += String(chunk);
      if (text.length > MAX_BODY) return answer(res, 413, { error: "The command is too large." });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return answer(res, 400, { error: "The command is not JSON." });
    }
    const cmd = CliCommandSchema.safeParse(json);
    if (!cmd.success)
      return answer(res, 400, { error: `Not a command this server runs: ${cmd.error.issues.map((i) => i.message).join("; ")}` });
    try {
      const result = await runCommand({ services, migrated: [], server: process.pid, baseUrl: opts.baseUrl }, cmd.data);
      log.info({ command: cmd.data.command }, "ran a CLI command");
      return answer(res, 200, { result });
    } catch (err) {
      if (err instanceof CliRefusal) return answer(res, 400, { error: err.message });
      log.error({ err, command: cmd.data.command }, "a CLI command failed");
      return answer(res, 500, {
        error: `The running server could not run the command: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  };
  /** A refusal of the CLI's (bad choices, an unknown tenant) as its message; anything else as a failure. */
  const refuse = (res: ServerResponse, err: unknown, what: string) => {
    if (res.headersSent) return res.destroy(err instanceof Error ? err : undefined);
    if (err instanceof InvalidArgumentError || err instanceof CliRefusal) return answer(res, 400, { error: err.message });
    log.error({ err }, `a CLI ${what} failed`);
    return answer(res, 500, { error: `The running server could not run the ${what}: ${err instanceof Error ? err.message : String(err)}` });
  };
  const importHere = async (q: URLSearchParams, req: IncomingMessage, res: ServerResponse) => {
    const one = <T extends string>(name: string, values: readonly T[], fallback?: T): T => {
      const v = q.get(name) ?? fallback;
      if (v === undefined || !(values as readonly string[]).includes(v))
        throw new InvalidArgumentError(`${name} must be one of ${values.join(", ")}`);
      return v as T;
    };
    try {
      const bytes = q.get("bytesTotal");
      const opts: CliImport = {
        tenant: q.get("tenant") ?? "",
        format: one("format", IMPORT_FORMATS),
        idFrom: one("idFrom", ID_FROM, "identifier"),
        onError: one("onError", ["skip", "stop"] as const, "skip"),
        keepEmails: q.get("keepEmails") === "true",
        site: siteOf(q.get("format"), q.get("site")),
        bytesTotal: bytes !== null && /^\d{1,15}$/.test(bytes) ? Number(bytes) : null,
      };
      const done = await importWith(services, opts, req);
      log.info({ command: "import", importId: done.importId }, "ran a CLI command");
      return answer(res, 200, done);
    } catch (err) {
      return refuse(res, err, "import");
    }
  };
  const exportHere = async (q: URLSearchParams, res: ServerResponse) => {
    try {
      const since = q.get("since");
      const at = since === null ? null : new Date(since);
      if (at && Number.isNaN(at.getTime())) throw new InvalidArgumentError("--since must be an ISO 8601 date-time");
      let started = false;
      await exportWith(
        services,
        q.get("tenant") ?? "",
        at,
        (chunk) => {
          if (!started) res.writeHead(200, { "content-type": "application/x-ndjson" });
          started = true;
          return res.write(chunk);
        },
        () => new Promise((resolve) => res.once("drain", resolve)),
      );
      if (!started) res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.end();
      log.info({ command: "export" }, "ran a CLI command");
    } catch (err) {
      refuse(res, err, "export");
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, "control socket request failed");
      if (!res.headersSent) answer(res, 500, { error: "The running server could not answer." });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path: socket, readableAll: false, writableAll: false }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  chmodSync(socket, 0o600);

  // the control file appears whole, readable by the owner only
  const file = controlFilePath(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, JSON.stringify({ pid: process.pid, socket, token }), { mode: 0o600, flag: "wx" });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);

  let removed = false;
  const removeFiles = () => {
    if (removed) return;
    removed = true;
    rmSync(file, { force: true });
    rmSync(socket, { force: true });
    if (privateDir) rmSync(privateDir, { recursive: true, force: true });
    process.removeListener("exit", removeFiles);
  };
  // a forced exit (the shutdown deadline of main.ts) leaves no control file behind either
  process.once("exit", removeFiles);
  return {
    socket,
    async close() {
      removeFiles();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
