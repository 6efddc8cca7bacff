// Recognising "the database cannot be reached, or stalled" and "the database refused this text" in
// whatever shape Prisma, its driver adapter, pg or PGlite throws it.
import { GateWaitTimeout } from "../lib/key-gate.js";

/** Prisma error codes and driver-adapter error kinds that mean "the database cannot be reached". */
const DB_DOWN_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const DB_DOWN_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TlsConnectionError"]);
/**
 * SQLSTATEs of a database that is going away or too slow: statement timeout (57014), shutdown or
 * crash (57P01–57P03), too many connections (53300), and every connection exception (08…).
 */
const DB_DOWN_SQLSTATES = new Set(["57014", "57P01", "57P02", "57P03", "53300"]);
/** What pg and pg-pool say when a connection stalls or dies (they carry no code). */
const DB_DOWN_MESSAGES =
  /Query read timeout|timeout exceeded when trying to connect|Connection terminated|connection timeout|ECONNREFUSED|ECONNRESET|Client has encountered a connection error|Transaction API error: Unable to start a transaction in the given time/i;

type Walkable = {
  code?: unknown;
  message?: unknown;
  kind?: unknown;
  originalCode?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } };
  cause?: unknown;
  originalError?: unknown;
};

function* chain(err: unknown): Generator<Walkable> {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 6; depth++) {
    const w = e as Walkable;
    yield w;
    const adapterCause = w.meta?.driverAdapterError?.cause;
    if (adapterCause) yield adapterCause as Walkable;
    e = w.cause ?? w.originalError;
  }
}

const sqlstateOf = (w: Walkable): string | undefined =>
  typeof w.originalCode === "string" ? w.originalCode : typeof w.code === "string" && /^[0-9A-Z]{5}$/.test(w.code) ? w.code : undefined;

/** True when an error says the database is unreachable or stalled: answered 503 `unavailable`. */
export function isDependencyDown(err: unknown): boolean {
  // writes queued in this process behind statements stalled on the same row (src/lib/key-gate.ts)
  if (err instanceof GateWaitTimeout) return true;
  for (const w of chain(err)) {
    if (typeof w.code === "string" && DB_DOWN_CODES.has(w.code)) return true;
    if (typeof w.kind === "string" && DB_DOWN_KINDS.has(w.kind)) return true;
    const state = sqlstateOf(w);
    if (state && (DB_DOWN_SQLSTATES.has(state) || state.startsWith("08"))) return true;
    if (typeof w.message === "string" && DB_DOWN_MESSAGES.test(w.message)) return true;
  }
  return false;
}

/** True when PostgreSQL refused a text value (a NUL byte, 22021, or an untranslatable character, 22P05). */
export function isBadTextError(err: unknown): boolean {
  for (const w of chain(err)) {
    const state = sqlstateOf(w);
    if (state === "22021" || state === "22P05") return true;
  }
  return false;
}

/**
 * True when a statement a replica refused is to be run again on the primary: the replica cannot be
 * reached or stalled (as above), refused a write (25006: a read route that writes), or cancelled
 * the statement for a conflict with its replay (40001).
 */
export function failsOverToPrimary(err: unknown): boolean {
  if (isDependencyDown(err)) return true;
  for (const w of chain(err)) {
    const state = sqlstateOf(w);
    if (state === "25006" || state === "40001") return true;
  }
  return false;
}
