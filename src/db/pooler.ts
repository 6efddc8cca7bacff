// The pg client used behind a transaction-mode pooler (DATABASE_POOLER=transaction: PgBouncer, RDS
// Proxy, Supavisor). There each transaction of one connection may run in another server session and
// the pooler refuses startup parameters it does not know, so nothing relies on a session: no named
// prepared statements (a statement's name is dropped: it is parsed each time, unnamed), nothing set
// at connect, and the server's statement timeout is set per transaction, in the round trip of the
// statement it limits (one extended-protocol batch, one Sync):
// - a statement outside a transaction is sent after `SELECT set_config('statement_timeout', '<ms>',
//   true)`: both run in the batch's implicit transaction, so the setting ends with the statement
//   (set_config rather than SET LOCAL, which outside a BEGIN warns on every statement);
// - `BEGIN` is sent followed by `SET LOCAL statement_timeout = <ms>`: the whole transaction has it
//   (SET takes no snapshot, so SET TRANSACTION ISOLATION LEVEL may still follow);
// - a statement inside a transaction, COMMIT, ROLLBACK and savepoints are sent as they are.
// The planner's random_page_cost (DATABASE_RANDOM_PAGE_COST, unless `server`) goes the same way: a
// second set_config in the same SELECT, or a second SET LOCAL after BEGIN.
// The extra statement costs the server a parse and an execute of its own, never a round trip.
// Client-side limits (query_timeout, connectionTimeoutMillis) stay: a stalled pooler fails the
// request within DATABASE_TIMEOUT_MS. Relies on pg's Query and Connection as pg-cursor does.
import pg from "pg";

/** What this relies on of pg's Query (pg/lib/query.js): the Submittable contract and its message handlers. */
interface WireQuery {
  text?: string;
  queryMode?: string;
  callback?: ((err: Error | null, result?: unknown) => void) | undefined;
  submit(connection: pg.Connection): Error | null;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: pg.Connection): void;
  handleEmptyQuery(connection: pg.Connection): void;
}
const WireQueryBase = pg.Query as unknown as new (config: object, values?: unknown, callback?: unknown) => WireQuery;

const TRANSACTION_START = /^\s*(BEGIN|START\s+TRANSACTION)\b/i;
const TRANSACTION_CONTROL = /^\s*(COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PREPARE\s+TRANSACTION)\b/i;

/** Parse, bind and execute a statement without parameters, unnamed, as part of the batch being written. */
function sendExtra(connection: pg.Connection, text: string): void {
  connection.parse({ text, name: "", types: [] }, true);
  connection.bind({ portal: "", statement: "", values: [] }, true);
  connection.execute({ portal: "" }, true);
}

/** What each transaction is given through the pooler: its statement timeout and, unless the server's own, the planner's random_page_cost. */
export interface PoolerSettings {
  timeoutMs: number;
  randomPageCost?: number | undefined;
}

/** The statements that give a transaction its settings: before a lone statement, and after BEGIN. */
export interface Framing {
  /** one SELECT of set_config(…, true) per setting: they end with the statement's implicit transaction */
  statement: string;
  /** one SET LOCAL per setting (SET takes no snapshot: SET TRANSACTION ISOLATION LEVEL may still follow) */
  begin: string[];
}

/** The framing of a pool's settings, written once (each setting a name and a value, in both forms). */
export function framingFor(settings: PoolerSettings): Framing {
  const named: [string, string][] = [["statement_timeout", String(Math.max(1, Math.round(settings.timeoutMs)))]];
  if (settings.randomPageCost !== undefined) named.push(["random_page_cost", String(settings.randomPageCost)]);
  return {
    statement: `SELECT ${named.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(", ")}`,
    begin: named.map(([name, value]) => `SET LOCAL ${name} = ${value}`),
  };
}

/** The statements a query is sent with: before it and after it, in its batch. */
export function timeoutStatements(
  text: string | undefined,
  inTransaction: boolean,
  framing: Framing,
): { before: string[]; after: string[] } {
  if (inTransaction || typeof text !== "string" || TRANSACTION_CONTROL.test(text)) return { before: [], after: [] };
  if (TRANSACTION_START.test(text)) return { before: [], after: framing.begin };
  return { before: [framing.statement], after: [] };
}

