// The CLI's side of an embedded server's control socket. In embedded mode one process holds the data
// folder (src/db/data-dir-lock.ts); a server holding it listens on a Unix socket and writes
// DATA_DIR/engagement.control (mode 0600: {pid, socket, token}). The CLI, finding the folder locked
// by a live server, sends its command there (authenticated by the token only the owner can read)
// instead of refusing; with no server it opens the folder itself.
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { z } from "zod";
import { DataDirInUseError, lockHolder } from "../db/data-dir-lock.js";
import { CliRefusal, type CliCommand, type CliResult } from "./commands.js";

export const controlFilePath = (dataDir: string) => join(dataDir, "engagement.control");

const ControlFileSchema = z.object({ pid: z.number().int().positive(), socket: z.string().min(1), token: z.string().min(32) });
export type ControlFile = z.infer<typeof ControlFileSchema>;

/** The control file of the data folder, or null when there is none (or it cannot be read). */
export function readControlFile(dataDir: string): ControlFile | null {
  try {
    const parsed = ControlFileSchema.safeParse(JSON.parse(readFileSync(controlFilePath(dataDir), "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Errors of a connection that never reached the server (nothing was done): worth another look. */
const NOT_CONNECTED = new Set(["ENOENT", "ECONNREFUSED", "ENOTSOCK"]);

class NotConnected extends Error {}

/** Sends one command; the server's refusal comes back as a CliRefusal with its message. */
export function sendCommand<C extends CliCommand>(control: ControlFile, cmd: C): Promise<CliResult<C>> {
  const body = JSON.stringify(cmd);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: control.socket,
        path: "/command",
        method: "POST",
        headers: {
          authorization: `Bearer ${control.token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("error", reject);
        res.on("end", () => {
          let answer: { result?: unknown; error?: unknown };
          try {
            answer = JSON.parse(text) as typeof answer;
          } catch {
            return reject(new Error(`The running server (process ${control.pid}) answered HTTP ${res.statusCode} without JSON`));
          }
          if (res.statusCode === 200) resolve(answer.result as CliResult<C>);
          else
            reject(new CliRefusal(typeof answer.error === "string" ? answer.error : `The running server answered HTTP ${res.statusCode}`));
        });
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => reject(err.code && NOT_CONNECTED.has(err.code) ? new NotConnected(err.message) : err));
    req.end(body);
  });
}

export interface RemoteOptions {
  /** how long to wait for a process holding the folder to offer its socket (a server starting) */
  waitMs: number;
  /** told once when waiting starts */
  onWait?: (pid: number) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `cmd` on the server holding `dataDir`, or returns `undefined` when no live process holds it
 * (the caller opens it itself). A holder without a control socket yet (a server still starting, or
 * another CLI command) is waited for; past `waitMs` the folder is in use.
 */
export async function runOnServer<C extends CliCommand>(
  dataDir: string,
  cmd: C,
  opts: RemoteOptions,
): Promise<{ result: CliResult<C> } | undefined> {
  const deadline = Date.now() + opts.waitMs;
  let told = false;
  for (;;) {
    const pid = lockHolder(dataDir);
    if (pid === null) return undefined;
    const control = readControlFile(dataDir);
    if (control && control.pid === pid) {
      try {
        return { result: await sendCommand(control, cmd) };
      } catch (err) {
        if (!(err instanceof NotConnected)) throw err; // sent: never twice
      }
    }
    if (Date.now() >= deadline) throw new DataDirInUseError(dataDir, pid);
    if (!told) opts.onWait?.(pid);
    told = true;
    await sleep(200);
  }
}
