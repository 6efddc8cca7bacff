// Recognising "the database cannot be reached" in whatever shape Prisma or its driver adapter throws it.
/** Prisma error codes and driver-adapter error kinds that mean "the database cannot be reached". */
const DB_DOWN_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const DB_DOWN_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TlsConnectionError"]);

/** True when an error says a dependency (the database) is unreachable: answered 503 `unavailable`. */
export function isDependencyDown(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const { code, meta, cause } = e as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown } } }; cause?: unknown };
    if (typeof code === "string" && DB_DOWN_CODES.has(code)) return true;
    const kind = meta?.driverAdapterError?.cause?.kind;
    if (typeof kind === "string" && DB_DOWN_KINDS.has(kind)) return true;
    e = cause ?? (e as { originalError?: unknown }).originalError;
  }
  return false;
}
