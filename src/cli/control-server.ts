// The embedded server's control socket (see src/cli/control.ts): a Unix socket in DATA_DIR (or in a
// private temporary folder when that path is too long for a socket), mode 0600, and the control file
// DATA_DIR/engagement.control (mode 0600) naming it with a random token. POST /command with
// `Authorization: Bearer <token>` runs a CLI command (src/cli/commands.ts) with this server's
// services and answers {result} or {error}; anything else is refused.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { AppServices } from "../context/services.js";
import { CliCommandSchema, CliRefusal, runCommand } from "./commands.js";
import { controlFilePath } from "./control.js";

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
    if (req.method !== "POST" || req.url !== "/command") return answer(res, 404, { error: "POST /command only." });
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
