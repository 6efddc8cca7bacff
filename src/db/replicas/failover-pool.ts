// A replica's pool whose statements fall back to the primary: a read a replica cannot answer (it is
// down, stalled or restarting), refuses (a write: 25006) or cancels (a conflict with its replay:
// 40001) runs again on the primary, so a replica dying costs a request time, never a 5xx
// (contract section 26). Reads only come here, so running one again is safe. A transaction
// (Prisma's interactive ones) falls back when its connection cannot be had; a statement failing
// inside one is the transaction's to fail. A pg.Pool itself, as adapter-pg takes only a pg.Pool.
import pg from "pg";
import { failsOverToPrimary, isDependencyDown } from "../failures.js";

type Reason = "unreachable" | "refused";

export function failoverPool(config: pg.PoolConfig, primary: pg.Pool, onFallback: (reason: Reason, err: unknown) => void): pg.Pool {
  const reasonOf = (err: unknown): Reason | null => (isDependencyDown(err) ? "unreachable" : failsOverToPrimary(err) ? "refused" : null);

  class FailoverPool extends pg.Pool {
    // the promise forms pg's users here call: query(config) / query(text, values), connect()
    override query(...args: unknown[]): never {
      if (typeof args[args.length - 1] === "function") return (super.query as (...a: unknown[]) => never)(...args);
      const first = (super.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
      return first.catch((err: unknown) => {
        const reason = reasonOf(err);
        if (!reason) throw err;
        onFallback(reason, err);
        return (primary.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
      }) as never;
    }

    override connect(...args: unknown[]): never {
      if (typeof args[0] === "function") return (super.connect as (...a: unknown[]) => never)(...args);
      return super.connect().catch((err: unknown) => {
        if (!isDependencyDown(err)) throw err;
        onFallback("unreachable", err);
        return primary.connect();
      }) as never;
    }
  }
  return new FailoverPool(config);
}
