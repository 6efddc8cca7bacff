// DATABASE_URL may name a database that does not exist yet (a fresh PostgreSQL): it is created at
// start-up (server and CLI) through the `postgres` maintenance database of the same server, when the
// role may create databases; otherwise one line says how to create it. Any other failure to connect
// is one line too (where, and what the driver said), never a stack trace. Behind a transaction-mode
// pooler this runs on DATABASE_DIRECT_URL (the database itself), and the pooler is probed apart.
import pg from "pg";
import { StartupError } from "../lib/startup-error.js";

/** `postgresql://user@host:port/name` without the password or query, for messages. */
export function describeDatabaseUrl(url: URL): string {
  const user = url.username ? `${decodeURIComponent(url.username)}@` : "";
  return `postgresql://${user}${url.host}${url.pathname}`;
}

const sqlstate = (err: unknown): string | undefined =>
  err && typeof err === "object" && typeof (err as { code?: unknown }).code === "string" ? (err as { code: string }).code : undefined;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Shell-quotes a word when it needs it (a database or role name in a suggested command). */
const shellWord = (s: string) => (/^[A-Za-z0-9_.@:/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * Connects once to `databaseUrl` (the value of `setting`, named in messages); when PostgreSQL answers
 * that the database does not exist (3D000), creates it. Returns whether it was created.
 */
export async function ensureDatabase(databaseUrl: string, timeoutMs: number, setting = "DATABASE_URL"): Promise<"exists" | "created"> {
  const url = new URL(databaseUrl);
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs });
  try {
    await probe.connect();
    return "exists";
  } catch (err) {
    if (sqlstate(err) !== "3D000") {
      throw new StartupError(`Cannot connect to the database of ${setting} (${describeDatabaseUrl(url)}): ${messageOf(err)}`);
    }
  } finally {
    await probe.end().catch(() => undefined);
  }

  // what pg connected as and to: the URL's user and database (the database defaults to the user)
  const params = probe as unknown as { user?: string; database?: string; host?: string; port?: number };
  const role = params.user ?? (decodeURIComponent(url.username) || "postgres");
  const name = params.database ?? decodeURIComponent(url.pathname.slice(1));
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: timeoutMs });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
    return "created";
  } catch (err) {
    if (sqlstate(err) === "42P04") return "exists"; // created meanwhile (another instance starting)
    const host = params.host && !params.host.startsWith("/") ? params.host : url.hostname || "localhost";
    const port = params.port ?? (Number(url.port) || 5432);
    throw new StartupError(
      `The database "${name}" of ${setting} does not exist on ${host}:${port}, and role "${role}" could not create it ` +
        `(${messageOf(err)}): create it, e.g. \`createdb -h ${shellWord(host)} -p ${port} -U postgres ${shellWord(name)}\`, ` +
        `or let the role create databases (ALTER ROLE ${admin.escapeIdentifier(role)} CREATEDB), then start again.`,
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Connects once to `databaseUrl` (a pooler's, which creates nothing); a failure is one line naming `setting`. */
export async function probeDatabase(databaseUrl: string, timeoutMs: number, setting: string): Promise<void> {
  const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs });
  try {
    await probe.connect();
  } catch (err) {
    throw new StartupError(
      `Cannot connect to the database of ${setting} (${describeDatabaseUrl(new URL(databaseUrl))}): ${messageOf(err)}`,
    );
  } finally {
    await probe.end().catch(() => undefined);
  }
}