/** A query sent with its timeout statements in one batch; their answers are skipped, the query's own are its result. */
class TimedQuery extends WireQueryBase {
  /** answers of statements before the query's own still to come */
  private pendingBefore = 0;
  private framed = false;
  private ownDone = false;

  constructor(
    config: object,
    values: unknown,
    callback: unknown,
    private readonly framing: Framing,
    private readonly inTransaction: () => boolean,
  ) {
    super(config, values, callback);
  }

  override submit(connection: pg.Connection): Error | null {
    // decided now, not when queued: the previous query's ReadyForQuery said where the session is
    const { before, after } = timeoutStatements(this.text, this.inTransaction(), this.framing);
    if (!before.length && !after.length) return super.submit(connection);
    this.framed = true;
    this.pendingBefore = before.length;
    this.queryMode = "extended"; // the statements and the query under one Sync, whatever the query's values
    const wire = connection as pg.Connection & { sync(): void };
    const sync = wire.sync;
    wire.stream.cork?.();
    try {
      for (const text of before) sendExtra(connection, text);
      // pg's Query ends its batch with sync(): what follows the query goes just before it
      wire.sync = () => {
        for (const text of after) sendExtra(connection, text);
        sync.call(wire);
      };
      return super.submit(connection);
    } finally {
      Reflect.deleteProperty(wire, "sync");
      wire.stream.uncork?.();
    }
  }

  override handleDataRow(msg: unknown): void {
    if (this.framed && (this.pendingBefore > 0 || this.ownDone)) return;
    super.handleDataRow(msg);
  }

  override handleCommandComplete(msg: unknown, connection: pg.Connection): void {
    if (this.framed) {
      if (this.pendingBefore > 0) {
        this.pendingBefore--;
        return;
      }
      if (this.ownDone) return;
      this.ownDone = true;
    }
    super.handleCommandComplete(msg, connection);
  }

  override handleEmptyQuery(connection: pg.Connection): void {
    this.ownDone = true;
    super.handleEmptyQuery(connection);
  }
}

type AnyQuery = (query: unknown, values?: unknown, callback?: unknown) => unknown;

type Release = (err?: Error | boolean) => void;

/**
 * The pg Client class of a pool behind a transaction-mode pooler: every query unnamed, sent with the
 * statement timeout of its transaction (see the top of this file). Queries given as Submittables
 * (cursors, streams) are sent as they are. A connection given back to the pool inside a transaction
 * or with a query still in flight — a COMMIT or ROLLBACK that timed out on the client side and never
 * ran — is closed instead of reused (pg-pool destroys a client released with an error): it holds
 * one of the pooler's server sessions, and the next borrower's statements would run in its
 * transaction. Closing it ends the transaction.
 */
export function poolerClient(settings: PoolerSettings): typeof pg.Client {
  const framing = framingFor(settings);
  return class PoolerClient extends pg.Client {
    /** pg-pool's release, set on this client at each checkout */
    private giveBack: Release | undefined;
    private readonly inTransaction = () => {
      const status = this.getTransactionStatus();
      return status === "T" || status === "E";
    };

    get release(): Release {
      return (err) => {
        const busy = this.inTransaction() || (this as unknown as { readyForQuery: boolean }).readyForQuery === false;
        this.giveBack?.(err || (busy ? new Error("released inside a transaction or with a query in flight: closed") : undefined));
      };
    }

    set release(fn: Release) {
      this.giveBack = fn;
    }

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const send = this.query.bind(this) as unknown as AnyQuery;
      const inTransaction = this.inTransaction;
      const query: AnyQuery = (config, values, callback) => {
        if (!config || (typeof config !== "string" && (typeof config !== "object" || "submit" in config))) {
          return send(config, values, callback);
        }
        // a named statement would live in one server session: parsed again by the next transaction's, or missing there
        const { name: _name, ...unnamed } = typeof config === "string" ? { text: config, name: undefined } : (config as { name?: string });
        const q = new TimedQuery(unnamed, values, callback, framing, inTransaction);
        if (q.callback) return void send(q);
        return new Promise((resolve, reject) => {
          q.callback = (err, result) => (err ? reject(err) : resolve(result));
          send(q);
        });
      };
      this.query = query as unknown as pg.Client["query"];
    }
  };
}
